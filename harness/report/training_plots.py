"""Training figures in the style of Cazenave's mobile-networks paper.

Curves of validation policy accuracy and value MSE against epochs for
several runs on one figure, and each run's final accuracy and MSE against its
parameter count and against its forward speed. Everything is read from the
run directories (``metrics.csv``, ``config.json``) and an optional speed table,
so plots can be redrawn without TensorFlow unless a speed must be measured.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import contextlib

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from harness.files import atomic_path

FORMATS = ("png", "svg")


@dataclass
class RunCurves:
    """One run's per-epoch metrics, as floats (NaN where missing)."""

    name: str
    path: Path
    model: str
    columns: dict[str, list[float]] = field(default_factory=dict)
    params: int | None = None
    speed: float | None = None  # forward positions per second

    def final(self, column: str) -> float:
        values = [v for v in self.columns.get(column, []) if not math.isnan(v)]
        return values[-1] if values else math.nan


def load_run(path: str | Path) -> RunCurves:
    """A run directory's metrics; a one-line ValueError if it is not one."""
    path = Path(path)
    metrics = path / "metrics.csv"
    if not metrics.exists():
        raise ValueError(f"{path}: not a training run (no metrics.csv)")
    with open(metrics, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{metrics}: no epochs recorded yet")
    columns = {key: [_float(r.get(key)) for r in rows] for key in rows[0]}
    model = path.name
    config = path / "config.json"
    if config.exists():
        with contextlib.suppress(json.JSONDecodeError):
            model = json.loads(config.read_text()).get("model", model) or model
    return RunCurves(name=path.name, path=path, model=model, columns=columns)


def _float(text: str | None) -> float:
    try:
        return float(text) if text not in (None, "") else math.nan
    except ValueError:
        return math.nan


def _save(fig, out_dir: Path, stem: str) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in FORMATS:
        final = out_dir / f"{stem}.{fmt}"
        with atomic_path(final) as tmp:
            fig.savefig(tmp, format=fmt, dpi=120, bbox_inches="tight")
        written.append(final)
    plt.close(fig)
    return written


_PANELS = (("val_policy_top1", "policy accuracy (top-1)"), ("val_value_mse", "value MSE"))


# x axes of the curves: (metrics column, label, file stem). Equal-compute
# comparisons are read against samples and seconds, not epochs.
CURVE_AXES = (
    ("epoch", "epoch", "curves_vs_epochs"),
    ("samples_seen", "training samples", "curves_vs_samples"),
    ("wall_time_s", "training wall seconds", "curves_vs_seconds"),
)


def x_values(run: RunCurves, column: str) -> list[float]:
    """A curve's x values; runs written before ``samples_seen`` existed sum ``samples``."""
    values = run.columns.get(column, [])
    if column == "samples_seen" and (not values or all(math.isnan(v) for v in values)):
        total, values = 0.0, []
        for n in run.columns.get("samples", []):
            total += 0.0 if math.isnan(n) else n
            values.append(total)
    return values


def plot_curves(runs: Sequence[RunCurves], out_dir: str | Path, x_column: str = "epoch",
                xlabel: str = "epoch", stem: str = "curves_vs_epochs") -> list[Path]:
    """Validation accuracy and value MSE against ``x_column``, one line per run.

    The shaded band is each point's 95% interval (a bootstrap over games).
    """
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (column, label) in zip(axes, _PANELS, strict=True):
        for run in runs:
            x, y = x_values(run, x_column), run.columns.get(column, [])
            if len(x) != len(y):
                continue
            (line,) = ax.plot(x, y, marker="o", markersize=3, label=run.name)
            low, high = run.columns.get(f"{column}_low"), run.columns.get(f"{column}_high")
            if low and high and len(low) == len(x):
                ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
        ax.set_xlabel(xlabel)
        if x_column == "epoch":
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")
    fig.suptitle(f"validation metrics by {xlabel} (bands: 95% intervals)")
    return _save(fig, Path(out_dir), stem)


def plot_final_vs(runs: Sequence[RunCurves], out_dir: str | Path, attribute: str,
                  xlabel: str) -> list[Path]:
    """Final accuracy and value MSE against ``attribute`` (``params`` or ``speed``)."""
    points = [r for r in runs if getattr(r, attribute)]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (column, label) in zip(axes, _PANELS, strict=True):
        for run in points:
            x, y = getattr(run, attribute), run.final(column)
            ax.scatter([x], [y])
            ax.annotate(run.name, (x, y), fontsize="small", xytext=(4, 4),
                        textcoords="offset points")
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"final {label}")
        ax.grid(alpha=0.3, which="both")
    fig.suptitle(f"final validation metrics by {xlabel}")
    return _save(fig, Path(out_dir), f"final_vs_{attribute}")


def read_bench_speeds(bench_dir: str | Path) -> dict[str, float]:
    """Model name -> best forward positions/s found in ``bench_dir/*.csv``.

    Tolerant of the table's exact layout: a ``model`` column and any column
    whose name says positions (or samples) per second.
    """
    speeds: dict[str, float] = {}
    for path in sorted(Path(bench_dir).glob("*.csv")):
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            fields = reader.fieldnames or []
            model_key = next((k for k in fields if k.lower() in ("model", "name")), None)
            rate_keys = [k for k in fields if _is_rate(k)]
            if model_key is None or not rate_keys:
                continue
            for row in reader:
                rates = [_float(row.get(k)) for k in rate_keys]
                rates = [r for r in rates if not math.isnan(r)]
                if rates:
                    name = row[model_key]
                    speeds[name] = max(speeds.get(name, 0.0), max(rates))
    return speeds


def _is_rate(column: str) -> bool:
    c = column.lower().replace(" ", "").replace("_", "")
    return any(t in c for t in ("pos/s", "positions/s", "persecond", "samples/s", "possec",
                                "positionspers", "/s"))


def summary_rows(runs: Sequence[RunCurves]) -> tuple[list[str], list[list[object]]]:
    """The last epoch of each run: compute spent and validation metrics with intervals."""
    from harness.stats import Estimate, fmt_with_interval

    def cell(run: RunCurves, column: str, percent: bool) -> str:
        estimate = Estimate(*(run.final(f"{column}{s}") for s in ("", "_low", "_high")))
        return fmt_with_interval(estimate, percent=percent, decimals=1 if percent else 3)

    header = ["run", "model", "params", "forward pos/s", "samples", "train s",
              "top-1 % [95% CI]", "top-5 % [95% CI]", "value MSE [95% CI]"]
    rows = [[r.name, r.model, r.params or "", round(r.speed) if r.speed else "",
             int(x_values(r, "samples_seen")[-1]) if x_values(r, "samples_seen") else "",
             round(r.final("wall_time_s")) if not math.isnan(r.final("wall_time_s")) else "",
             cell(r, "val_policy_top1", True), cell(r, "val_policy_top5", True),
             cell(r, "val_value_mse", False)] for r in runs]
    return header, rows


def plot_runs(runs: Sequence[RunCurves], out_dir: str | Path,
              speeds: Mapping[str, float] | None = None) -> list[Path]:
    """All training figures for ``runs`` (params/speed already filled in where known)."""
    for run in runs:
        if speeds and run.speed is None:
            run.speed = speeds.get(run.model) or speeds.get(run.name)
    written = []
    for x_column, xlabel, stem in CURVE_AXES:
        if any(x_values(r, x_column) for r in runs):
            written += plot_curves(runs, out_dir, x_column, xlabel, stem)
    if any(r.params for r in runs):
        written += plot_final_vs(runs, out_dir, "params", "parameters")
    if any(r.speed for r in runs):
        written += plot_final_vs(runs, out_dir, "speed", "forward positions per second")
    return written


def run_checkpoint(run: RunCurves) -> Path | None:
    """The checkpoint that stands for a run: ``best.keras``, else the newest epoch."""
    best = run.path / "best.keras"
    if best.exists():
        return best
    epochs = sorted(run.path.glob("epoch-*.keras"))
    return epochs[-1] if epochs else None


def measure_forward_speed(model, batch_size: int = 64, repeats: int = 3) -> float:
    """Positions per second of ``predict_on_batch`` on random inputs (best of ``repeats``)."""
    import time

    import numpy as np

    shape = (batch_size, *model.inputs[0].shape[1:])
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    model.predict_on_batch(x)  # build and trace outside the timing
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        model.predict_on_batch(x)
        best = min(best, time.perf_counter() - t0)
    return batch_size / best


def fill_model_facts(runs: Sequence[RunCurves], speeds: Mapping[str, float]) -> None:
    """Parameters from each run's checkpoint; forward speed measured where no bench has it."""
    from harness.train.checkpoints import load_checkpoint

    for run in runs:
        path = run_checkpoint(run)
        if path is None:
            continue
        model = load_checkpoint(path)
        run.params = int(model.count_params())
        if run.speed is None:
            known = speeds.get(run.model) or speeds.get(run.name)
            run.speed = known or measure_forward_speed(model)
