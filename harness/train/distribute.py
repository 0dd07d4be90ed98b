"""Training on several devices with ``tf.distribute``, the batch split across replicas.

The trainer steps one global batch at a time (``train_on_batch``) so that a
resumed run repeats no batch. Keras' ``*_on_batch`` methods do not split their
batch under a distribution strategy: every replica would get the whole batch
(four rows in, eight rows out of ``predict_on_batch`` on two replicas). With
more than one replica the batch therefore goes through a one-element
distributed dataset, which ``tf.distribute`` splits along the batch axis; on a
single device nothing changes.

Strategies:

- ``none``: the default strategy (one device; the CPU path).
- ``mirrored``: ``MirroredStrategy`` over every visible GPU (over the logical
  CPUs when there is no GPU, which is how the tests exercise it).
- ``multi-worker``: ``MultiWorkerMirroredStrategy``, configured by the
  ``TF_CONFIG`` environment variable of each worker (see docs/cluster.md).
- ``auto``: ``mirrored`` when two or more GPUs are visible, else ``none``.

``tf.distribute`` is TensorFlow's: on the JAX and PyTorch backends every
strategy is ``none`` (one device), and asking for another says so in one line.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping

import numpy as np

STRATEGIES = ("auto", "none", "mirrored", "multi-worker")


class OneDevice:
    """The strategy of the JAX and PyTorch backends: one device, no scope to enter."""

    num_replicas_in_sync = 1

    def scope(self):
        return contextlib.nullcontext()


def make_strategy(kind: str = "auto"):
    """The ``tf.distribute`` strategy named ``kind`` (see the module docstring)."""
    import keras

    if kind not in STRATEGIES:
        raise ValueError(f"unknown strategy {kind!r} (choose from {', '.join(STRATEGIES)})")
    backend = keras.backend.backend()
    if backend != "tensorflow":
        if kind not in ("auto", "none"):
            print(f"strategy {kind}: tf.distribute needs the TensorFlow backend; on {backend} "
                  "the run trains on one device", file=sys.stderr)
        return OneDevice()
    import tensorflow as tf

    if kind == "auto":
        kind = "mirrored" if len(tf.config.list_logical_devices("GPU")) > 1 else "none"
    if kind == "none":
        return tf.distribute.get_strategy()
    if kind == "multi-worker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    devices = tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("CPU")
    return tf.distribute.MirroredStrategy([d.name for d in devices])


def replicas(model) -> int:
    """Replicas the model's variables are mirrored on (1 without a strategy)."""
    strategy = getattr(model, "distribute_strategy", None)
    return int(strategy.num_replicas_in_sync) if strategy is not None else 1


def optimizer_step(model) -> int:
    """The optimizer's iteration count; ``int()`` fails on a mirrored variable."""
    return int(np.asarray(model.optimizer.iterations.numpy()))


def train_batch(model, x, targets, weights) -> dict[str, float]:
    """One optimizer step on one global batch; per-batch logs as ``train_on_batch``."""
    if replicas(model) == 1:
        return model.train_on_batch(x, targets, sample_weight=weights, return_dict=True)
    # As train_on_batch does: build the loss and metric trackers outside the
    # replicas first (created inside the first distributed step they fail).
    model._maybe_symbolic_build(data_batch=(x, targets, weights))
    model.make_train_function()
    model.reset_metrics()
    logs = model.train_function(_distributed(model, (x, targets, weights)))
    return {name: float(np.asarray(value)) for name, value in logs.items()}


def predict_batch(model, x) -> Mapping[str, np.ndarray]:
    """The model's outputs on one batch, one row per input row."""
    if replicas(model) == 1:
        outputs = model.predict_on_batch(x)
        if not isinstance(outputs, Mapping):
            outputs = dict(zip(model.output_names, outputs, strict=True))
        return outputs
    model.make_predict_function()
    outputs = model.predict_function([next(_distributed(model, (x,)))])
    return {name: np.asarray(value) for name, value in outputs.items()}


def _distributed(model, batch):
    import tensorflow as tf

    rows = len(batch[0])
    dataset = tf.data.Dataset.from_tensor_slices(batch).batch(rows)
    return iter(model.distribute_strategy.experimental_distribute_dataset(dataset))
