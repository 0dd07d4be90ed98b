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

A Gumbel root is also measured with its visit counts as the target: they
follow sequential halving's schedule (at 16 simulations over 16 sampled
moves, one visit each), the extreme case of the exploration visits that
KataGo's policy target pruning removes from a PUCT target. The completed-Q
target never reads visit counts, so that row shows what it avoids.
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

    prior_hit: np.ndarray  # the prior's argmax is the human move (1/k among k tied)
    target_hit: np.ndarray  # the target's argmax is the human move (1/k among k tied)
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
        prior_hit=_top1(prior, human),
        target_hit=_top1(target, human),
        played_hit=(np.asarray(chosen) == human).astype(np.float64),
        prior_ce=-np.log(np.maximum(prior[rows, human], EPSILON)),
        target_ce=-np.log(np.maximum(target[rows, human], EPSILON)),
        kl=kl)


def _top1(dist: np.ndarray, human: np.ndarray) -> np.ndarray:
    """1 where the human move alone has the most mass, 1/k where it is one of
    k moves tied for the most (a random tie-break's expected hit), else 0."""
    best = dist.max(axis=1, keepdims=True)
    tied = dist >= best
    return tied[np.arange(len(human)), human] / tied.sum(axis=1)


def search_targets(search, positions: ReplayedPositions,
                   progress: Callable[[int], None] | None = None) -> dict[str, TargetQuality]:
    """Search every position with ``search`` (a BatchedSearch, ``search.games``
    at a time) and measure its targets against the human moves: ``"target"``,
    and for a Gumbel root also ``"visits"`` (its visit counts as the target)."""
    priors, targets, visits, chosen = [], [], [], []
    gumbel = False
    games = positions.games
    for start in range(0, len(games), search.games):
        for result in search.search(games[start:start + search.games]):
            priors.append(result.prior)
            targets.append(result.target())
            visits.append(result.visits)
            chosen.append(result.best_move)
            gumbel = result.improved_policy is not None
        if progress is not None:
            progress(min(start + search.games, len(games)))
    prior, chosen = np.stack(priors).astype(np.float64), np.asarray(chosen)
    measured = {"target": quality(prior, np.stack(targets).astype(np.float64), chosen,
                                  positions.moves)}
    if gumbel:
        measured["visits"] = quality(prior, np.stack(visits).astype(np.float64), chosen,
                                     positions.moves)
    return measured


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
