"""Learning-rate schedules as pure functions of the optimizer step.

The schedule is a function of the optimizer's own iteration counter, never of
a Python-side epoch counter, so a resumed run (whose optimizer state is
restored from the checkpoint) continues on exactly the same curve as an
uninterrupted one.

Cyclical schedule (Mattisson thesis, section 3.1): a cosine envelope ``r(i)``
from the initial rate to the target rate over the whole run, times
``1 + (1 - i/T) sin^2(pi i / f)``, so the rate oscillates between ``r(i)`` and
up to ``2 r(i)`` with period ``f`` and the oscillation dies out at the end. The
envelope as printed in the thesis, ``g0 + (g0 - gT)/2 (1 + cos(pi i/T))``,
starts at ``2 g0 - gT`` and ends at ``g0``, which contradicts the text calling
``gT`` the target rate; we use ``gT + (g0 - gT)/2 (1 + cos(pi i/T))``, which
starts at ``g0`` and ends at ``gT`` as the text describes.

Warm-up, stable, decay (``wsd``; Hägele et al. 2024, "Scaling Laws and
Compute-Optimal Training Beyond Fixed Training Durations"): the initial rate
(after any warm-up) until the last ``cooldown`` steps, then a straight line to
the final rate. Its stable part does not depend on the run's length, so one
constant-rate run can be branched into cool-downs of several lengths.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SCHEDULES = ("constant", "step", "cosine", "cyclical", "wsd")


@dataclass(frozen=True)
class ScheduleSpec:
    """Everything a schedule needs, in optimizer steps."""

    kind: str
    initial: float
    final: float = 0.0
    total_steps: int = 1
    step_every: int = 1  # "step": decay interval
    step_factor: float = 0.1  # "step": multiplier per interval
    period: int = 1  # "cyclical": oscillation period f
    warmup: int = 0  # steps of linear warm-up from 0 (multiplies any schedule)
    cooldown: int = 0  # "wsd": the last steps, over which the rate falls linearly to final

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULES:
            choices = ", ".join(SCHEDULES)
            raise ValueError(f"unknown lr schedule {self.kind!r} (choose from {choices})")


def learning_rate(spec: ScheduleSpec, step: float) -> float:
    """The learning rate used for optimizer step ``step`` (0-based)."""
    warm = min(1.0, (max(float(step), 0.0) + 1.0) / spec.warmup) if spec.warmup > 0 else 1.0
    return warm * _scheduled(spec, step)


def learning_rate_at(spec: ScheduleSpec, fraction: float) -> float:
    """The learning rate once ``fraction`` of a budgeted run is spent."""
    return learning_rate(spec, fraction * spec.total_steps)


def _scheduled(spec: ScheduleSpec, step: float) -> float:
    i = min(max(float(step), 0.0), float(spec.total_steps))
    t = max(spec.total_steps, 1)
    if spec.kind == "constant":
        return spec.initial
    if spec.kind == "step":
        return spec.initial * spec.step_factor ** math.floor(i / max(spec.step_every, 1))
    if spec.kind == "wsd":
        start = t - spec.cooldown
        if i <= start or spec.cooldown <= 0:
            return spec.initial
        return spec.initial + (spec.final - spec.initial) * (i - start) / spec.cooldown
    envelope = spec.final + 0.5 * (spec.initial - spec.final) * (1.0 + math.cos(math.pi * i / t))
    if spec.kind == "cosine":
        return envelope
    wave = math.sin(math.pi * i / max(spec.period, 1)) ** 2
    return envelope * (1.0 + (1.0 - i / t) * wave)


def keras_schedule(spec: ScheduleSpec):
    """A serialisable Keras ``LearningRateSchedule`` computing :func:`learning_rate`.

    Imported lazily so that this module stays importable without TensorFlow.
    """
    from harness.train._keras_schedule import HarnessSchedule

    return HarnessSchedule(**spec.__dict__)
