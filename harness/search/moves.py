"""Turning a finished search into decisions: which move, whether to resign,
how hard to search.

These are small pure functions of a :class:`SearchResult` and a random
generator, so players, the self-play driver and tests share one definition
of each rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from harness.search.config import MCTSConfig


@dataclass
class SearchResult:
    """What one search found at the root (arrays indexed by move, pass = P)."""

    visits: np.ndarray  # int32 (P + 1,): root child visits
    q: np.ndarray  # float32 (P + 1,): mean value for the side to move, NaN if unvisited
    prior: np.ndarray  # float32 (P + 1,): root priors the search used (noise included)
    root_value: float  # value of the root for the side to move, in [-1, 1]
    best_move: int  # most visited move (ties: higher value, then higher prior); Gumbel
    # root: the sequential-halving winner
    full: bool = True  # a full search (a training target) under playout-cap randomisation
    new_playouts: int = 0  # visits this search added; the rest came from the reused tree
    # Gumbel root: softmax(log prior + sigma(completed Q)) by move; None under PUCT.
    improved_policy: np.ndarray | None = None

    @property
    def playouts(self) -> int:
        return int(self.visits.sum())

    def policy(self) -> np.ndarray:
        """Visit distribution (the AlphaZero policy target); zeros if nothing was searched."""
        total = self.visits.sum()
        if total == 0:
            return np.zeros(self.visits.shape, np.float32)
        return (self.visits / total).astype(np.float32)

    def target(self) -> np.ndarray:
        """The policy training target: the completed-Q improved policy of a
        Gumbel search (its visits follow the halving schedule, not the
        policy), the visit distribution of a PUCT one."""
        if self.improved_policy is not None:
            return self.improved_policy
        return self.policy()


@njit(cache=True, nogil=True)
def best_move(visits: np.ndarray, q: np.ndarray, prior: np.ndarray) -> int:
    """Most visited move; ties go to the higher value (NaN lowest), then the
    higher prior, then the lower index. With no visits at all, the highest
    prior. Compiled: a finished search asks it once per move."""
    visited = False
    for m in range(visits.shape[0]):
        if visits[m] > 0:
            visited = True
            break
    best = 0
    for m in range(1, visits.shape[0]):
        if visited:
            if visits[m] != visits[best]:
                if visits[m] > visits[best]:
                    best = m
                continue
            qm = -np.inf if np.isnan(q[m]) else q[m]
            qb = -np.inf if np.isnan(q[best]) else q[best]
            if qm != qb:
                if qm > qb:
                    best = m
                continue
        if prior[m] > prior[best]:
            best = m
    return best


def temperature_for(move_number: int, config: MCTSConfig) -> float:
    """AlphaZero's schedule: ``config.temperature`` for the first
    ``temperature_moves`` moves of the game (0-based count), then greedy.
    Always greedy under the Gumbel root: its Gumbel noise already samples the
    move (the sequential-halving winner)."""
    if config.gumbel:
        return 0.0
    return config.temperature if move_number < config.temperature_moves else 0.0


def select_move(
    result: SearchResult,
    temperature: float = 0.0,
    rng: np.random.Generator | None = None,
) -> int:
    """A move from the root visits.

    Temperature 0 plays the most visited move; otherwise the move is drawn
    with probability proportional to ``visits ** (1 / temperature)``.
    Cazenave's tournament diversity rule lives in
    :func:`harness.players.choice.tournament_choice`.
    """
    if temperature <= 0:
        return int(result.best_move)
    visits = result.visits.astype(np.float64)
    total = visits.sum()
    if total <= 0:
        return int(result.best_move)
    if temperature > 0:
        rng = rng if rng is not None else np.random.default_rng()
        logs = np.where(visits > 0, np.log(np.maximum(visits, 1.0)) / temperature, -np.inf)
        weights = np.exp(logs - logs.max())
        return int(rng.choice(visits.size, p=weights / weights.sum()))
    return int(result.best_move)


def resign_enabled(rng: np.random.Generator, config: MCTSConfig) -> bool:
    """Decided once per game: a ``resign_disabled_fraction`` of games play to
    the end so that the false-resignation rate can be measured."""
    if config.resign_threshold is None:
        return False
    return bool(rng.random() >= config.resign_disabled_fraction)


def should_resign(
    result: SearchResult, config: MCTSConfig, enabled: bool = True, move_number: int = 0
) -> bool:
    """AlphaGo Zero's rule: resign when the root value and the best move's
    value are both at or below the threshold."""
    if not enabled or config.resign_threshold is None or move_number < config.resign_min_moves:
        return False
    if result.visits.sum() == 0:
        return False
    best_q = result.q[result.best_move]
    best_q = result.root_value if np.isnan(best_q) else float(best_q)
    threshold = config.resign_threshold
    return result.root_value <= threshold and best_q <= threshold


def choose_full_search(rng: np.random.Generator, config: MCTSConfig) -> bool:
    """Playout-cap randomisation: True for a full search (probability
    ``full_search_prob``), always True when no fast cap is configured."""
    if config.fast_playouts is None:
        return True
    return bool(rng.random() < config.full_search_prob)


def dirichlet_alpha(legal_moves: int, config: MCTSConfig) -> float:
    """Root noise concentration: a fixed alpha, or the total spread over the
    legal moves (so that noise has the same strength on every board)."""
    if config.noise_alpha is not None:
        return config.noise_alpha
    return config.noise_alpha_total / max(legal_moves, 1)
