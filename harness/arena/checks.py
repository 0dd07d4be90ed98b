"""Refuse game settings and player specs that cannot give a single rated game, up front.

A tournament or a datagen run given a board the rules kernel does not play,
or a player that does not exist, used to play every game as an error and
still write empty ranking tables with exit 0. These checks run in the parent
before anything is written; each failure is a one-line :class:`ValueError`
naming the setting. They never load a network or start an engine: a spec is
checked as far as that can be done cheaply (its kind and arguments, that a
model file or a program exists).
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterable
from pathlib import Path

from harness.game.geometry import MAX_SIZE, MIN_SIZE
from harness.game.position import RULE_NAMES

ENGINE_KINDS = ("gnugo", "gtp")
NETWORK_KINDS = ("policy", "mcts")
BUILT_KINDS = ("random", "uct")  # cheap enough to build in the parent and drop


def check_game_settings(config) -> None:
    """The settings every game of ``config`` (tournament or datagen) is played with."""
    if not MIN_SIZE <= config.board_size <= MAX_SIZE:
        raise ValueError(
            f"board_size {config.board_size} unsupported (must be {MIN_SIZE}..{MAX_SIZE})"
        )
    if not math.isfinite(config.komi):
        raise ValueError(f"komi must be a finite number, got {config.komi}")
    if config.rules not in RULE_NAMES:
        raise ValueError(f"rules {config.rules!r} unknown (one of: {', '.join(RULE_NAMES)})")
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


def check_player_specs(specs: Iterable[str]) -> None:
    """Each spec names a player that can exist (see the module docstring for how far)."""
    from harness.players.spec import (
        FORMS,
        _command_line,
        _int_in,
        _path_at,
        _split_options,
        make_player,
    )

    for spec in specs:
        kind, _, rest = spec.strip().partition(":")
        kind = kind.strip().lower()
        rest, _options = _split_options(spec, rest)
        if kind in BUILT_KINDS:
            make_player(spec)  # raises PlayerSpecError (a ValueError) with the reason
        elif kind in NETWORK_KINDS:
            _path_at(spec, rest, "value")
        elif kind == "gnugo":
            _int_in(spec, rest or "10", "level", 0, 10)
            from harness.gtp.client import find_gnugo

            if find_gnugo() is None:
                raise ValueError(f"bad player spec {spec!r}: GNU Go not found")
        elif kind == "gtp":
            program = _command_line(spec, rest)[0]
            if shutil.which(program) is None and not Path(program).is_file():
                raise ValueError(f"bad player spec {spec!r}: program {program!r} not found")
        else:
            raise ValueError(f"unknown player {spec!r} (expected one of: {FORMS})")
