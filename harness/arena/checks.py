"""Refuse game settings and player specs that cannot give a single rated game, up front.

A tournament or a datagen run given a board the rules kernel does not play,
or a player that does not exist, used to play every game as an error and
still write empty ranking tables with exit 0. These checks run in the parent
before anything is written; each failure is a one-line :class:`ValueError`
naming the setting. They never load a network or start an engine: a spec's
kind and arguments were checked when its text was parsed
(:func:`harness.players.spec.parse_player`); here only what exists outside
it is, cheaply (that a model file or a program is there).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from harness.game.geometry import MAX_SIZE, MIN_SIZE
from harness.players.spec import PlayerSpec, check_available


def check_game_settings(config) -> None:
    """The settings every game of ``config`` (tournament or datagen) is played with."""
    if not MIN_SIZE <= config.board_size <= MAX_SIZE:
        raise ValueError(
            f"board_size {config.board_size} unsupported (must be {MIN_SIZE}..{MAX_SIZE})"
        )
    if not math.isfinite(config.komi):
        raise ValueError(f"komi must be a finite number, got {config.komi}")
    _at_least("opening_moves", config.opening_moves, 0)
    _at_least("max_moves", config.max_moves, 1)
    _at_least("playouts", config.playouts, 1)
    _at_least("parallel", config.parallel, 1)
    move_time = config.move_time
    if move_time is not None and not (math.isfinite(move_time) and move_time > 0):
        raise ValueError(f"move_time must be a positive number of seconds, got {move_time}")


def _at_least(name: str, value: int | None, low: int) -> None:
    if value is not None and value < low:
        raise ValueError(f"{name} must be at least {low}, got {value}")


def check_player_specs(specs: Iterable[PlayerSpec]) -> None:
    """Each spec's model file or program exists (the text was checked when parsed)."""
    for spec in specs:
        check_available(spec)
