"""How good are the policy targets a self-play search writes? Measured on a
dataset's held-out positions against the moves its players chose.

Self-play trains the policy toward the search's target (the completed-Q
improved policy of a Gumbel root, the visit distribution of a PUCT one). A
target worse than the network's own prior teaches the network to play worse,
and no amount of self-play repairs that. On strong human games the move
actually played is an independent reference: a target should agree with it
at least as often as the prior does, and not spread its mass elsewhere. Per
position (one from each sampled game, so positions are independent): does
the argmax of the prior, of the target and the move the search plays match
the human move, the cross-entropy of the human move under prior and target,
and the KL divergence of the target from the prior (how far a target pulls).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.stats.bootstrap import GroupedMetric, bootstrap, paired_difference

EPSILON = 1e-9


@dataclass(frozen=True)
class ReplayedPositions:
    """Positions replayed from held-out games and the move played in each."""

    games: list  # harness.game.position.Game, one position per game
    moves: np.ndarray  # int64 (N,): the move the game's player chose there


def replayed_positions(path: str | Path, count: int, *, board_size: int, komi: float,
                       rules: str, seed: int = 0, min_moves: int = 10,
                       split: str = "val") -> ReplayedPositions:
    """One position from each of ``count`` random ``split`` games (every game
    if fewer), at a uniform move number from ``min_moves`` to the game's last
    move, replayed from the empty board; positions after a pass are skipped."""
    from harness.config_io import ConfigError
    from harness.data.dataset import open_dataset
    from harness.game.position import Game, IllegalMove
    from harness.rl.openings import replayable_games

    rng = np.random.default_rng(seed)
    with open_dataset(path) as data:
        if data.size != board_size:
            raise ConfigError(f"{path}: {data.size}x{data.size} positions, the search plays "
                              f"{board_size}x{board_size}")
        first, length = replayable_games(data, split, min_moves + 1)
        pick = rng.permutation(len(first))[:count]
        moves = data.file["positions/move"]
        games, played = [], []
        for i in pick:
            k = int(rng.integers(min_moves, length[i]))
            line = moves[first[i]:first[i] + k + 1].astype(np.int64)
            if (line == board_size * board_size).any():
                continue
            game = Game(board_size, komi, rules)
            try:
                for move in line[:-1]:
                    game.play(int(move))
            except IllegalMove:
                continue  # the dataset's rules differ at this point: leave the game out
            games.append(game)
            played.append(int(line[-1]))
    if not games:
        raise ConfigError(f"{path}: no {split} game of more than {min_moves} moves to replay")
    return ReplayedPositions(games, np.asarray(played, np.int64))


@dataclass(frozen=True)
class TargetQuality:
    """Per-position measurements of one search setting (arrays of length N)."""

    prior_hit: np.ndarray  # the prior's argmax is the human move
    target_hit: np.ndarray  # the target's argmax is the human move
    played_hit: np.ndarray  # the search's chosen move is the human move
    prior_ce: np.ndarray  # -log prior(human move)
    target_ce: np.ndarray  # -log target(human move)
    kl: np.ndarray  # KL(target || prior)


def quality(priors: np.ndarray, targets: np.ndarray, chosen: np.ndarray,
            human: np.ndarray) -> TargetQuality:
    """The measurements from (N, moves) priors and targets (any positive
    scale; each row is normalised), the searches' chosen moves and the human
    moves."""
    prior = priors / priors.sum(axis=1, keepdims=True)
    target = targets / targets.sum(axis=1, keepdims=True)
    rows = np.arange(len(human))
    kl = np.where(target > 0, target * (np.log(np.maximum(target, EPSILON))
                                        - np.log(np.maximum(prior, EPSILON))), 0.0).sum(axis=1)
    return TargetQuality(
        prior_hit=(prior.argmax(axis=1) == human).astype(np.float64),
        target_hit=(target.argmax(axis=1) == human).astype(np.float64),
        played_hit=(np.asarray(chosen) == human).astype(np.float64),
        prior_ce=-np.log(np.maximum(prior[rows, human], EPSILON)),
        target_ce=-np.log(np.maximum(target[rows, human], EPSILON)),
        kl=kl)


def search_targets(search, positions: ReplayedPositions,
                   progress: Callable[[int], None] | None = None) -> TargetQuality:
    """Search every position with ``search`` (a BatchedSearch, ``search.games``
    at a time) and measure its targets against the human moves."""
    priors, targets, chosen = [], [], []
    games = positions.games
    for start in range(0, len(games), search.games):
        for result in search.search(games[start:start + search.games]):
            priors.append(result.prior)
            targets.append(result.target())
            chosen.append(result.best_move)
        if progress is not None:
            progress(min(start + search.games, len(games)))
    return quality(np.stack(priors).astype(np.float64), np.stack(targets).astype(np.float64),
                   np.asarray(chosen), positions.moves)


TARGET_COLUMNS = ("setting", "positions", "prior top-1 %", "target top-1 %",
                  "target - prior (points)", "played top-1 %", "prior CE", "target CE",
                  "KL(target || prior)")


def quality_row(setting: str, q: TargetQuality, seed: int = 0) -> list:
    """One row of :data:`TARGET_COLUMNS` with 95% bootstrap intervals (each
    position its own group: one position per game)."""
    ones = np.ones_like(q.prior_hit)

    def interval(values: np.ndarray, scale: float = 1.0, digits: int = 1) -> str:
        e = bootstrap(GroupedMetric(values, ones), seed=seed)
        return (f"{e.value * scale:.{digits}f} [{e.low * scale:.{digits}f}, "
                f"{e.high * scale:.{digits}f}]")

    diff = paired_difference(GroupedMetric(q.target_hit, ones), GroupedMetric(q.prior_hit, ones),
                             seed=seed).estimate
    return [setting, len(ones), interval(q.prior_hit, 100), interval(q.target_hit, 100),
            f"{diff.value * 100:+.1f} [{diff.low * 100:+.1f}, {diff.high * 100:+.1f}]",
            interval(q.played_hit, 100), interval(q.prior_ce, digits=2),
            interval(q.target_ce, digits=2), interval(q.kl, digits=3)]
