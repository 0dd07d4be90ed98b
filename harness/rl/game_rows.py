"""Training targets of a finished self-play game, as plain per-position arrays.

Every position of the game is kept, including those decided by a fast search
under playout-cap randomisation, because the encoders read the positions
before the current one; only rows with ``target == 1`` are ever sampled.

Conventions (the same as the supervised datasets, ``harness.data.layout``):
values, ownership and score are from the view of the side to move at that
position; the policy is the normalised root visit distribution (pass = P),
or under the Gumbel root (``[mcts] root = "gumbel"``) the search's
completed-Q improved policy (``SearchResult.target``).
Ownership and score come from the final position counted Tromp-Taylor; they
carry no information in a game that ended by resignation (its final position
is not settled), so such games mark them unknown and train with zero weight.
NoGo has no score, so its score is always unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.data.rows import ownership_for_side_to_move
from harness.game.geometry import BLACK
from harness.search.game_driver import SelfPlayGame
from harness.train import signed_outcome


def policy_target(visits: np.ndarray) -> np.ndarray:
    """Root visits (or an improved policy) as a probability distribution (all
    zeros if nothing was visited)."""
    visits = np.asarray(visits, np.float64)
    total = visits.sum()
    if total <= 0:
        return np.zeros(visits.shape, np.float32)
    return (visits / total).astype(np.float32)


def mixed_value(outcome: np.ndarray, search_value: np.ndarray, weight: float) -> np.ndarray:
    """``(1 - w) z + w v``: the game outcome blended with the root value of the search."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"value mix weight must be in [0, 1], got {weight}")
    z = np.asarray(outcome, np.float32)
    v = np.asarray(search_value, np.float32)
    return ((1.0 - weight) * z + weight * v).astype(np.float32)


def side_to_move_score(score_black: float, to_play: np.ndarray) -> np.ndarray:
    """Black's final margin (komi included) seen from each row's side to move."""
    to_play = np.asarray(to_play)
    return np.where(to_play == BLACK, score_black, -score_black).astype(np.float32)


@dataclass
class GameRows:
    """One game's rows for the replay buffer (n positions, P points)."""

    stones: np.ndarray  # int8 (n, P): the position before each move
    to_play: np.ndarray  # int8 (n,)
    move: np.ndarray  # int16 (n,): the move played
    policy: np.ndarray  # float16 (n, P + 1): policy target, zeros if not a target
    target: np.ndarray  # uint8 (n,): 1 where the search was full (a training sample)
    value: np.ndarray  # int8 (n,): outcome from to_play's view
    root_value: np.ndarray  # float16 (n,): search value from to_play's view
    ownership: np.ndarray  # int8 (n, P): final owner from to_play's view
    score: np.ndarray  # float32 (n,): final margin from to_play's view
    move_number: np.ndarray  # int16 (n,)
    winner: int
    ownership_known: bool
    score_known: bool

    def __len__(self) -> int:
        return len(self.move)


def game_rows(record: SelfPlayGame) -> GameRows:
    """The per-position rows of a finished self-play game."""
    game = record.game
    n = len(game.moves)
    points = game.size * game.size
    start = len(game.history) - n - 1  # history row of the position before move 0
    stones = np.stack(game.history[start : start + n]) if n else np.zeros((0, points), np.int8)
    to_play = np.array([c for c, _ in game.moves], np.int8)
    move = np.array([p for _, p in game.moves], np.int16)
    policy = np.zeros((n, points + 1), np.float16)
    target = np.zeros(n, np.uint8)
    for i, pol in enumerate(record.policies[:n]):
        if pol is not None and record.full[i] and np.asarray(pol).sum() > 0:
            policy[i] = policy_target(pol)
            target[i] = 1
    winner = int(record.result.winner)
    scored = not game.resigned
    owner_black = game.ownership() if scored else np.zeros(points, np.int32)
    ownership = ownership_for_side_to_move(np.broadcast_to(owner_black, (n, points)), to_play)
    score_known = scored and game.rules != "nogo"
    score = side_to_move_score(game.score() if score_known else 0.0, to_play)
    root_values = np.zeros(n, np.float16)
    root_values[: len(record.root_values)] = np.asarray(record.root_values[:n], np.float16)
    return GameRows(
        stones=stones.astype(np.int8),
        to_play=to_play,
        move=move,
        policy=policy,
        target=target,
        value=signed_outcome(winner, to_play).astype(np.int8),
        root_value=root_values,
        ownership=ownership.astype(np.int8),
        score=score,
        move_number=np.arange(n, dtype=np.int16),
        winner=winner,
        ownership_known=scored,
        score_known=score_known,
    )
