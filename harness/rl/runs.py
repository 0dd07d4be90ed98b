"""Which run class a self-play config names: the AlphaZero loop or policy gradient.

Both keep the same run directory (:mod:`harness.rl.run`); the policy-gradient
run (:mod:`harness.rl.pg_run`) is a subclass, so this choice lives apart from
both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from harness.config_io import read_saved_config
from harness.rl.config import RLConfig
from harness.rl.run import RLRun


def make_run(config: RLConfig, log: Callable[[str], None] = print) -> RLRun:
    """The run object of ``config``'s algorithm."""
    if config.algorithm == "policy-gradient":
        from harness.rl.pg_run import PolicyGradientRun

        return PolicyGradientRun(config, log=log)
    return RLRun(config, log=log)


def open_run(path: str | Path) -> tuple[RLConfig, RLRun]:
    """An existing run directory's config and run object."""
    config = read_saved_config(RLConfig, Path(path) / "config.json")
    config = dataclasses.replace(config, runs_dir=str(Path(path).parent), run=Path(path).name)
    return config, make_run(config)
