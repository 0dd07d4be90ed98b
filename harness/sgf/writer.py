"""SGF out: FF[4], UTF-8, readable by Sabaki, GoGui and the reader here.

Passes are written as empty values (``B[]``), the FF[4] form every viewer
reads; text is escaped (``\\`` and ``]``). The rules of a ``Game`` are named
in KataGo's rules syntax, which says exactly what the harness plays (area
scoring, no suicide, the ko rule) where a national name would not.
Files are written atomically, through :func:`harness.files.atomic_write`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from harness import __version__
from harness.files import atomic_write
from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.game.result import GameResult
from harness.sgf.record import GameRecord, SetupEvent

RULES_TEXT = {
    "superko": "koPOSITIONALscoreAREAsui0",
    "simple-ko": "koSIMPLEscoreAREAsui0",
    "nogo": "NoGo",
}
MOVES_PER_LINE = 10
# Root properties the writer sets itself; copies kept from a read record are dropped.
WRITER_OWNS = frozenset("FF GM CA AP SZ KM RU PB PW BR WR DT HA RE AB AW AE".split())  # noqa: SIM905


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def point_text(point: int, size: int) -> str:
    if point == size * size:
        return ""
    row, col = divmod(point, size)
    return chr(97 + col) + chr(97 + row)


def _points(tag: str, points, size: int) -> str:
    if not len(points):
        return ""
    return tag + "".join(f"[{point_text(int(p), size)}]" for p in sorted(points))


def _setup_text(event: SetupEvent, size: int) -> str:
    return (
        _points("AB", event.black, size)
        + _points("AW", event.white, size)
        + _points("AE", event.empty, size)
    )


def to_sgf(
    source: GameRecord | Game,
    *,
    result: GameResult | None = None,
    black: str | None = None,
    white: str | None = None,
    date: str | None = None,
    rules: str | None = None,
    comments: Mapping[int, str] | None = None,
    properties: Mapping[str, str] | None = None,
) -> str:
    """SGF text of a record or a game; keyword arguments override what it holds.

    ``comments`` maps a move index (from 0) to the comment written after it;
    ``properties`` adds root properties (``GN``, ``EV``, ``C``...).
    """
    record = record_of_game(source) if isinstance(source, Game) else source
    size = record.size
    result = record.result if result is None else result
    comments = record.comments if comments is None else comments
    root = [f"FF[4]GM[1]CA[UTF-8]AP[go-harness:{__version__}]SZ[{size}]KM[{record.komi:g}]"]
    info = {
        "RU": rules if rules is not None else record.rules,
        "PB": black if black is not None else record.black,
        "PW": white if white is not None else record.white,
        "BR": record.black_rank,
        "WR": record.white_rank,
        "DT": date if date is not None else record.date,
        "HA": str(record.handicap) if record.handicap else "",
        "RE": result.to_sgf() if result.kind != "unknown" else "",
    }
    extra = {k: v for k, v in record.properties.items() if k not in WRITER_OWNS}
    extra.update(properties or {})
    for key, value in list(info.items()) + sorted(extra.items()):
        if value:
            root.append(f"{key}[{escape(value)}]")
    root.append(
        _setup_text(SetupEvent(0, record.setup_black, record.setup_white, record.setup_empty), size)
    )
    parts = ["(;" + "".join(root)]
    events = {e.before_move: e for e in record.setup_events}
    for i, (color, point) in enumerate(record.moves):
        if i in events:
            parts.append("\n;" + _setup_text(events[i], size))
        sep = "\n" if i % MOVES_PER_LINE == 0 else ""
        node = f"{sep};{'B' if color == BLACK else 'W'}[{point_text(point, size)}]"
        if i in comments:
            node += f"C[{escape(comments[i])}]"
        parts.append(node)
    if len(record.moves) in events:
        parts.append("\n;" + _setup_text(events[len(record.moves)], size))
    parts.append(")\n")
    return "".join(parts)


def record_of_game(game: Game) -> GameRecord:
    """A record holding what a ``Game`` knows: size, komi, rules, setup, moves, result."""
    record = GameRecord("<game>", 0, size=game.size, komi=game.komi)
    record.rules = RULES_TEXT.get(game.rules, game.rules)
    record.moves = [(int(c), int(p)) for c, p in game.moves]
    # The position before the first move is the setup (the history keeps the
    # stones after the setup and after each move, oldest first).
    start = game.history[len(game.history) - len(game.moves) - 1]
    record.setup_black = [int(p) for p in (start == BLACK).nonzero()[0]]
    record.setup_white = [int(p) for p in (start == WHITE).nonzero()[0]]
    if game.is_over:  # two passes, a resignation, or no NoGo move left
        record.result = game.result()
    return record


def write_sgf(source: GameRecord | Game, path: str | os.PathLike, **overrides) -> Path:
    """Write ``to_sgf(source, **overrides)`` to ``path`` atomically; returns the path."""
    return atomic_write(path, to_sgf(source, **overrides))
