"""The compiled kernel against sgfmill's ``Board``, a third implementation.

Reference: ``sgfmill.boards.Board`` (pure Python; test-only dependency). Its
``play`` captures but enforces no ko and allows suicide, so it checks the
kernel's boards, captures and simple-ko point (sgfmill returns the point a
simple ko forbids) along random games, and its ``area_score`` the kernel's
Tromp-Taylor count at the end. Legality itself is checked against the
flood-fill reference and GNU Go (``test_reference_floodfill.py``,
``test_reference_gnugo.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.game import board as K
from harness.game.geometry import BLACK, WHITE, geometry

sgfmill_boards = pytest.importorskip("sgfmill.boards", reason="sgfmill (test extra) not installed")

COLOUR = {BLACK: "b", WHITE: "w"}
STONE = {None: 0, "b": BLACK, "w": WHITE}


def sgfmill_stones(board, size: int) -> np.ndarray:
    """Kernel layout (row 0 at the top) of an sgfmill board (row 0 at the bottom)."""
    return np.array(
        [STONE[board.get(size - 1 - r, c)] for r in range(size) for c in range(size)], np.int8
    )


def replay_into_sgfmill(size: int, seed: int) -> int:
    """One random kernel playout replayed into sgfmill; returns the moves compared."""
    geo = geometry(size)
    nbr, diag, zob = geo.neighbours, geo.diagonals, geo.zobrist
    boards = K.new_boards(1, size, K.SIMPLE_KO)
    reference = sgfmill_boards.Board(size)
    scratch = np.empty(size * size, np.int32)
    K.seed_rng(seed)
    moves = 0
    while boards.meta[0, K.PASSES] < 2 and moves < 3 * size * size:
        color = int(boards.meta[0, K.TO_PLAY])
        p = K.random_move(boards, 0, nbr, diag, zob, scratch)
        before = int((boards.stones[0] == 3 - color).sum())
        taken = K.play(boards, 0, p, nbr, zob)
        moves += 1
        if p == size * size:
            continue
        r, c = divmod(p, size)
        ko = reference.play(size - 1 - r, c, COLOUR[color])
        where = f"{size}x{size} seed {seed} move {moves}"
        assert np.array_equal(boards.stones[0], sgfmill_stones(reference, size)), where
        assert taken == before - int((boards.stones[0] == 3 - color).sum()), where
        expected_ko = -1 if ko is None else (size - 1 - ko[0]) * size + ko[1]
        assert boards.meta[0, K.KO] == expected_ko, where
    owner = np.zeros(size * size, np.int32)
    assert K.area_score(boards, 0, nbr, owner) == reference.area_score()
    return moves


@pytest.mark.parametrize(("size", "games"), [(9, 60), (13, 6), (19, 3)])
def test_kernel_agrees_with_sgfmill(size, games):
    assert sum(replay_into_sgfmill(size, seed) for seed in range(games)) > games * size * size
