"""Which run class a self-play config names: the AlphaZero loop or policy gradient.

Both keep the same run directory (:mod:`harness.rl.run`); the policy-gradient
run (:mod:`harness.rl.pg_run`) is a subclass, so this choice lives apart from
both.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.rl.config import RLConfig
from harness.rl.run import RLRun


def make_run(config: RLConfig, log: Callable[[str], None] = print) -> RLRun:
    """The run object of ``config``'s algorithm."""
    if config.algorithm == "policy-gradient":
        from harness.rl.pg_run import PolicyGradientRun

        return PolicyGradientRun(config, log=log)
    return RLRun(config, log=log)
