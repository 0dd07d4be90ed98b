"""The pool of past selves a policy-gradient learner plays against.

AlphaGo drew each step's opponent uniformly from earlier iterations of the
policy, adding the current one every 500 steps: "randomizing from a pool of
opponents in this way stabilizes training by preventing overfitting to the
current policy". A pool is a list of checkpoints (relative to the run
directory), oldest first, the start network always first.
"""

from __future__ import annotations

import numpy as np

from harness.rl.config import PolicyGradientConfig


def grown_pool(pool: list[str], step: int, checkpoint: str,
               config: PolicyGradientConfig) -> list[str]:
    """The pool after ``step``: ``checkpoint`` (the network after it) joins
    every ``pool_every`` steps; past ``pool_size`` the oldest member after
    the start network leaves."""
    if step % config.pool_every or checkpoint in pool:
        return list(pool)
    grown = [*pool, checkpoint]
    if config.pool_size and len(grown) > config.pool_size:
        grown = [grown[0], *grown[len(grown) - config.pool_size + 1:]]
    return grown


def pool_weights(size: int, config: PolicyGradientConfig) -> np.ndarray:
    """The probability of drawing each member, oldest first."""
    if size < 1:
        raise ValueError("the opponent pool is empty")
    if config.pool_sampling == "latest":
        weights = np.zeros(size)
        weights[-1] = 1.0
    elif config.pool_sampling == "recent":
        weights = config.pool_decay ** np.arange(size - 1, -1, -1, dtype=np.float64)
    else:
        weights = np.ones(size)
    return weights / weights.sum()


def draw_opponents(pool: list[str], config: PolicyGradientConfig,
                   rng: np.random.Generator) -> list[str]:
    """``config.opponents`` members drawn (with replacement) for one step."""
    weights = pool_weights(len(pool), config)
    return [pool[i] for i in rng.choice(len(pool), size=config.opponents, p=weights)]
