"""Positions to measure and check encoders on: real games when present, else playouts.

Speed and correctness figures mean most on the positions networks will see,
so benchmarks and cross-checks replay real game records (through
:mod:`harness.sgf`) when the development data is there, and fall back to
random playouts (legal, but shapeless) when it is not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from harness.devdata import dev_sgf_dir
from harness.game import board as K
from harness.game.geometry import EMPTY, geometry

DEV_SGF = dev_sgf_dir()


PER_GAME = 32


def windows(rows: np.ndarray, length: int) -> np.ndarray:
    """``(n, length, P)``: each row with the ``length - 1`` rows before it, empty before row 0."""
    pad = np.full((length - 1, rows.shape[1]), EMPTY, rows.dtype)
    return sliding_window_view(np.concatenate([pad, rows]), (length, rows.shape[1]))[:, 0]


def real_game_positions(
    size: int, count: int, history: int, seed: int = 0, root: Path | None = None
) -> tuple[np.ndarray, np.ndarray] | None:
    """``count`` positions (before a move, mover to play) from games under ``root``.

    Games are taken in a seeded random order, at most ``PER_GAME`` positions
    from each so that a sample spans many games; None when there are none.
    """
    root = DEV_SGF if root is None else root
    if not root.is_dir():
        return None
    try:
        from harness.sgf import ReplayError, iter_records, replay_positions
    except ImportError:  # the SGF stage is not installed: no real games to offer
        return None

    files = sorted(p for p in root.rglob("*") if p.is_file())
    rng = np.random.default_rng(seed)
    rng.shuffle(files)
    chunks, to_play, total = [], [], 0
    for record in iter_records(files):
        if total >= count:
            break
        if record.reject is not None or record.size != size or not record.moves:
            continue
        try:
            rows = replay_positions(record)
        except ReplayError:
            continue
        colors = np.array([color for color, _ in record.moves], np.int8)
        keep = np.sort(rng.permutation(len(colors))[:PER_GAME])
        chunks.append(windows(rows[:-1], history)[keep])
        to_play.append(colors[keep])
        total += len(keep)
    if not chunks:
        return None
    hist, colors = np.concatenate(chunks), np.concatenate(to_play)
    pick = rng.permutation(len(colors))[:count]
    return np.ascontiguousarray(hist[pick]), colors[pick]


def playout_positions(
    size: int, count: int, history: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` positions from uniformly random games (no eye filling), any stage."""
    geo = geometry(size)
    boards = K.new_boards(1, size, K.SIMPLE_KO)
    K.seed_rng(seed)
    scratch = np.empty(size * size, np.int32)
    chunks, to_play, total = [], [], 0
    while total < count:
        K.reset(boards, 0, size, K.SIMPLE_KO)
        game_history = [boards.stones[0].copy()]
        colors = []
        while boards.meta[0, K.PASSES] < 2 and len(colors) < 3 * size * size:
            colors.append(int(boards.meta[0, K.TO_PLAY]))
            move = K.random_move(boards, 0, geo.neighbours, geo.diagonals, geo.zobrist, scratch)
            K.play(boards, 0, move, geo.neighbours, geo.zobrist)
            game_history.append(boards.stones[0].copy())
        chunks.append(windows(np.stack(game_history[:-1]), history))
        to_play.append(np.array(colors, np.int8))
        total += len(colors)
    hist, colors = np.concatenate(chunks), np.concatenate(to_play)
    pick = np.random.default_rng(seed).permutation(len(colors))[:count]
    return hist[pick], colors[pick]


def sample_positions(
    size: int, count: int, history: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, str]:
    """Real-game positions when the development data is there, else playouts; and which."""
    real = real_game_positions(size, count, history, seed)
    if real is not None:
        return real[0], real[1], "real games"
    hist, to_play = playout_positions(size, count, history, seed)
    return hist, to_play, "random playouts"
