"""The settings every game is played under, stated once for every stage.

Tournaments, datagen, self-play and the suite all play games; each used to
declare its own board size, komi and rules, and their defaults had drifted
(komi 7.0 in some, 7.5 in the rules engine). Their configs inherit this
class instead, so a TOML file keeps the keys at its top level and the
defaults are these.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.config_io import setting
from harness.game.position import DEFAULT_KOMI, RULE_NAMES


@dataclass(frozen=True)
class GameSettings:
    board_size: int = setting(9, "board size (points on a side)")
    komi: float = setting(DEFAULT_KOMI, "komi: points given to White")
    rules: str = setting("superko", f"rules: {', '.join(RULE_NAMES)}")

    def __post_init__(self) -> None:
        if self.rules not in RULE_NAMES:
            raise ValueError(f"rules {self.rules!r} unknown (one of: {', '.join(RULE_NAMES)})")
        getattr(super(), "__post_init__", lambda: None)()  # the next settings base, if any
