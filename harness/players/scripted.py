"""A player that plays a fixed list of moves: replays of recorded games and test scripts.

Each call returns the next move of the script for its colour (``moves`` holds
the moves of that player only, in order); when the script runs out it passes.
Resignation is written as :data:`~harness.players.base.RESIGN`.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.game.position import Game


class ScriptedPlayer:
    def __init__(self, moves: Sequence[int], name: str = "scripted"):
        self.name = name
        self.moves = list(moves)
        self._next = 0

    def reset(self, size: int, komi: float, rules: str) -> None:
        self._next = 0

    def select_move(self, game: Game) -> int:
        if self._next >= len(self.moves):
            return game.pass_move
        move = self.moves[self._next]
        self._next += 1
        return move

    def close(self) -> None:
        pass
