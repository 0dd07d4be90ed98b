"""Several models on the same positions: estimates, paired differences, a trivial baseline.

Two accuracies measured on the same positions are not independent: a
position that is hard for one network is hard for the other. Comparing their
separate intervals wastes that; the paired bootstrap here resamples the same
games for both and gives the interval of the difference itself. With many
models, many pairs are tested at once, so p-values are Holm-corrected within
each metric and a pair is called different only below ``alpha`` after it.

The baseline every table carries is the most frequent move at each move
number in the training split (top-5: its five most frequent), and a constant
value prediction (the training split's mean outcome): a network that does not
beat it has learned nothing about the board.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.stats import Estimate, GroupedMetric, bootstrap, group_sums, holm, paired_difference
from harness.train.metrics import INTERVAL_METRICS, METRIC_INFO

BASELINE = "baseline: frequent move"
ALPHA = 0.05


@dataclass(frozen=True)
class ModelResult:
    name: str
    grouped: dict[str, GroupedMetric]

    def estimate(self, metric: str, reps: int, seed: int) -> Estimate:
        return bootstrap(self.grouped[metric], reps=reps, seed=seed)


@dataclass(frozen=True)
class PairResult:
    a: str
    b: str
    metric: str
    difference: Estimate  # a - b
    p_value: float
    p_holm: float

    @property
    def significant(self) -> bool:
        return self.p_holm < ALPHA

    @property
    def better(self) -> str | None:
        """The better of the two if the difference is significant."""
        if not self.significant:
            return None
        a_higher = self.difference.value > 0
        return self.a if a_higher == METRIC_INFO[self.metric].higher_is_better else self.b


def compare(results: Sequence[ModelResult], *, metrics: Sequence[str] = INTERVAL_METRICS,
            reps: int = 2000, seed: int = 0) -> list[PairResult]:
    """Every pair on every metric, Holm-corrected within a metric."""
    pairs: list[PairResult] = []
    for metric in metrics:
        have = [r for r in results if metric in r.grouped]
        raw = []
        for a, b in itertools.combinations(have, 2):
            d = paired_difference(a.grouped[metric], b.grouped[metric], reps=reps, seed=seed)
            raw.append((a.name, b.name, d))
        adjusted = holm([d.p_value for _, _, d in raw]) if raw else []
        pairs += [PairResult(a, b, metric, d.estimate, d.p_value, p)
                  for (a, b, d), p in zip(raw, adjusted, strict=True)]
    return pairs


def frequent_move_baseline(dataset_path: str | Path, split: str, rows: np.ndarray,
                           groups: np.ndarray | None, train_split: str = "train") -> ModelResult:
    """The trivial predictor's results on exactly the positions ``rows`` (delivery order)."""
    from harness.data.dataset import PositionDataset

    with PositionDataset(dataset_path) as data:
        train_rows = data.split_rows(train_split)
        columns = ("move", "move_number", "value", "value_known")
        train = {c: data.file[f"positions/{c}"][:][train_rows] for c in columns}
        val = {c: data.file[f"positions/{c}"][:][rows] for c in columns}
    points = int(max(train["move"].max(initial=0), val["move"].max(initial=0))) + 1
    top = _top_moves_by_number(train["move"], train["move_number"], points, k=5)
    number = np.minimum(val["move_number"].astype(np.int64), len(top) - 1)
    ranked = top[number]  # (n, 5), -1 where fewer moves were seen
    move = val["move"].astype(np.int64)[:, None]
    known_train = train["value_known"] > 0
    constant = float(train["value"][known_train].mean()) if known_train.any() else 0.0
    known = val["value_known"].astype(np.float64)
    per_position = {
        "policy_top1": ((ranked[:, :1] == move).any(axis=1).astype(np.float64), None),
        "policy_top5": ((ranked == move).any(axis=1).astype(np.float64), None),
        "value_mse": ((val["value"].astype(np.float64) - constant) ** 2, known),
    }
    grouped = {name: group_sums(v, w, groups) for name, (v, w) in per_position.items()}
    return ModelResult(BASELINE, grouped)


def _top_moves_by_number(moves: np.ndarray, numbers: np.ndarray, points: int,
                         k: int) -> np.ndarray:
    """(max move number + 1, k): the k most frequent moves at each move number."""
    numbers = numbers.astype(np.int64)
    counts = np.zeros((int(numbers.max(initial=0)) + 1, points), np.int64)
    np.add.at(counts, (numbers, moves.astype(np.int64)), 1)
    order = np.argsort(-counts, axis=1, kind="stable")[:, :k]
    seen = np.take_along_axis(counts, order, axis=1) > 0
    return np.where(seen, order, -1)


# --- tables ---------------------------------------------------------------------------
ESTIMATE_HEADER = ["model", "games", "top-1 % [95% CI]", "top-5 % [95% CI]",
                   "value MSE [95% CI]"]
PAIR_HEADER = ["a", "b", "metric", "a - b [95% CI]", "p", "p (Holm)", "verdict"]


def _cell(estimate: Estimate, metric: str) -> str:
    from harness.stats import fmt_with_interval

    percent = METRIC_INFO[metric].percent
    return fmt_with_interval(estimate, percent=percent, decimals=1 if percent else 3)


def estimate_rows(results: Sequence[ModelResult], reps: int = 2000,
                  seed: int = 0) -> list[list[object]]:
    rows = []
    for r in results:
        games = max(m.games for m in r.grouped.values())
        rows.append([r.name, games, *(
            _cell(r.estimate(m, reps, seed), m) if m in r.grouped else ""
            for m in INTERVAL_METRICS)])
    return rows


def pair_rows(pairs: Sequence[PairResult]) -> list[list[object]]:
    from harness.stats import fmt_p

    rows = []
    for p in pairs:
        info = METRIC_INFO[p.metric]
        verdict = f"{p.better} better" if p.significant else "no significant difference"
        label = info.label + (" points" if info.percent else "")
        rows.append([p.a, p.b, label, _cell(p.difference, p.metric),
                     fmt_p(p.p_value), fmt_p(p.p_holm), verdict])
    return rows


def difference_matrix(pairs: Sequence[PairResult], names: Sequence[str],
                      metric: str) -> list[list[object]]:
    """Rows ``a``, columns ``b``: ``a - b`` and its interval; ``*`` marks Holm-significant."""
    cells = {}
    for p in pairs:
        if p.metric != metric:
            continue
        flipped = Estimate(-p.difference.value, -p.difference.high, -p.difference.low)
        mark = " *" if p.significant else ""
        cells[p.a, p.b] = _cell(p.difference, metric) + mark
        cells[p.b, p.a] = _cell(flipped, metric) + mark
    return [[a, *(cells.get((a, b), "") for b in names)] for a in names]


def checkpoint_of(path: str | Path) -> tuple[str, Path]:
    """A display name and the checkpoint file: a run folder means its best.keras.

    A checkpoint inside a run folder is named ``RUN/epoch-001``: the slices of
    different runs share their file names.
    """
    path = Path(path)
    if path.is_dir():
        return path.name, path / "best.keras"
    if (path.parent / "config.json").exists():
        return f"{path.parent.name}/{path.stem}", path
    return path.stem, path


def compare_checkpoints(networks: Sequence[tuple[str, Path]], data, split: str = "val", *,
                        batch_size: int = 256, reps: int = 2000, baseline: bool = True,
                        max_samples: int = 0, recalibrate_bn: int = 0, progress: bool = False):
    """``(results, pairs)`` of :mod:`harness.train.compare` for named checkpoints on a split."""
    from harness.train.checkpoint_eval import evaluate_checkpoint_split
    from harness.train.config import ConfigError
    from harness.train.dataset_source import open_split

    names = [name for name, _ in networks]
    if len(set(names)) != len(names):  # before minutes of evaluation, not after
        raise ConfigError(f"two models have the same name: {names}")
    results = []
    encoder = ""
    for name, checkpoint in networks:
        evaluation, info = evaluate_checkpoint_split(checkpoint, data, split,
                                                     batch_size=batch_size,
                                                     max_samples=max_samples,
                                                     recalibrate_bn=recalibrate_bn,
                                                     progress=progress)
        encoder = info["encoder"]
        results.append(ModelResult(name, evaluation.grouped))
    if baseline:
        source = open_split(data, split, encoder)
        try:
            rows, groups = source.rows(batch_size), source.groups(batch_size)
        finally:
            source.close()
        if max_samples:  # evaluation stops after whole batches
            kept = -(-max_samples // batch_size) * batch_size
            rows, groups = rows[:kept], groups[:kept]
        results.insert(0, frequent_move_baseline(data, split, rows, groups))
    return results, compare(results, reps=reps)
