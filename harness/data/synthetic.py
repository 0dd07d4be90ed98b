"""Random legal games written as SGF: test and benchmark input when no archive is at hand.

The games are random (uniform over legal non-pass moves) but legal under the
harness rules, with a mix of results (resignation, score, draw, none) so
that value targets and masks get exercised.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.game.result import UNKNOWN, GameResult

_RESULTS = (
    GameResult(BLACK, "resign"),
    GameResult(WHITE, "resign"),
    GameResult(BLACK, "score", 3.5),
    GameResult(WHITE, "score", 0.5),
    GameResult(0, "draw"),
    UNKNOWN,
)


def random_game(rng: np.random.Generator, size: int = 9, moves: int = 40) -> Game:
    game = Game(size, 7.0)
    for _ in range(moves):
        legal = np.flatnonzero(game.legal_moves()[:-1])
        if not len(legal):
            break
        game.play(int(rng.choice(legal)))
    return game


def random_sgf(seed: int, size: int = 9, moves: int = 40, name: str = "") -> str:
    """One random game as SGF text (moves vary by a few per game)."""
    from harness.sgf import to_sgf

    rng = np.random.default_rng(seed)
    game = random_game(rng, size, int(moves + rng.integers(-moves // 4, moves // 4 + 1)))
    result = _RESULTS[int(rng.integers(len(_RESULTS)))]
    return to_sgf(game, result=result, black=f"black{name}{seed}", white=f"white{name}{seed}")


def write_random_sgfs(
    path: str | Path, count: int, *, size: int = 9, moves: int = 40, seed: int = 0
) -> Path:
    """``count`` random games concatenated in one file (Leela Zero style)."""
    path = Path(path)
    text = "".join(random_sgf(seed + i, size, moves) for i in range(count))
    path.write_text(text, encoding="utf-8")
    return path
