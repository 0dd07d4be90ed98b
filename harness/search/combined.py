"""One evaluator whose prior comes from one network and whose value from another.

AlphaGo (Silver et al. 2016) searched with the supervised policy's prior,
which kept the search broad ("presumably because humans select a diverse
beam of promising moves"), and the value network trained on the RL policy's
games; a single policy-value network gives both from one head pair. This
evaluator lets the search take each from its own :class:`Evaluator`: two
forward passes per batch of leaves, one on each network.
"""

from __future__ import annotations

import numpy as np


class SplitEvaluator:
    """The prior of ``prior`` and the value of ``value``, both
    :class:`harness.search.Evaluator` objects for the same board size (each
    gets the history rows its own encoder needs)."""

    def __init__(self, prior, value):
        if int(prior.size) != int(value.size):
            raise ValueError(f"the prior's network plays {prior.size}x{prior.size}, "
                             f"the value's {value.size}x{value.size}")
        self.prior = prior
        self.value = value
        self.size = int(prior.size)
        self.history = max(int(prior.history), int(value.history))

    def evaluate(self, stones: np.ndarray, to_play: np.ndarray,
                 legal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        policy, _ = self.prior.evaluate(stones[:, -int(self.prior.history):], to_play, legal)
        _, value = self.value.evaluate(stones[:, -int(self.value.history):], to_play, legal)
        return policy, value

    def reseed(self, seed: int) -> None:
        for part in (self.prior, self.value):
            reseed = getattr(part, "reseed", None)
            if reseed is not None:
                reseed(seed)

    def clear_cache(self) -> None:
        for part in (self.prior, self.value):
            clear = getattr(part, "clear_cache", None)
            if clear is not None:
                clear()
