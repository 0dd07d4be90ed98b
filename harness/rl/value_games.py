"""Positions for a value network, one per game, built as AlphaGo built them.

Silver et al. 2016 (Methods, "Reinforcement learning of value networks"):
for each game draw ``U`` uniformly from ``1..U_max``; the supervised policy
plays moves ``1 .. U - 1`` for both sides, move ``U`` is uniformly random,
and the RL policy plays both sides from there to the end; only the position
after move ``U`` is kept, labelled with the final outcome for its side to
move. One position per game, because successive positions of one game
differ by a stone and share one label: a value network trained on all of
them memorised games (0.19 train against 0.37 test MSE on KGS).

All games of a batch advance together on one :class:`harness.game.board.Boards`
(:mod:`harness.rl.pg_games`' kernels), one forward pass per network and ply.
A game that ends before move ``U`` gives no position (counted).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from harness.game import board as K
from harness.rl.pg_games import RawGames, sample_rows, uniform_rows


@dataclass
class ValuePositions:
    """``history`` (N, T, P) int8 stones, oldest first, ``to_play`` (N,),
    ``outcome`` (N,) +1/-1/0 for the side to move, ``u`` (N,) the random
    move's number, ``game`` (N,) the game each came from; of the
    ``games_played``, ``ended_early`` gave none."""

    history: np.ndarray
    to_play: np.ndarray
    outcome: np.ndarray
    u: np.ndarray
    game: np.ndarray
    ended_early: int = 0
    evaluations: int = 0
    games_played: int = 0


def value_positions(sl, rl, games: int, *, size: int, komi: float, rules: str, history: int,
                    rng: np.random.Generator, u_max: int = 0, parallel: int = 256,
                    max_moves: int = 0, first_game: int = 0, play_seconds: float = 0.0,
                    progress: Callable[[ValuePositions], None] | None = None,
                    ) -> ValuePositions:
    """``games`` games of AlphaGo's construction, ``parallel`` at once; ``sl``
    and ``rl`` are evaluators (softmax at temperature 1, both sampled).

    With ``play_seconds`` no new wave starts once that much time has passed,
    so a budgeted run keeps whole waves (``games_played`` says how many);
    ``progress`` sees the positions so far after each wave."""
    parts: list[ValuePositions] = []
    start = time.monotonic()
    for first in range(0, games, parallel):
        if play_seconds and parts and time.monotonic() - start >= play_seconds:
            break
        count = min(parallel, games - first)
        parts.append(_wave(sl, rl, count, first_game + first, size=size, komi=komi,
                           rules=rules, history=history, rng=rng,
                           u_max=u_max or size * size, max_moves=max_moves))
        if progress is not None:
            progress(_joined(parts))
    return _joined(parts)


def _joined(parts: list[ValuePositions]) -> ValuePositions:
    return ValuePositions(
        history=np.concatenate([p.history for p in parts]),
        to_play=np.concatenate([p.to_play for p in parts]),
        outcome=np.concatenate([p.outcome for p in parts]),
        u=np.concatenate([p.u for p in parts]),
        game=np.concatenate([p.game for p in parts]),
        ended_early=sum(p.ended_early for p in parts),
        evaluations=sum(p.evaluations for p in parts),
        games_played=sum(p.games_played for p in parts))


def _wave(sl, rl, n, first, *, size, komi, rules, history, rng, u_max, max_moves):
    wave = RawGames(n, size=size, rules=rules, history=history, max_moves=max_moves)
    u = rng.integers(1, u_max + 1, n)
    kept_history = np.zeros((n, history, wave.points), np.int8)
    kept_to_play = np.zeros(n, np.int8)
    kept = np.zeros(n, np.bool_)
    evaluations = 0
    while wave.active.size:
        active, hist = wave.active, wave.hist
        candidates, to_play = wave.candidates(komi)
        chosen = np.empty(active.size, np.int64)
        move_number = wave.ply + 1
        for net, rows in ((sl, np.flatnonzero(move_number < u[active])),
                          (rl, np.flatnonzero(move_number > u[active]))):
            if rows.size:
                policy, _ = net.evaluate(hist[active[rows]], to_play[rows], candidates[rows])
                evaluations += rows.size
                chosen[rows] = sample_rows(policy, 1.0, rng)
        random = np.flatnonzero(move_number == u[active])
        if random.size:
            chosen[random] = uniform_rows(candidates[random], rng)
        wave.play(chosen)
        just = active[random]  # the position after the random move is the one kept
        kept_history[just] = hist[just]
        kept_to_play[just] = wave.boards.meta[just, K.TO_PLAY]
        kept[just] = True
        wave.retire()
    margin = wave.margins(komi)
    winner = np.where(margin > 0, 1, np.where(margin < 0, 2, 0))
    outcome = np.where(winner == 0, 0.0, np.where(winner == kept_to_play, 1.0, -1.0))
    return ValuePositions(history=kept_history[kept], to_play=kept_to_play[kept],
                          outcome=outcome[kept].astype(np.float32), u=u[kept].astype(np.int32),
                          game=(first + np.arange(n))[kept].astype(np.int32),
                          ended_early=int((~kept).sum()), evaluations=evaluations,
                          games_played=n)
