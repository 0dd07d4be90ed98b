"""Validation metrics, computed in numpy from model outputs and targets.

One accumulator serves training-time validation and ``harness evaluate`` so
the two can never disagree. Policy targets may be move indices (games) or
probability vectors (search visit counts); value MSE is always reported in the
signed [-1, 1] convention whatever the value head, so runs compare.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from harness.train.value_targets import from_head

METRIC_NAMES = (
    "loss", "policy_loss", "value_loss", "policy_top1", "policy_top5", "value_mse",
)
# Metrics reported with a 95% interval (a bootstrap over games): the ones a
# comparison between architectures is made on.
INTERVAL_METRICS = ("policy_top1", "policy_top5", "value_mse")


@dataclass(frozen=True)
class MetricInfo:
    """How an interval metric is named and read in tables and sentences."""

    label: str  # table header
    name: str  # in sentences
    percent: bool  # a fraction shown in percent; its differences in points
    higher_is_better: bool


METRIC_INFO = {
    "policy_top1": MetricInfo("top-1", "top-1 accuracy", True, True),
    "policy_top5": MetricInfo("top-5", "top-5 accuracy", True, True),
    "value_mse": MetricInfo("value MSE", "value MSE", False, False),
}
_EPS = 1e-7


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    logits = logits.astype(np.float64)
    shifted = logits - logits.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _head_weights(weights, head: str, n: int) -> np.ndarray:
    if weights is None:
        return np.ones(n)
    if isinstance(weights, Mapping):
        w = weights.get(head)
        return np.ones(n) if w is None else np.asarray(w, np.float64).reshape(n)
    return np.asarray(weights, np.float64).reshape(n)


class MetricAccumulator:
    """Weighted sums over batches; :meth:`result` gives the means."""

    def __init__(self, value_loss: str, loss_weights: Mapping[str, float],
                 keep_positions: bool = False):
        self.value_loss = value_loss
        self.loss_weights = dict(loss_weights)
        self.sums: dict[str, float] = {}
        self.counts: dict[str, float] = {}
        # Per-position values of INTERVAL_METRICS, for intervals and paired tests.
        self.keep_positions = keep_positions
        self._kept: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}

    def _add(self, name: str, values: np.ndarray, weights: np.ndarray) -> None:
        self.sums[name] = self.sums.get(name, 0.0) + float((values * weights).sum())
        self.counts[name] = self.counts.get(name, 0.0) + float(weights.sum())
        if self.keep_positions and name in INTERVAL_METRICS:
            kept = self._kept.setdefault(name, ([], []))
            kept[0].append(np.asarray(values, np.float64))
            kept[1].append(np.asarray(weights, np.float64))

    def per_position(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``{metric: (values, weights)}`` in the order positions were added."""
        return {name: (np.concatenate(v), np.concatenate(w))
                for name, (v, w) in self._kept.items()}

    def add(self, outputs: Mapping[str, np.ndarray], targets: Mapping[str, np.ndarray],
            weights=None) -> None:
        logits = np.asarray(outputs["policy"])
        n = logits.shape[0]
        if "policy" in targets:
            self._add_policy(logits, np.asarray(targets["policy"]),
                             _head_weights(weights, "policy", n))
        if "value" in targets:
            self._add_value(np.asarray(outputs["value"]).reshape(n),
                            np.asarray(targets["value"], np.float64).reshape(n),
                            _head_weights(weights, "value", n))
        for head in ("ownership", "score"):
            if head in targets and head in outputs:
                err = (np.asarray(outputs[head], np.float64).reshape(n, -1)
                       - np.asarray(targets[head], np.float64).reshape(n, -1)) ** 2
                self._add(f"{head}_loss", err.mean(axis=1), _head_weights(weights, head, n))

    def _add_policy(self, logits: np.ndarray, target: np.ndarray, w: np.ndarray) -> None:
        logp = _log_softmax(logits)
        if target.ndim == 2:  # soft target: cross-entropy against the distribution
            ce = -(target * logp).sum(axis=1)
            best = target.argmax(axis=1)
        else:
            best = target.reshape(-1).astype(np.int64)
            ce = -logp[np.arange(len(best)), best]
        # Rank = moves with a strictly higher logit, so ties count as hits (tf in_top_k).
        rank = (logits > logits[np.arange(len(best)), best][:, None]).sum(axis=1)
        self._add("policy_loss", ce, w)
        self._add("policy_top1", (rank < 1).astype(np.float64), w)
        self._add("policy_top5", (rank < 5).astype(np.float64), w)

    def _add_value(self, pred: np.ndarray, target: np.ndarray, w: np.ndarray) -> None:
        if self.value_loss == "bce":
            p = np.clip(pred.astype(np.float64), _EPS, 1 - _EPS)
            loss = -(target * np.log(p) + (1 - target) * np.log(1 - p))
        else:
            loss = (pred - target) ** 2
        signed_err = from_head(pred, self.value_loss) - from_head(target, self.value_loss)
        self._add("value_loss", loss, w)
        self._add("value_mse", signed_err.astype(np.float64) ** 2, w)

    def result(self) -> dict[str, float]:
        out = {k: self.sums[k] / self.counts[k] for k in self.sums if self.counts[k] > 0}
        out["loss"] = sum(
            self.loss_weights.get(k.removesuffix("_loss"), 0.0) * v
            for k, v in out.items() if k.endswith("_loss")
        )
        out["samples"] = self.counts.get("policy_top1", 0.0)
        return out
