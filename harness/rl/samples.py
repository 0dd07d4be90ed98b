"""Training batches drawn from the replay window, with symmetry augmentation.

A sample is a row with ``target == 1``, drawn uniformly from the window. A
random symmetry (of 8) is applied to the stored stones, the policy and the
ownership *before* encoding, as the supervised pipeline does
(``harness.data.pipeline``): the encoders are equivariant, and permuting int8
rows is cheaper than permuting float planes. History rows are gathered with
the dataset's compiled kernel, so rows before a game's first move are empty.

KataGo's auxiliary policies come from the same column: the opponent's-reply
target of a row is the policy target of the next row of its game (weight 0
at a game's last row, or where the next search was not a training target),
and the soft-policy target is the row's own target to the power 1/4,
renormalised.
"""

from __future__ import annotations

import numpy as np

from harness.data.dataset import gather_history
from harness.data.pipeline import symmetry_tables
from harness.rl.buffer import Window
from harness.rl.game_rows import mixed_value

BASE_COLUMNS = ("stones", "to_play", "policy", "target", "value", "root_value", "move_number")
SOFT_POLICY_POWER = 0.25  # KataGo's temperature 4


def window_columns(heads: tuple[str, ...]) -> tuple[str, ...]:
    """The position columns training a model with ``heads`` reads."""
    return BASE_COLUMNS + tuple(h for h in ("ownership", "score") if h in heads)


class Sampler:
    """Batches ``(x, targets, weights)`` from a window; values stay signed."""

    def __init__(self, window: Window, encoder, size: int, *, value_mix: float = 0.0,
                 heads: tuple[str, ...] = ("policy", "value"), augment: bool = True,
                 score_scale: float | None = None):
        self.window = window
        self.encoder = encoder
        self.size = size
        self.points = size * size
        self.value_mix = value_mix
        self.heads = heads
        self.augment = augment
        self.score_scale = score_scale
        self.perms = symmetry_tables(size)
        self.rows = window.target_rows()

    def __len__(self) -> int:
        return len(self.rows)

    def batch(self, rng: np.random.Generator, batch_size: int):
        rows = self.rows[rng.integers(0, len(self.rows), batch_size)]
        ks = rng.integers(0, 8, batch_size) if self.augment else np.zeros(batch_size, np.int64)
        return self.make(rows, ks)

    def make(self, rows: np.ndarray, ks: np.ndarray):
        """The batch of window rows ``rows`` under symmetries ``ks``."""
        c = self.window.columns
        n = len(rows)
        hist = np.zeros((n, self.encoder.history, self.points), np.int8)
        gather_history(c["stones"], rows, c["move_number"][rows].astype(np.int64),
                       ks.astype(np.int64), self.perms, hist)
        to_play = c["to_play"][rows]
        x = self.encoder.encode(hist, to_play, self.size)
        index = np.arange(n)[:, None]
        dest = self.perms[ks]  # (n, P): where each point goes
        policy = self._policy(rows, index, dest)
        value = mixed_value(c["value"][rows], c["root_value"][rows], self.value_mix)
        targets = {"policy": policy, "value": value}
        ones = np.ones(n, np.float32)
        weights = {"policy": ones, "value": ones}
        games = self.window.games
        game = self.window.game_of_row[rows]
        if "ownership" in self.heads:
            own = np.zeros((n, self.points), np.float32)
            own[index, dest] = c["ownership"][rows]
            targets["ownership"] = own
            weights["ownership"] = games["ownership_known"][game].astype(np.float32)
        if "score" in self.heads:
            score = c["score"][rows].astype(np.float32)
            if self.score_scale:
                score = np.clip(score, -self.score_scale, self.score_scale)
            targets["score"] = score.reshape(n, 1)
            weights["score"] = games["score_known"][game].astype(np.float32)
        if "reply" in self.heads:
            following = np.minimum(rows + 1, len(self.window.game_of_row) - 1)
            known = ((following == rows + 1) & (self.window.game_of_row[following] == game)
                     & (c["target"][following] == 1))
            targets["reply"] = self._policy(following, index, dest) * known[:, None]
            weights["reply"] = known.astype(np.float32)
        if "soft_policy" in self.heads:
            soft = policy ** SOFT_POLICY_POWER
            targets["soft_policy"] = soft / np.maximum(soft.sum(axis=1, keepdims=True), 1e-12)
            weights["soft_policy"] = ones
        return x, targets, weights

    def _policy(self, rows: np.ndarray, index: np.ndarray, dest: np.ndarray) -> np.ndarray:
        """The policy targets of ``rows``, permuted to ``dest``, summing to 1."""
        policy = np.zeros((len(rows), self.points + 1), np.float32)
        source = self.window.columns["policy"][rows].astype(np.float32)
        policy[index, dest] = source[:, : self.points]
        policy[:, self.points] = source[:, self.points]
        policy /= np.maximum(policy.sum(axis=1, keepdims=True), 1e-12)
        return policy
