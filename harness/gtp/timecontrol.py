"""The clock a GTP controller describes, and the seconds it leaves for a move.

GTP's ``time_settings MAIN BYO STONES`` is Canadian overtime (byo-yomi time
> 0 with 0 stones means no limit); KGS adds ``kgs-time_settings KIND ...``
with ``none``, ``absolute``, ``canadian`` and Japanese ``byoyomi``, where
``time_left`` then reports periods left instead of stones (the KGS
convention KataGo documents). :func:`parse_kgs_time_settings` maps all of
them onto one :class:`TimeControl`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

KINDS = ("none", "absolute", "canadian", "byoyomi")


class TimeSettingsError(ValueError):
    """Time settings that no clock can have (negative, NaN, unknown kind)."""


def non_negative_number(text: str, what: str,
                        error: type[ValueError] = TimeSettingsError) -> float:
    """A finite, non-negative number; ``error`` names the argument otherwise."""
    try:
        value = float(text)
    except ValueError:
        raise error(f"syntax error: {what} not a number") from None
    if not math.isfinite(value) or value < 0:
        raise error(f"syntax error: {what} must be a non-negative number")
    return value


def seconds(text: str, what: str) -> float:
    """A finite, non-negative number of seconds."""
    return non_negative_number(text, what)


def count(text: str, what: str) -> int:
    """A non-negative integer (stones or periods)."""
    try:
        value = int(text)
    except ValueError:
        raise TimeSettingsError(f"syntax error: {what} not an integer") from None
    if value < 0:
        raise TimeSettingsError(f"syntax error: {what} must not be negative")
    return value


@dataclass(frozen=True)
class TimeControl:
    """What the controller told us about the clock (``time_settings``/``time_left``)."""

    main_time: float = 0.0
    byo_yomi_time: float = 0.0
    byo_yomi_stones: int = 0  # stones per Canadian period; periods under byoyomi
    kind: str = "canadian"  # "none", "absolute", "canadian" or "byoyomi"
    left: tuple[tuple[int, float, int], ...] = ()  # (colour, seconds, stones or periods)

    @property
    def unlimited(self) -> bool:
        # GTP: byo-yomi time > 0 with 0 stones means no time limit.
        if self.kind == "none":
            return True
        return self.kind == "canadian" and self.byo_yomi_time > 0 and self.byo_yomi_stones == 0

    def with_time_left(self, color: int, secs: float, stones: int) -> TimeControl:
        kept = tuple(entry for entry in self.left if entry[0] != color)
        return replace(self, left=(*kept, (color, secs, stones)))

    def move_budget(self, color: int, moves_played: int, points: int) -> float | None:
        """Seconds to spend on the next move, or None when the clock is no concern."""
        if self.unlimited or (self.main_time == 0 and self.byo_yomi_time == 0 and not self.left):
            return None
        left = {c: (s, n) for c, s, n in self.left}
        secs, stones = left.get(color, (self.main_time, 0))
        if stones > 0 and self.kind == "byoyomi":
            budget = secs  # a Japanese period is for one move; n counts periods
        elif stones > 0:  # in Canadian byo-yomi: share the period over its stones
            budget = secs / stones
        else:
            # Main time: spread over the moves we still expect to play, keeping
            # the first byo-yomi period untouched as a safety net.
            expected = max(points // 2 - moves_played // 2, 10)
            budget = secs / expected
            if self.kind == "byoyomi":
                budget += self.byo_yomi_time
            elif self.byo_yomi_stones > 0:
                budget += self.byo_yomi_time / self.byo_yomi_stones
        return max(0.05, 0.8 * budget)


def parse_time_settings(args: list[str]) -> TimeControl:
    """GTP ``time_settings MAIN BYO STONES``."""
    if len(args) < 3:
        raise TimeSettingsError("syntax error: expected 3 arguments")
    return TimeControl(
        main_time=seconds(args[0], "main time"),
        byo_yomi_time=seconds(args[1], "byo-yomi time"),
        byo_yomi_stones=count(args[2], "byo-yomi stones"),
    )


def parse_kgs_time_settings(args: list[str]) -> TimeControl:
    """``kgs-time_settings none | absolute MAIN | canadian MAIN BYO STONES |
    byoyomi MAIN BYO PERIODS``."""
    if not args:
        raise TimeSettingsError("syntax error: expected a time system")
    kind, rest = args[0].lower(), args[1:]
    wanted = {"none": 0, "absolute": 1, "canadian": 3, "byoyomi": 3}.get(kind)
    if wanted is None:
        raise TimeSettingsError(f"syntax error: time system must be one of {', '.join(KINDS)}")
    if len(rest) < wanted:
        raise TimeSettingsError(f"syntax error: {kind} needs {wanted} arguments")
    if kind == "none":
        return TimeControl(kind="none")
    if kind == "absolute":
        return TimeControl(main_time=seconds(rest[0], "main time"), kind="absolute")
    return TimeControl(
        main_time=seconds(rest[0], "main time"),
        byo_yomi_time=seconds(rest[1], "byo-yomi time"),
        byo_yomi_stones=count(rest[2], "byo-yomi stones" if kind == "canadian" else "periods"),
        kind=kind,
    )
