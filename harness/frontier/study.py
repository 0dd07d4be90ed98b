"""``harness frontier``'s work: train what is missing, score every savepoint, report.

(A self-play study's work is :mod:`harness.frontier.selfplay_study`'s.)

Layout of the study's folder ``DIR``: ``runs/RUN/`` (one ``harness train`` run
per network and savepoint), ``evaluations/RUN.json`` (each savepoint's scores),
``config.json`` (the study as read), ``points.csv`` (every network at every
savepoint and metric, with the FLOPs asked for and those its checkpoint
recorded) and what :func:`harness.report.frontier.write_frontier_report`
writes: ``frontier.csv``, ``fits.csv``, ``frontier-<metric>.png`` and
``report.md``; the live metrics (:mod:`harness.metrics`) in ``metrics.jsonl``
and TensorBoard events: each savepoint's scores as it is scored, ``MODEL/METRIC``
(with ``_low`` and ``_high``) at the step of its recorded training FLOPs.
Each step skips what is done, so running the command again
after a kill finishes the study, and running it on a finished one only
redraws the report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from harness.files import atomic_json, atomic_write, csv_text
from harness.frontier.config import FrontierConfig, savepoint_flops
from harness.frontier.plan import flops_label, networks, plan_savepoints
from harness.frontier.result import StudyResult
from harness.frontier.scores import Scored, score_checkpoint
from harness.metrics import MetricsLog

POINTS_COLUMNS = ("family", "model", "params", "forward_flops", "savepoint_flops", "samples",
                  "run", "flops", "metric", "value", "low", "high", "games")


def run_frontier(config: FrontierConfig, out: str | Path, *, progress: bool = True,
                 log: Callable[[str], None] = print) -> StudyResult:
    """Train, score and report the study ``config`` in ``out`` (a self-play
    study: :func:`harness.frontier.selfplay_study.run_selfplay_frontier`)."""
    from harness.report.frontier import write_frontier_report

    out = Path(out)
    if config.kind == "selfplay":
        from harness.frontier.selfplay_study import run_selfplay_frontier

        return run_selfplay_frontier(config, out, progress=progress, log=log)
    runs_dir = out / "runs"
    flops = savepoint_flops(config)
    log(f"frontier: {len(config.models)} models x {len(flops)} savepoints from "
        f"{flops_label(flops[0])} to {flops_label(flops[-1])} training FLOPs "
        f"({config.savepoints}) in {out}")
    nets = networks(config, runs_dir, log)
    points = plan_savepoints(config, nets)  # every check before any training
    out.mkdir(parents=True, exist_ok=True)
    atomic_json(out / "config.json", dataclasses.asdict(config))

    from harness.frontier.runs import ensure_savepoints

    metrics = MetricsLog.of(out, config)
    scored = []
    for point, checkpoint in ensure_savepoints(config, points, runs_dir, progress=progress,
                                               log=log):
        scored.append(score_checkpoint(config, point, checkpoint, out / "evaluations",
                                       progress=progress, log=log))
        metrics.write(scored[-1].train_flops, savepoint_metrics(scored[-1], config.metrics))
    atomic_write(out / "points.csv", csv_text(POINTS_COLUMNS, _point_rows(scored, config)))
    frontier_points = [p for s in scored for p in s.frontier_points(config.metrics)]
    findings = write_frontier_report(frontier_points, out, seed=config.seed)
    return StudyResult(out / "report.md", findings, scored)


def savepoint_metrics(scored: Scored, metrics: tuple[str, ...]) -> dict[str, float]:
    """A savepoint's live figures: ``MODEL/METRIC`` and its interval, and the
    savepoint's FLOPs and samples, all under the model's name (the step is its
    recorded training FLOPs, so each model's curve is its own)."""
    model = scored.point.network.model.replace("/", "|")
    values: dict[str, float] = {f"{model}/savepoint_flops": scored.point.flops,
                                f"{model}/samples": scored.point.samples}
    for metric in metrics:
        value, low, high = scored.metrics[metric]
        values.update({f"{model}/{metric}": value, f"{model}/{metric}_low": low,
                       f"{model}/{metric}_high": high})
    return values


def _point_rows(scored: list[Scored], config: FrontierConfig) -> list[list[object]]:
    rows = []
    for s in scored:
        p, n = s.point, s.point.network
        for metric in config.metrics:
            value, low, high = s.metrics[metric]
            rows.append([n.family, n.model, n.params, n.forward_flops, p.flops, p.samples, p.run,
                         s.train_flops, metric, value, low, high, s.games])
    return rows
