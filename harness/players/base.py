"""The one protocol every player speaks, so referees, tournaments and the GTP
engine never care whether a move comes from a network, a tree search, dice or
another program.

A move is an ``int``: a point ``row * size + col``, ``size * size`` for pass,
or :data:`RESIGN`. Players read the whole :class:`~harness.game.position.Game`
at every ``select_move`` so that a stateless player needs nothing else; players
that keep state (external engines, searches reusing their tree) may also
implement ``notify``, ``set_limits`` and ``reseed``, which callers use when
present (see :func:`notify`, :func:`set_limits` and :func:`reseed`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from harness.game.position import Game

RESIGN = -1


@runtime_checkable
class Player(Protocol):
    name: str

    def select_move(self, game: Game) -> int:
        """The move for ``game.to_play`` in ``game`` (never changes ``game``)."""
        ...

    def reset(self, size: int, komi: float, rules: str) -> None:
        """Forget everything about the previous game; a new one starts."""
        ...

    def close(self) -> None:
        """Release processes, files and memory; the player is not used again."""
        ...


def notify(player: Player, game: Game, move: int) -> None:
    """Tell ``player`` that ``move`` was just played in ``game`` (if it listens).

    ``game`` already contains the move. Players that re-read the game at every
    ``select_move`` do not need this; engines and tree reuse use it to follow.
    """
    hook = getattr(player, "notify", None)
    if hook is not None:
        hook(game, move)


def set_limits(
    player: Player, *, move_time: float | None = None, playouts: int | None = None
) -> None:
    """Pass a per-move time (seconds) or playout budget to a player that has one.

    Players without a budget (random, raw policy) ignore it; ``None`` keeps the
    player's own setting.
    """
    hook = getattr(player, "set_limits", None)
    if hook is not None:
        hook(move_time=move_time, playouts=playouts)


def reseed(player: Player, seed: int) -> None:
    """Restart the random choices of a player that makes any (``reseed(seed)``),
    so that a tournament game can be replayed exactly."""
    hook = getattr(player, "reseed", None)
    if hook is not None:
        hook(seed)


class PlayerSpecError(ValueError):
    """A player spec string that cannot be turned into a player."""


class NotAMove(ValueError):
    """A player's answer that names no point (``Z99``, off the board, garbage).

    The referee treats it like a move the rules forbid: a rated forfeit loss,
    not an error game (see :mod:`harness.arena.referee`).
    """


class SearchBudget:
    """``reseed`` and ``set_limits`` for players that search (MCTS, UCT).

    Both keep a seeded generator in ``_rng`` and a budget in ``playouts`` /
    ``move_time``; ``None`` leaves a setting as it is.
    """

    playouts: int | None
    move_time: float | None

    def reseed(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def set_limits(self, *, move_time: float | None = None, playouts: int | None = None) -> None:
        if move_time is not None:
            self.move_time = move_time
        if playouts is not None:
            self.playouts = playouts
