"""Metrics of a model over a split, for training-time validation and ``harness evaluate``."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from harness.stats import GroupedMetric, bootstrap, group_sums
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


@dataclass(frozen=True)
class Evaluation:
    """Means over a split, and each interval metric per game (for intervals and pairing)."""

    means: dict[str, float]
    grouped: dict[str, GroupedMetric]

    def with_intervals(self, reps: int = 2000, seed: int = 0) -> dict[str, float]:
        """The means plus ``<metric>_low`` / ``<metric>_high`` (95%, bootstrap over games)."""
        out = dict(self.means)
        for name, metric in self.grouped.items():
            estimate = bootstrap(metric, reps=reps, seed=seed)
            out[f"{name}_low"], out[f"{name}_high"] = estimate.low, estimate.high
        out["games"] = max((m.games for m in self.grouped.values()), default=0)
        return out


def evaluate_model(model, source: BatchSource, *, value_loss: str,
                   loss_weights: Mapping[str, float], batch_size: int = 256,
                   max_samples: int = 0, progress: bool = False) -> dict[str, float]:
    """Means of :data:`harness.train.metrics.METRIC_NAMES` over the split, with intervals."""
    return evaluate_split(model, source, value_loss=value_loss, loss_weights=loss_weights,
                          batch_size=batch_size, max_samples=max_samples,
                          progress=progress).with_intervals()


def evaluate_split(model, source: BatchSource, *, value_loss: str,
                   loss_weights: Mapping[str, float], batch_size: int = 256,
                   max_samples: int = 0, progress: bool = False) -> Evaluation:
    """One deterministic pass over the split, keeping per-position results by game."""
    acc = MetricAccumulator(value_loss, loss_weights, keep_positions=True)
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
    groups = _groups(source, batch_size)
    grouped = {}
    for name, (values, weights) in acc.per_position().items():
        g = None if groups is None else groups[: len(values)]
        grouped[name] = group_sums(values, weights, g)
    return Evaluation(acc.result(), grouped)


def _groups(source: BatchSource, batch_size: int) -> np.ndarray | None:
    """Game of each position; ``None`` (each position its own game) if the source cannot say."""
    groups = getattr(source, "groups", None)
    return None if groups is None else np.asarray(groups(batch_size))


def _bar(total: int, desc: str, enabled: bool):
    from harness.console import progress as tqdm

    return tqdm(total=total, desc=desc, unit="pos", unit_scale=True, disable=not enabled,
                leave=False, dynamic_ncols=True)
