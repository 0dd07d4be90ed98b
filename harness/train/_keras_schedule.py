"""The Keras side of :mod:`harness.train.schedules` (graph-friendly ops)."""

from __future__ import annotations

import math

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="harness")
class HarnessSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """Saved inside every checkpoint's optimizer, so resume needs no config."""

    def __init__(self, kind, initial, final=0.0, total_steps=1, step_every=1,
                 step_factor=0.1, period=1, warmup=0, cooldown=0):
        self.kind = kind
        self.initial = float(initial)
        self.final = float(final)
        self.total_steps = int(total_steps)
        self.step_every = int(step_every)
        self.step_factor = float(step_factor)
        self.period = int(period)
        self.warmup = int(warmup)
        self.cooldown = int(cooldown)

    def __call__(self, step):
        rate = self._scheduled(step)
        if self.warmup <= 0:
            return rate
        s = ops.cast(step, "float32")
        return rate * ops.minimum(1.0, (ops.maximum(s, 0.0) + 1.0) / float(self.warmup))

    def _scheduled(self, step):
        t = float(max(self.total_steps, 1))
        i = ops.clip(ops.cast(step, "float32"), 0.0, t)
        if self.kind == "constant":
            return ops.cast(self.initial, "float32") + 0.0 * i
        if self.kind == "step":
            k = ops.floor(i / float(max(self.step_every, 1)))
            return self.initial * ops.power(ops.cast(self.step_factor, "float32"), k)
        if self.kind == "wsd":
            start = t - float(max(self.cooldown, 0))
            into = ops.maximum(i - start, 0.0) / float(max(self.cooldown, 1))
            return self.initial + (self.final - self.initial) * into
        envelope = self.final + 0.5 * (self.initial - self.final) * (1.0 + ops.cos(math.pi * i / t))
        if self.kind == "cosine":
            return envelope
        wave = ops.square(ops.sin(math.pi * i / float(max(self.period, 1))))
        return envelope * (1.0 + (1.0 - i / t) * wave)

    def get_config(self):
        return {
            "kind": self.kind, "initial": self.initial, "final": self.final,
            "total_steps": self.total_steps, "step_every": self.step_every,
            "step_factor": self.step_factor, "period": self.period, "warmup": self.warmup,
            "cooldown": self.cooldown,
        }
