"""The suite's comparison step: what the Findings are computed from.

Every trained network (first seed) and the trivial baseline are evaluated on
the same validation positions (:mod:`harness.train.compare`); the seeds'
final metrics give a mean and its interval per model. Numbers are saved as
values in ``comparison.json`` (the report's Findings are generated from it)
and as readable tables beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from harness.files import atomic_json
from harness.stats import Estimate, mean_interval

SEED_HEADER = ["model", "seeds", "top-1 % mean [95% CI]", "value MSE mean [95% CI]",
               "top-1 % by seed"]


def _values(e: Estimate) -> list[float]:
    return [e.value, e.low, e.high]


def write_comparison(path: Path, networks: Sequence[tuple[str, Path]], dataset: Path,
                     seeds: Mapping[str, Sequence[Path]],
                     log: Callable[[str], None] = print, reps: int = 2000) -> Path:
    from harness.files import save_table
    from harness.train.compare import (
        ESTIMATE_HEADER,
        PAIR_HEADER,
        compare_checkpoints,
        difference_matrix,
        estimate_rows,
        pair_rows,
    )

    results, pairs = compare_checkpoints(networks, dataset, "val", reps=reps)
    out = path.parent
    save_table(ESTIMATE_HEADER, estimate_rows(results, reps), out / "estimates")
    save_table(PAIR_HEADER, pair_rows(pairs), out / "pairs")
    names = [r.name for r in results]
    save_table(["row - column: top-1 points [95% CI], * Holm p < 0.05", *names],
               difference_matrix(pairs, names, "policy_top1"), out / "matrix_top1")
    seed_rows, seed_values = seed_table(seeds)
    save_table(SEED_HEADER, seed_rows, out / "seeds")
    games = max(m.games for m in results[0].grouped.values())
    value = {
        "split": "val",
        "games": games,
        "positions": int(results[0].grouped["policy_top1"].counts.sum()),
        "baseline": results[0].name,
        "models": [
            {"name": r.name, **{m: _values(r.estimate(m, reps, 0)) for m in r.grouped}}
            for r in results
        ],
        "pairs": [
            {"a": p.a, "b": p.b, "metric": p.metric, "difference": _values(p.difference),
             "p": p.p_value, "p_holm": p.p_holm, "better": p.better}
            for p in pairs
        ],
        "seeds": seed_values,
    }
    atomic_json(path, value)
    log(f"compared {len(results)} predictors on {games} validation games: {path}")
    return path


def seed_table(seeds: Mapping[str, Sequence[Path]]) -> tuple[list[list[object]], list[dict]]:
    """Each model's final validation metrics over its seeds: mean and Student-t interval."""
    from harness.report.training_plots import load_run
    from harness.stats import fmt_percent, fmt_with_interval

    rows, values = [], []
    for model, runs in seeds.items():
        finals = [load_run(r) for r in runs if (Path(r) / "metrics.csv").exists()]
        top1 = [run.final("val_policy_top1") for run in finals]
        mse = [run.final("val_value_mse") for run in finals]
        top1_e, mse_e = mean_interval(top1), mean_interval(mse)
        rows.append([model, len(finals), fmt_with_interval(top1_e, percent=True),
                     fmt_with_interval(mse_e, decimals=3),
                     ", ".join(fmt_percent(v) for v in top1)])
        values.append({"model": model, "seeds": len(finals), "policy_top1": _values(top1_e),
                       "value_mse": _values(mse_e), "policy_top1_by_seed": top1})
    return rows, values
