"""Game results in every form real records use, and back to SGF ``RE``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from harness.game.geometry import BLACK, WHITE

# How a game ended. ``unknown`` covers a missing or unreadable RE.
KINDS = ("score", "resign", "time", "forfeit", "draw", "void", "unknown")

_RESULT = re.compile(r"^\s*([BW])\s*\+\s*(.*?)\s*$", re.IGNORECASE)
_WORDS = {
    "r": "resign",
    "res": "resign",
    "resign": "resign",
    "resignation": "resign",
    "t": "time",
    "time": "time",
    "f": "forfeit",
    "forfeit": "forfeit",
}


@dataclass(frozen=True)
class GameResult:
    winner: int  # BLACK, WHITE or 0 (draw, void, unknown)
    kind: str
    margin: float | None = None  # points, for kind == "score"

    @property
    def known(self) -> bool:
        """Whether the result says who won (or that nobody did: a draw)."""
        return self.kind not in ("void", "unknown")

    def value_for(self, color: int) -> float:
        """+1 if ``color`` won, -1 if it lost, 0 for draws and unknowns."""
        if self.winner == 0:
            return 0.0
        return 1.0 if self.winner == color else -1.0

    def to_sgf(self) -> str:
        if self.kind == "draw":
            return "0"
        if self.kind == "void":
            return "Void"
        if self.kind == "unknown":
            return "?"
        letter = "B" if self.winner == BLACK else "W"
        if self.kind == "score":
            # SGF allows the score to be omitted ("B+"); writing 0 would read
            # back as a draw (a NoGo win has no margin, for example).
            return f"{letter}+" if self.margin is None else f"{letter}+{self.margin:g}"
        return f"{letter}+{ {'resign': 'R', 'time': 'T', 'forfeit': 'F'}[self.kind] }"


UNKNOWN = GameResult(0, "unknown")


def parse_result(text: str | None) -> GameResult:
    """Read an SGF ``RE`` value; anything unreadable is ``unknown``, never an error."""
    if text is None:
        return UNKNOWN
    value = text.strip()
    if not value or value == "?":
        return UNKNOWN
    low = value.lower()
    if low in ("0", "draw", "jigo", "d", "=") or low.startswith("draw"):
        return GameResult(0, "draw")
    if low.startswith("void"):
        return GameResult(0, "void")
    match = _RESULT.match(value)
    if not match:
        return UNKNOWN
    winner = BLACK if match.group(1).upper() == "B" else WHITE
    rest = match.group(2).strip().lower()
    if not rest:
        return GameResult(winner, "score", None)  # "B+" : won, margin not given
    if rest in _WORDS:
        return GameResult(winner, _WORDS[rest])
    try:
        margin = float(rest)
    except ValueError:
        return GameResult(winner, "score", None)  # winner clear, margin unreadable
    if not math.isfinite(margin):  # "B+nan", "B+inf", "B+1e309": unreadable too
        return GameResult(winner, "score", None)
    if margin == 0:
        return GameResult(0, "draw")
    return GameResult(winner, "score", abs(margin))


def result_from_score(black_minus_white: float) -> GameResult:
    """Result of a counted game, margin including komi."""
    if black_minus_white > 0:
        return GameResult(BLACK, "score", black_minus_white)
    if black_minus_white < 0:
        return GameResult(WHITE, "score", -black_minus_white)
    return GameResult(0, "draw")
