"""Metrics of a model over a split, for training-time validation and ``harness evaluate``."""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np

from harness.train.distribute import predict_batch
from harness.train.metrics import MetricAccumulator
from harness.train.sources import BatchSource, to_head_targets

VALIDATION_SEED = 0  # validation order is fixed; symmetries off


def model_value_loss(model) -> str:
    """The value convention a model was built for: ``mse`` (tanh) or ``bce`` (sigmoid)."""
    recorded = getattr(model, "value_loss", None)
    if recorded in ("mse", "bce"):
        return recorded
    from harness.nets import value_loss_of

    return value_loss_of(model)


def evaluate_model(model, source: BatchSource, *, value_loss: str,
                   loss_weights: Mapping[str, float], batch_size: int = 256,
                   max_samples: int = 0, progress: bool = False) -> dict[str, float]:
    """Weighted means of :data:`harness.train.metrics.METRIC_NAMES` over the split."""
    acc = MetricAccumulator(value_loss, loss_weights)
    batches = source.batches(batch_size, seed=VALIDATION_SEED, augment=False)
    total = len(source) if not max_samples else min(max_samples, len(source))
    if max_samples:
        batches = itertools.islice(batches, -(-max_samples // batch_size))
    bar = _bar(total, "evaluate", progress)
    for batch in batches:
        x, targets, weights = to_head_targets(batch, value_loss)
        outputs = predict_batch(model, x)
        acc.add({k: np.asarray(v) for k, v in outputs.items()}, targets, weights)
        bar.update(len(x))
    bar.close()
    return acc.result()


def _bar(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="pos", unit_scale=True, disable=not enabled,
                leave=False, dynamic_ncols=True)
