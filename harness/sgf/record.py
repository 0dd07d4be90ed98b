"""One game as read from an archive: ``GameRecord``, and SGF main lines -> records.

Conventions (also what the writer produces):

- Points are ``row * size + col`` with row 0 at the top (SGF row ``a``);
  pass is ``size * size``. An empty value is a pass, and so is ``tt`` on
  boards up to 19x19 (FF[3] style, Leela Zero).
- Komi (``KM``), see :func:`normalise_komi`: some servers (Fox) store it
  multiplied by 100 (``KM[650]`` is 6.5); a value of 100 or more in size is
  read that way. A komi with a quarter point (``3.75`` from ``KM[375]`` under
  Chinese rules) is a count in stones (zi), as Chinese rules state it, and is
  doubled to points: 3.75 stones is the usual 7.5 points. Without ``KM`` a
  root ``KO`` (an old spelling) is read the same way; missing komi is 0. A komi
  that is not a finite number of at most ``size*size`` points (``KM[nan]``,
  ``KM[inf]``, ``KM[1e309]``) rejects the game.
- Handicap (``HA``): an integer from 0 to ``size*size``. A value with a
  fraction is a komi written in the wrong property (``HA[7.5]``, The 1st World
  AI Go Open 2017): handicap 0, and the value is the komi unless ``KM``/``KO``
  gave a non-zero one. Anything else (``HA[`` and thousands of digits) rejects
  the game with a reason.
- Results go through :func:`harness.game.result.parse_result`, after two
  corrections real files need: a bare ``B``/``W`` and a winner with a zero
  margin (``W+0.0``, 97 Fox games with a half-point komi, so no draw) both
  mean "this side won, margin unknown" -- unless the game stopped before
  ``size*size // 4`` moves (90 on 19x19): that is an abandoned game (a Fox
  ``RE[B+0.0]`` after 13 moves), whose winner says nothing about the
  positions, so its result is unknown and it is kept policy-only.
  A result text longer than ``MAX_RESULT_CHARS`` is no result (unknown); a
  margin that is not finite (``B+nan``) or past ``2*size*size`` points is
  unreadable, as ``B+abc`` is: the winner is kept, the margin unknown.
- Setup stones (``AB``/``AW``/``AE``) before the first move — in the root or
  in later nodes, as handicap stones often are — are merged, in order, into
  ``setup_black``/``setup_white``/``setup_empty``. Setup after moves have
  been played becomes a :class:`SetupEvent` applied before the next move.
- A record is never an exception: whatever cannot be read sets ``reject`` to a
  one-line reason and the record still carries its source and index, so that
  reads + rejects = games seen.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

import numpy as np

from harness.game.geometry import BLACK, EMPTY, MAX_SIZE, MIN_SIZE, WHITE
from harness.game.result import UNKNOWN, GameResult, parse_result
from harness.sgf.parser import (
    GameBytes,
    Token,
    first_value,
    main_line_tokens,
    normalise_ident,
    split_games,
    syntax_error,
    unescape,
    values,
)
from harness.sgf.text import decode_text, normalise_charset


@dataclass(eq=False)
class SetupEvent:
    """Stones placed or removed after ``before_move`` moves have been played.

    The points are integer arrays: a record that sets up the whole board
    after every move (``AE[aa:ss]AB[aa:ss]``: 722 points from 19 bytes) is
    parsed, replayed and hashed without a Python object per point.
    """

    before_move: int
    black: np.ndarray = field(default_factory=lambda: _NO_POINTS)
    white: np.ndarray = field(default_factory=lambda: _NO_POINTS)
    empty: np.ndarray = field(default_factory=lambda: _NO_POINTS)

    def __post_init__(self) -> None:
        for name in ("black", "white", "empty"):
            setattr(self, name, np.asarray(getattr(self, name), np.intp).reshape(-1))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SetupEvent):
            return NotImplemented
        return self.before_move == other.before_move and all(
            np.array_equal(getattr(self, n), getattr(other, n))
            for n in ("black", "white", "empty"))

    __hash__ = None  # mutable, like the dataclass it was


_NO_POINTS = np.zeros(0, np.intp)
_NO_POINTS.flags.writeable = False  # the default of every event: never filled in place


@dataclass
class GameRecord:
    source: str  # file path, or "archive!member"
    index: int  # game number within the source, from 0
    size: int = 19
    komi: float = 0.0
    handicap: int = 0
    rules: str | None = None  # the RU text as written
    result: GameResult = UNKNOWN
    black: str = ""
    white: str = ""
    black_rank: str = ""
    white_rank: str = ""
    date: str = ""
    setup_black: list[int] = field(default_factory=list)
    setup_white: list[int] = field(default_factory=list)
    setup_empty: list[int] = field(default_factory=list)
    moves: list[tuple[int, int]] = field(default_factory=list)  # (colour, point)
    visits: np.ndarray | None = None  # float32 (n_moves, P + 1) soft policy targets
    reject: str | None = None
    setup_events: list[SetupEvent] = field(default_factory=list)  # setup after moves
    comments: dict[int, str] = field(default_factory=dict)  # move index -> comment
    properties: dict[str, str] = field(default_factory=dict)  # other root properties

    @property
    def ok(self) -> bool:
        return self.reject is None

    @property
    def name(self) -> str:
        return f"{self.source}#{self.index}"


class RecordError(ValueError):
    """A game that cannot become a record; the message is the reject reason."""


# --- property conversions ------------------------------------------------------

_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d*)?|[-+]?[.,]\d+")


def normalise_komi(text: str) -> float:
    """Komi in points from a ``KM`` value (see the module docstring for the rule)."""
    komi = _number(text)
    if komi is None:
        return 0.0
    if abs(komi) >= 100:
        komi /= 100.0
    if (komi * 4) % 2 == 1:  # x.25 or x.75: stones (zi), not points
        komi *= 2
    return komi


# Possessive quantifiers: two adjacent ``\s*`` would otherwise backtrack
# quadratically on a long run of spaces.
_BARE_WINNER = re.compile(r"^\s*+([BW])\s*+(?:\+\s*+0*+(?:\.0*+)?)?\s*+$", re.IGNORECASE)
MAX_RESULT_CHARS = 100  # the longest real RE is "W+Resign (time)" sized; no regex sees more


def read_result(text: str | None) -> GameResult:
    """``parse_result`` plus the bare-winner forms real files use (see module doc)."""
    if text is not None:
        if len(text) > MAX_RESULT_CHARS:
            return UNKNOWN
        bare = _BARE_WINNER.match(text)
        if bare:
            winner = BLACK if bare.group(1).upper() == "B" else WHITE
            return GameResult(winner, "score", None)
    return parse_result(text)


def countable(result: GameResult, size: int) -> GameResult:
    """``result``, its margin dropped (winner kept) if no count on this board gives it.

    The board holds ``size*size`` points and a komi is refused past as many,
    so a margin beyond twice that (``B+1e30``) is unreadable, as ``B+abc`` is.
    """
    if result.margin is not None and result.margin > 2 * size * size:
        return GameResult(result.winner, result.kind, None)
    return result


def read_size(text: str) -> int:
    parts = [p.strip() for p in text.split(":")]
    try:
        dims = [int(p) for p in parts]
    except ValueError:
        raise RecordError(f"bad board size {text!r}") from None
    if len(dims) == 2 and dims[0] != dims[1]:
        raise RecordError(f"rectangular board {dims[0]}x{dims[1]} unsupported")
    if len(dims) not in (1, 2):
        raise RecordError(f"bad board size {text!r}")
    size = dims[0]
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise RecordError(f"board size {size} unsupported")
    return size


def read_point(value: bytes, size: int, what: str) -> int:
    """A move or setup point; ``size*size`` for a pass (empty, or ``tt`` up to 19x19)."""
    try:
        return _point(value, size)
    except RecordError as exc:
        raise RecordError(f"{what}: {exc}") from None


def _point(value: bytes, size: int) -> int:
    point = _COORDINATES[size].get(value.strip())
    if point is None:
        shown = value.decode("latin-1")
        raise RecordError(f"bad point {shown!r} on a {size}x{size} board")
    return point


def _coordinates(size: int) -> dict[bytes, int]:
    """SGF coordinate -> point for one board size, passes included."""
    table = {bytes((97 + c, 97 + r)): r * size + c for r in range(size) for c in range(size)}
    table[b""] = size * size
    if size <= 19:
        table[b"tt"] = size * size
    return table


_COORDINATES = {size: _coordinates(size) for size in range(MIN_SIZE, MAX_SIZE + 1)}


def read_points(group: bytes, size: int, what: str) -> np.ndarray:
    """Points of a setup property, expanding FF[4] rectangles ``aa:cc``, each
    once, where it last occurs (the order of the edits).

    Whole-board setup repeated node after node is one expansion: the points
    of a property value are kept by its bytes (a record that repeats
    ``AB[aa:ss]`` costs a lookup per node, not 361 points of Python).
    """
    try:
        return _setup_points(group, size)
    except RecordError as exc:
        raise RecordError(f"{what}: {exc}") from None


@functools.lru_cache(maxsize=1024)
def _setup_points(group: bytes, size: int) -> np.ndarray:
    points = []
    for raw in values(group):
        raw = raw.strip()
        if b":" in raw:
            a, b = raw.split(b":", 1)
            p, q = _point(a, size), _point(b, size)
            if p == size * size or q == size * size:
                raise RecordError(f"bad rectangle {raw.decode('latin-1')!r}")
            r0, r1 = sorted((p // size, q // size))
            c0, c1 = sorted((p % size, q % size))
            rows, cols = np.arange(r0, r1 + 1), np.arange(c0, c1 + 1)
            points.extend((rows[:, None] * size + cols).ravel().tolist())
        else:
            p = _point(raw, size)
            if p == size * size:
                raise RecordError("a pass is not a setup point")
            points.append(p)
    unique = _last_of_each(np.asarray(points, np.intp))
    unique.flags.writeable = False  # shared by every node with these bytes
    return unique


def abandoned_moves(size: int) -> int:
    """Moves below which a zero-margin win is an abandoned game (see the module doc)."""
    return size * size // 4


def _number(text: str) -> float | None:
    """The number ``text`` is, else the first number in it (``,`` read as ``.``), else None.

    A whole value Python reads as a float is taken as it is, so that ``nan``,
    ``inf`` and ``1e309`` reach the caller's finiteness check and are refused
    (the pattern alone read ``1e309`` as 1 and ``nan`` as no komi at all).
    ``float`` rather than ``int``: Python refuses ``int`` of a string over
    4,300 digits, while ``float`` turns it into ``inf`` for the caller to refuse.
    """
    try:
        return float(text)
    except ValueError:
        pass
    found = _NUMBER.search(text)
    return float(found.group().replace(",", ".")) if found else None


def read_handicap(text: str, size: int) -> tuple[int, float | None]:
    """(handicap, komi written in HA or None) from an ``HA`` value (see the module doc)."""
    value = _number(text)
    if value is None:
        return 0, None
    if math.isfinite(value) and value != int(value):
        return 0, normalise_komi(text)
    if not (math.isfinite(value) and 0 <= value <= size * size):
        raise RecordError(f"bad handicap HA[{_clip(text)}]")
    return int(value), None


def _clip(text: str, limit: int = 20) -> str:
    """A property value shown in a reject reason: cut to ``limit`` and on one line."""
    return one_line(text[:limit]) + ("..." if len(text) > limit else "")


# Every character ``str.splitlines`` breaks at, and the other C0 controls.
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(32), 0x7F, 0x85)}
_ESCAPES.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t",
                 0x2028: "\\u2028", 0x2029: "\\u2029"})


def one_line(text: str) -> str:
    """``text`` with line breaks and control characters escaped (``\\n``, ``\\x0b``).

    A reject reason is one line of the report and the rejects CSV; a value
    quoted into it from a file (``HA[12\\n3]``) must not break it.
    """
    return text if text.isprintable() else text.translate(_ESCAPES)


# --- nodes -> record -------------------------------------------------------------

_INFO = {b"KM", b"HA", b"RE", b"PB", b"PW", b"BR", b"WR", b"DT", b"RU"}
_ROOT_INFO = {b"KO"}  # KO is also a move property ("play this illegal move")
_TEXT_FIELDS = {
    b"PB": "black",
    b"PW": "white",
    b"BR": "black_rank",
    b"WR": "white_rank",
    b"DT": "date",
}
_SETUP = {b"AB": BLACK, b"AW": WHITE, b"AE": EMPTY}
_SETUP_SLOT = {BLACK: 0, WHITE: 1, EMPTY: 2}  # a colour's place in SetupEvent's fields
_SKIP_ROOT = {b"SZ", b"CA", b"FF", b"GM"} | _INFO | set(_SETUP)


_COLOR = {b"B": BLACK, b"W": WHITE}


def record_from_tokens(
    tokens: list[Token],
    source: str,
    index: int,
    *,
    keep_comments: bool = False,
    text: bytes = b"",
) -> GameRecord:
    """A record from the main-line tokens of one game (rejected, not raised, on errors).

    ``text`` (the main line the tokens came from) only serves to say where a
    syntax error is.
    """
    record = GameRecord(source, index)
    try:
        _fill(record, tokens, keep_comments, text)
    except RecordError as exc:
        record.reject = str(exc)
    return record


def _root(tokens: list[Token]) -> tuple[int, str | None]:
    """Board size and charset: needed before any move or text is read."""
    size, charset = 19, None
    for color, _point, ident, group, semi, _paren, _junk in tokens[1:]:
        if color or semi:
            break
        if ident and not ident.isupper():
            ident = normalise_ident(ident)
        if ident == b"SZ":
            size = read_size(first_value(group).decode("latin-1"))
        elif ident == b"CA":
            charset = normalise_charset(first_value(group).decode("latin-1"))
        elif ident == b"GM":
            game = first_value(group).strip()
            if game and game != b"1":
                raise RecordError(f"not a Go record (GM[{_clip(game.decode('latin-1'))}])")
    return size, charset


def _fill(record: GameRecord, tokens: list[Token], keep_comments: bool, text: bytes) -> None:
    start = 0
    while start < len(tokens) and tokens[start][5]:  # the opening "("
        start += 1
    if start == len(tokens) or not (tokens[start][0] or tokens[start][4]):
        raise RecordError("syntax error: a game must start with a node")
    size, charset = _root(tokens[start:])
    record.size = size
    coordinates = _COORDINATES[size]
    info: dict[bytes, bytes] = {}
    moves = record.moves
    append = moves.append
    # Setup before the first move, by point: its colour (-1: never set) and
    # the number of its last edit, so the latest edit wins and lists keep
    # the order of those edits (a whole-board AB is one array assignment).
    setup_color = np.full(size * size, -1, np.int8)
    setup_edit = np.zeros(size * size, np.int64)
    edits = 0
    events = record.setup_events
    event_points: list[tuple[list, list, list]] = []  # per event: black, white, empty parts
    node = -1
    comment = None
    for color, point, ident, group, semi, _paren, junk in tokens:
        if color:  # a node with just a move
            node += 1
            if comment is not None:
                _comment(record, comment, node - 1, charset, keep_comments)
                comment = None
            p = coordinates.get(point)
            if p is None:
                p = read_point(point, size, f"move {len(moves) + 1}")  # raises
            append((_COLOR[color], p))
        elif semi:  # one or more node starts (a run of empty nodes is one token)
            if comment is not None:
                _comment(record, comment, node, charset, keep_comments)
                comment = None
            node += semi.count(b";")
        elif ident:
            if not ident.isupper():
                ident = normalise_ident(ident)
            if ident == b"B" or ident == b"W":
                p = read_point(first_value(group), size, f"move {len(moves) + 1}")
                append((_COLOR[ident], p))
            elif ident in _SETUP:
                color = _SETUP[ident]
                points = read_points(group, size, f"{ident.decode()} in node {node}")
                if not moves:
                    where = points
                    setup_color[where] = color
                    setup_edit[where] = edits + np.arange(len(where))
                    edits += len(where)
                else:
                    if not events or events[-1].before_move != len(moves):
                        events.append(SetupEvent(len(moves)))
                        event_points.append(([], [], []))
                    event_points[-1][_SETUP_SLOT[color]].append(points)
            elif ident == b"C":
                comment = group
            elif ident in _INFO or (node == 0 and ident in _ROOT_INFO):
                info.setdefault(ident, group)
            elif node == 0 and ident and ident not in _SKIP_ROOT:
                record.properties.setdefault(ident.decode("ascii"), _text(group, charset))
        elif junk:
            # Read the game information anyway: a rejected record still says
            # whose game it was.
            error = syntax_error(tokens, text)
            break
    else:
        error = None
    if comment is not None:
        _comment(record, comment, node, charset, keep_comments)
    for event, parts in zip(events, event_points, strict=True):
        event.black, event.white, event.empty = (
            np.concatenate(part) if part else _NO_POINTS for part in parts)
    touched = np.flatnonzero(setup_color >= 0)
    touched = touched[np.argsort(setup_edit[touched], kind="stable")]
    for color, points in ((BLACK, record.setup_black), (WHITE, record.setup_white),
                          (EMPTY, record.setup_empty)):
        points.extend(touched[setup_color[touched] == color].tolist())
    for ident, attr in _TEXT_FIELDS.items():
        if ident in info:
            setattr(record, attr, _text(info[ident], charset).strip())
    if b"RU" in info:
        record.rules = _text(info[b"RU"], charset).strip() or None
    if b"RE" in info:
        record.result = countable(read_result(_text(info[b"RE"], charset)), size)
        won = record.result.kind == "score" and record.result.margin is None
        if won and record.result.winner and len(moves) < abandoned_moves(size):
            record.result = UNKNOWN
    if error:
        raise RecordError(error)
    _read_komi_and_handicap(record, info)


def _read_komi_and_handicap(record: GameRecord, info: dict[bytes, bytes]) -> None:
    """``KM`` (else ``KO``) and ``HA``, as the module docstring says real files mean them."""
    komi_text = next(
        (first_value(info[k]).decode("latin-1") for k in (b"KM", b"KO") if k in info), ""
    )
    komi = normalise_komi(komi_text)
    if b"HA" in info:
        record.handicap, ha_komi = read_handicap(
            first_value(info[b"HA"]).decode("latin-1"), record.size
        )
        if ha_komi is not None and komi == 0:
            komi = ha_komi
    if not (math.isfinite(komi) and abs(komi) <= record.size * record.size):
        raise RecordError(f"bad komi '{_clip(komi_text)}'")
    record.komi = komi


def _comment(record, group, node, charset, keep_comments) -> None:
    """A node's comment: the root's is a property, a move's is kept on request.

    Called when the node has been read, so the comment belongs to the node's
    move (or, in a node without one, to the last move before it).
    """
    if node == 0:
        record.properties["C"] = _text(group, charset)
    elif keep_comments and record.moves:
        record.comments[len(record.moves) - 1] = _text(group, charset)


def _last_of_each(points: np.ndarray) -> np.ndarray:
    """``points`` without repeats, each where it last occurs (an edit's order)."""
    if len(points) < 2:
        return points
    _, first_from_end = np.unique(points[::-1], return_index=True)
    return points[np.sort(len(points) - 1 - first_from_end)]


def _text(group: bytes, charset: str | None) -> str:
    """A text property: all values, unescaped and decoded, joined by newlines."""
    raw = values(group)
    if len(raw) == 1:
        return decode_text(unescape(raw[0]), charset)
    return "\n".join(decode_text(unescape(v), charset) for v in raw)


# --- bytes -> records ------------------------------------------------------------


def exception_reason(exc: BaseException) -> str:
    """A reject reason for an unexpected exception: its type and first 300 characters.

    The last net under every record: the root causes are fixed where they are
    found, but a record the reader never anticipated must cost that record,
    never the run, and still say what went wrong.
    """
    return "internal error: " + " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def guarded_record(source: str, index: int, make, *args, **kwargs) -> GameRecord:
    """``make(*args, **kwargs)``, or a rejected record if it raises anything."""
    try:
        return make(*args, **kwargs)
    except Exception as exc:
        return GameRecord(source, index, reject=exception_reason(exc))


def record_from_game(
    game: GameBytes, source: str, index: int, *, keep_comments: bool = False
) -> GameRecord:
    """Parse one game found by the splitter; problems become ``reject``."""
    text = game.data[: game.main_end]
    tokens = main_line_tokens(text, len(text))
    record = record_from_tokens(tokens, source, index, keep_comments=keep_comments, text=text)
    problem = game.problem
    if problem and (record.reject is None or record.reject.startswith("syntax error")):
        record.reject = problem
    return record


def parse_sgf_bytes(
    data: bytes, source: str = "<bytes>", *, keep_comments: bool = False
) -> list[GameRecord]:
    """Every game in ``data`` (one game, a collection, or games back to back).

    Data with no game at all gives one rejected record saying why, so that a
    file is never silently lost.
    """
    games = split_games(data)
    if not games:
        return [GameRecord(source, 0, reject=no_game_reason(data))]
    return [
        record_from_game(g, source, i, keep_comments=keep_comments) for i, g in enumerate(games)
    ]


def no_game_reason(head: bytes) -> str:
    if looks_binary(head):
        return "binary data, not SGF"
    if not head.strip():
        return "empty file"
    return "no SGF game found"


def looks_binary(head: bytes) -> bool:
    """Many control bytes (over 5%): no SGF text looks like that, random data does (11%).

    A stray NUL in a name is no reason to drop a file, so one is not enough.
    """
    sample = head[:4096]
    controls = len(sample) - len(sample.translate(None, _CONTROLS))
    return controls > len(sample) // 20


_CONTROLS = bytes(c for c in range(32) if c not in (9, 10, 13))
