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
from pathlib import Path

import numpy as np

from harness.files import atomic_path
from harness.game import board as K
from harness.rl.pg_games import RawGames, sample_rows, uniform_rows


@dataclass
class ValuePositions:
    """``history`` (N, T, P) int8 stones, oldest first, ``to_play`` (N,),
    ``outcome`` (N,) +1/-1/0 for the side to move, ``u`` (N,) the random
    move's number, ``game`` (N,) the game each came from; of the
    ``games_played``, ``ended_early`` gave none; ``seconds`` of play."""

    history: np.ndarray
    to_play: np.ndarray
    outcome: np.ndarray
    u: np.ndarray
    game: np.ndarray
    ended_early: int = 0
    evaluations: int = 0
    games_played: int = 0
    seconds: float = 0.0


ARRAYS = ("history", "to_play", "outcome", "u", "game")
COUNTS = ("ended_early", "evaluations", "games_played", "seconds")


def save_positions(path: Path, positions: ValuePositions) -> None:
    """``positions`` as one compressed ``.npz``, written atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.savez_compressed(f, **{k: getattr(positions, k) for k in ARRAYS + COUNTS})


def load_positions(path: Path) -> ValuePositions:
    with np.load(path, allow_pickle=False) as saved:
        return ValuePositions(**{k: saved[k] for k in ARRAYS},
                              **{k: saved[k].item() for k in COUNTS})


def value_positions(sl, rl, games: int, *, size: int, komi: float, rules: str, history: int,
                    seed: int, u_max: int = 0, parallel: int = 256, max_moves: int = 0,
                    play_seconds: float = 0.0, waves_dir: Path | None = None,
                    progress: Callable[[ValuePositions], None] | None = None,
                    ) -> ValuePositions:
    """``games`` games of AlphaGo's construction in waves of ``parallel``;
    ``sl`` and ``rl`` are evaluators (softmax at temperature 1, both sampled).

    Wave ``w`` plays games ``w * parallel ..`` from its own seed
    ``(seed, w)``, so with ``waves_dir`` each finished wave is saved there and
    a rerun after a kill loads the saved waves and plays only the rest, the
    games it would have played. With ``play_seconds`` no new wave starts once
    that much play (saved waves' included) is spent, so a budgeted run keeps
    whole waves (``games_played`` says how many); ``progress`` sees the
    positions so far after each wave."""
    parts: list[ValuePositions] = []
    for wave, first in enumerate(range(0, games, parallel)):
        path = waves_dir / f"wave-{wave:04d}.npz" if waves_dir is not None else None
        if path is not None and path.is_file():
            parts.append(load_positions(path))
            continue
        if play_seconds and sum(p.seconds for p in parts) >= play_seconds:
            break
        began = time.monotonic()
        part = _wave(sl, rl, min(parallel, games - first), first, size=size, komi=komi,
                     rules=rules, history=history, rng=np.random.default_rng([seed, wave]),
                     u_max=u_max or size * size, max_moves=max_moves)
        part.seconds = time.monotonic() - began
        if path is not None:
            save_positions(path, part)
        parts.append(part)
        if progress is not None:
            progress(_joined(parts))
    return _joined(parts)


def _joined(parts: list[ValuePositions]) -> ValuePositions:
    return ValuePositions(**{k: np.concatenate([getattr(p, k) for p in parts]) for k in ARRAYS},
                          **{k: sum(getattr(p, k) for p in parts) for k in COUNTS})


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
