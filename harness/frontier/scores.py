"""Every savepoint's checkpoint on the same held-out positions, as frontier points.

A checkpoint is scored by :func:`harness.train.checkpoint_eval.evaluate_checkpoint_split`
(what ``harness evaluate`` and ``harness compare`` run): the first
``val_samples`` positions of the held-out split in their fixed order, the
same for every network, each mean with its 95% interval from the bootstrap
over whole games. The compute of a point is the checkpoint's own record
(``ModelInfo.compute.train_flops``), not the savepoint asked for, so a run
that overshot by a batch is placed where it is. Scores are kept per
checkpoint in ``evaluations/RUN.json`` and reused while the checkpoint, the
dataset and the positions are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.config_io import ConfigError
from harness.files import atomic_json, read_json
from harness.frontier.config import FrontierConfig
from harness.frontier.plan import Savepoint
from harness.stats import FrontierPoint

# Evaluation batches: fixed (not the device's preferred size), so that a cap of
# positions picks the same positions on any machine.
EVAL_BATCH = 256
BOOTSTRAP_REPS = 2000


@dataclass(frozen=True)
class Scored:
    """A savepoint's checkpoint, the training FLOPs it recorded and its scores."""

    point: Savepoint
    checkpoint: Path
    train_flops: int
    games: int
    metrics: dict[str, tuple[float, float, float]]  # metric: (value, low, high)

    def frontier_points(self, metrics: tuple[str, ...]) -> list[FrontierPoint]:
        n = self.point.network
        return [FrontierPoint(n.family, n.model, n.params, float(self.train_flops), m,
                              *self.metrics[m]) for m in metrics]


def score_checkpoint(config: FrontierConfig, point: Savepoint, checkpoint: Path,
                     cache_dir: Path, *, progress: bool,
                     log: Callable[[str], None] = print) -> Scored:
    """``point``'s checkpoint scored on the held-out positions (from the cache when it holds
    this checkpoint's scores on these positions)."""
    from harness.nets.info import read_model_info

    info = read_model_info(checkpoint)
    if info is None or info.compute is None:
        raise ConfigError(f"{checkpoint}: its model info records no compute (a file from "
                          "before runs kept it); train the run again")
    key = _cache_key(config, checkpoint)
    path = cache_dir / f"{point.run}.json"
    cached = read_json(path)
    if isinstance(cached, dict) and cached.get("key") == key:
        metrics = {m: tuple(v) for m, v in cached["metrics"].items()}
        return Scored(point, checkpoint, info.compute.train_flops, cached["games"], metrics)
    log(f"{point.run}: evaluating {checkpoint.name} on {config.val_split!r}")
    metrics, games = _evaluate(config, checkpoint, progress)
    atomic_json(path, {"key": key, "games": games,
                       "metrics": {m: list(v) for m, v in metrics.items()}})
    return Scored(point, checkpoint, info.compute.train_flops, games, metrics)


def _evaluate(config: FrontierConfig, checkpoint: Path,
              progress: bool) -> tuple[dict[str, tuple[float, float, float]], int]:
    from harness.train.checkpoint_eval import evaluate_checkpoint_split
    from harness.train.metrics import INTERVAL_METRICS

    evaluation, _ = evaluate_checkpoint_split(
        checkpoint, config.data, config.val_split, encoder=config.encoder,
        batch_size=eval_batch(config), max_samples=config.val_samples, progress=progress)
    values = evaluation.with_intervals(reps=BOOTSTRAP_REPS, seed=0)
    metrics = {m: (float(values[m]), float(values[f"{m}_low"]), float(values[f"{m}_high"]))
               for m in INTERVAL_METRICS if m in values}
    return metrics, int(values["games"])


def eval_batch(config: FrontierConfig) -> int:
    """Batches of :data:`EVAL_BATCH`, or the cap itself when smaller: a cap
    is kept exactly up to one batch, then rounded up to whole batches."""
    return min(EVAL_BATCH, config.val_samples) if config.val_samples else EVAL_BATCH


def _cache_key(config: FrontierConfig, checkpoint: Path) -> dict[str, Any]:
    """What the scores depend on: the checkpoint file, the dataset file, the
    split, the cap and the batch that the cap is rounded to."""
    data = Path(config.data)
    c, d = checkpoint.stat(), data.stat()
    return {"checkpoint": checkpoint.name, "checkpoint_size": c.st_size,
            "checkpoint_mtime_ns": c.st_mtime_ns, "data": str(data), "data_size": d.st_size,
            "data_mtime_ns": d.st_mtime_ns, "split": config.val_split,
            "encoder": config.encoder, "val_samples": config.val_samples,
            "batch": eval_batch(config), "reps": BOOTSTRAP_REPS}
