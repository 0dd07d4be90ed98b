"""A run that continues another run's last checkpoint under a longer budget or
another schedule: a branch.

A branch is made of what a resume reads (:mod:`harness.train.run_dir`): the
source's committed checkpoint (weights and optimizer state: moments and step
counter), its state (epochs done, step, samples, seconds: the compute counted
so far) and its metric rows, under the branch's own config. Training it is an
ordinary resume (``train(plan, resume=True)``): it continues with the epoch
after the source's last, whose batches are those the source would have met
next, and its rate follows its own schedule from the fraction of its budget
already spent. So a constant-rate run can be continued at the same rate
(a longer stable phase) or cooled down (Hägele et al. 2024), several times
from one checkpoint. The branch is assembled under a temporary name and
renamed, so a kill leaves no half-made run.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from harness.train.config import ConfigError, TrainConfig
from harness.train.run_dir import RunDir


def fork_run(source: str | Path, config: TrainConfig) -> RunDir:
    """``config.run_dir``, a new run continuing ``source``'s last committed checkpoint.

    ``config`` must train past the source: more epochs than it has done. The
    model, data, seed and batch must be the source's (the data stream and the
    checkpoint depend on them); the schedule and budget are the branch's.
    """
    src = RunDir(source)
    state = src.read_state()
    if state.partial or not state.checkpoint:
        raise ConfigError(f"{src.path}: no committed epoch to branch from (finish or resume "
                          "its current epoch first)")
    before = src.read_config()
    for key in ("model", "data", "train_split", "encoder", "seed", "batch_size", "optimizer",
                "precision", "heads"):
        if getattr(before, key) != getattr(config, key):
            raise ConfigError(f"{config.run_dir}: a branch of {src.path} must keep its {key} "
                              f"({getattr(before, key)!r}), not {getattr(config, key)!r}")
    if config.epochs <= state.epochs_done:
        raise ConfigError(f"{config.run_dir}: {config.epochs} epochs do not continue "
                          f"{src.path}, which has done {state.epochs_done}")
    target = RunDir(config.run_dir)
    if target.path.exists():
        raise ConfigError(f"{target.path}: run already exists")
    staging = RunDir(target.path.with_name(target.path.name + ".fork"))
    shutil.rmtree(staging.path, ignore_errors=True)  # a kill while branching before
    staging.create(config)
    shutil.copyfile(src.path / state.checkpoint, staging.path / state.checkpoint)
    staging.write_metrics(src.read_metrics(upto_epoch=state.epochs_done))
    if src.best_path.exists():
        shutil.copyfile(src.best_path, staging.best_path)
    staging.write_state(dataclasses.replace(state, partial={}))
    staging.path.rename(target.path)
    return target
