"""Training what a study is missing: one ``harness train`` run per savepoint.

``savepoints = "per-budget"``: every (network, savepoint) is its own run with
a budget of the savepoint's samples, so its learning-rate schedule (warm-up,
decay) runs over exactly that budget, as a network trained for that compute
alone would be. The runs are the trainer's own: a finished run is skipped, a
killed or interrupted one resumes from its state and checkpoint, and a run
whose saved config is not the one the study asks for now is refused rather
than silently mixed in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harness.config_io import ConfigError
from harness.frontier.config import FrontierConfig
from harness.frontier.plan import Savepoint, flops_label, train_config
from harness.train.config import TrainConfig

Log = Callable[[str], None]


class StudyInterrupted(Exception):
    """Training stopped on Ctrl-C (or SIGTERM) with its state saved; the exit code."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def ensure_savepoint(config: FrontierConfig, point: Savepoint, runs_dir: Path, *,
                     progress: bool, log: Log) -> Path:
    """The checkpoint of ``point``'s finished run, training or resuming it first."""
    from harness.train.preflight import make_plan, resolve_against_world
    from harness.train.run_dir import RunDir
    from harness.train.trainer import train

    wanted = train_config(config, point.network.model, runs_dir, point.run, point.samples)
    run = RunDir(wanted.run_dir)
    resume = run.exists()
    if resume:
        saved = run.read_config()
        _check_same(saved, resolve_against_world(wanted)[0], run.path)
        state = run.read_state()
        if saved.pace.run_over(state):
            log(f"{point.run}: finished, {state.samples_seen:,} samples; skipping")
            return run.path / state.checkpoint
        log(f"{point.run}: unfinished; resuming")
        wanted = saved
    else:
        log(f"{point.run}: training {point.network.model} for {point.samples:,} samples "
            f"({flops_label(point.planned_flops)} FLOPs)")
    plan = make_plan(wanted, resume=resume)
    try:
        result = train(plan, resume=resume, progress=progress, log=log)
    finally:
        for source in (plan.train, plan.val):
            getattr(source, "close", lambda: None)()
    if result.exit_code != 0:
        raise StudyInterrupted(f"training {point.run} stopped ({result.message}); run the "
                               "same harness frontier command again to continue",
                               result.exit_code)
    return run.path / run.read_state().checkpoint


def _check_same(saved: TrainConfig, wanted: TrainConfig, path: Path) -> None:
    """Refuse a run made under other settings: its savepoint would not be this study's."""
    have, want = _plain(saved.to_dict()), _plain(wanted.to_dict())
    for key in sorted((set(have) | set(want)) - {"run", "runs_dir"}):  # where it was found
        if have.get(key) != want.get(key):
            raise ConfigError(f"{path}: {key} was {have.get(key)!r} for this run, the study now "
                              f"says {want.get(key)!r}; move the run away or restore the setting")


def _plain(values: dict) -> dict:
    """Tuples as lists and whole floats as they are written: what config.json holds."""
    return json.loads(json.dumps(values))
