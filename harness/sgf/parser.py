"""SGF bytes -> games -> main-line tokens, fast and tolerant.

Two stages, so that a multi-gigabyte concatenated archive streams through in
bounded memory:

1. :class:`GameSplitter` finds where each game starts and ends in a byte
   stream fed chunk by chunk. The scan is a compiled loop over the bytes
   (``_split``): it skips bracketed values (which may hold parentheses and
   escapes), tracks nesting depth, and notes where the main line ends (the
   first ``)`` of a game: in SGF a sequence's variations all follow it, so the
   main line — first variation at every fork — is everything before that
   parenthesis, the inner ``(`` being mere nesting). Text between games
   (headers, garbage) is skipped. A ``(;`` whose first property is a
   root-only one (``GM``, ``FF``, ``SZ``, ``CA``, ``AP``) starts a new game
   even when the previous one never closed: that is how a truncated game in a
   Leela Zero ``all.sgf`` stream looks, and the broken game is reported
   rather than swallowing its successor.
2. :func:`main_line_tokens` cuts one game's main line into tokens with one
   C-speed ``findall``, a node holding only a move being a single token (most
   nodes are). :mod:`harness.sgf.record` reads records straight from the
   tokens; :func:`parse_main_line` gives plain nodes of ``(identifier, raw
   values)`` pairs for anything else. Values are split and unescaped only
   when asked (:func:`values`, :func:`unescape`).

Syntax is read tolerantly where the meaning is clear (whitespace anywhere,
FF[3] long identifiers, text outside games) and rejected with a reason where
it is not (a property without a value, stray characters, truncation).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numba import njit

# Game status codes of the splitter.
COMPLETE, CUT_BY_NEXT_GAME, END_OF_DATA = 0, 1, 2


@njit(cache=True, inline="always")
def _is_space(c):
    return c == 32 or c == 9 or c == 10 or c == 13 or c == 11 or c == 12


@njit(cache=True)
def _skip_space(buf, i, n):
    while i < n and _is_space(buf[i]):
        i += 1
    return i


@njit(cache=True)
def _root_start(buf, i, n):
    """At a ``(``: 1 if a root node follows (``(;GM[``...), 0 if not, -1 if data ends first."""
    j = _skip_space(buf, i + 1, n)
    if j >= n:
        return -1
    if buf[j] != 59:  # ';'
        return 0
    j = _skip_space(buf, j + 1, n)
    if j + 2 >= n:
        return -1
    a = buf[j]
    b = buf[j + 1]
    k = _skip_space(buf, j + 2, n)
    if k >= n:
        return -1
    if buf[k] != 91:  # '['
        return 0
    if (
        (a == 71 and b == 77)  # GM
        or (a == 70 and b == 70)  # FF
        or (a == 83 and b == 90)  # SZ
        or (a == 67 and b == 65)  # CA
        or (a == 65 and b == 80)  # AP
    ):
        return 1
    return 0


@njit(cache=True)
def _split(buf, pos, final, root_only, starts, main_ends, ends, status):
    """Scan ``buf[pos:]`` for games; returns (games found, position to resume from).

    A game still open when the data ends is reported (``END_OF_DATA``) only if
    ``final``; otherwise the scan stops at its start so that the caller can
    append more data and rescan it. Stops early when the output arrays fill.
    With ``root_only`` (resynchronising after skipped data) the first game
    must open with a root property, so that a variation is not taken for one.
    """
    n = buf.shape[0]
    cap = starts.shape[0]
    count = 0
    i = pos
    while i < n:
        # Outside a game: look for "(" + optional space + ";".
        if buf[i] != 40:  # '('
            i += 1
            continue
        j = _skip_space(buf, i + 1, n)
        if j >= n:
            if final:
                return count, n
            return count, i
        if buf[j] != 59:
            i += 1
            continue
        if root_only and count == 0:
            r = _root_start(buf, i, n)
            if r == -1 and not final:
                return count, i
            if r != 1:
                i += 1
                continue
        if count == cap:
            return count, i
        start = i
        main_end = -1
        depth = 1
        i = j + 1
        closed = False
        cut = False
        while i < n:
            c = buf[i]
            if c == 91:  # '[': skip the value, honouring backslash escapes
                i += 1
                while i < n and buf[i] != 93:
                    if buf[i] == 92:
                        i += 1
                    i += 1
                if i >= n:
                    break
                i += 1
            elif c == 40:  # '('
                r = _root_start(buf, i, n)
                if r == -1 and not final:
                    i = n  # undecidable yet: wait for more data
                    break
                if r == 1:
                    cut = True
                    break
                depth += 1
                i += 1
            elif c == 41:  # ')'
                if main_end < 0:
                    main_end = i
                depth -= 1
                i += 1
                if depth == 0:
                    closed = True
                    break
            else:
                i += 1
        if closed or cut:
            starts[count] = start
            main_ends[count] = main_end if main_end >= 0 else i
            ends[count] = i
            status[count] = COMPLETE if closed else CUT_BY_NEXT_GAME
            count += 1
            continue  # when cut, i sits on the next game's "("
        # The data ended inside this game.
        if not final:
            return count, start
        starts[count] = start
        main_ends[count] = main_end if main_end >= 0 else n
        ends[count] = n
        status[count] = END_OF_DATA
        count += 1
        return count, n
    return count, n


@dataclass(frozen=True, slots=True)
class GameBytes:
    """One game's bytes as found in a stream, and how it ended."""

    data: bytes  # from its "(" to its closing ")" (or where it was cut)
    main_end: int  # offset in ``data`` of the first ")" (end of the main line)
    status: int  # COMPLETE, CUT_BY_NEXT_GAME or END_OF_DATA
    offset: int  # byte offset of the game in the whole stream

    @property
    def problem(self) -> str | None:
        if self.status == CUT_BY_NEXT_GAME:
            return "truncated game: the next game starts before this one closes"
        if self.status == END_OF_DATA:
            return "truncated game: the data ends before the game closes"
        return None


class GameSplitter:
    """Cut a byte stream fed in chunks into games, holding at most one open game.

    ``max_game_bytes`` bounds memory: a game that grows past it is reported
    (as an ``OversizedGame``) and skipped.

    An open game is rescanned from its start when more data arrives, so a
    rescan waits until the held data has doubled (or would pass the limit):
    fed in small chunks, a big game then costs a constant number of scans per
    byte instead of one per chunk, and chunks are joined once per scan.
    """

    def __init__(self, max_game_bytes: int = 64 << 20, batch: int = 4096):
        self.max_game_bytes = max_game_bytes
        self._buf = b""
        self._fed: list[bytes] = []  # chunks not yet joined to _buf
        self._fed_bytes = 0
        self._scan_at = 0  # held bytes at which the next scan is worth it
        self._base = 0  # stream offset of self._buf[0]
        self._resync = False  # after skipping data: wait for a root node
        self._starts = np.empty(batch, np.int64)
        self._main_ends = np.empty(batch, np.int64)
        self._ends = np.empty(batch, np.int64)
        self._status = np.empty(batch, np.int8)

    def feed(self, chunk: bytes) -> list[GameBytes | OversizedGame]:
        self._fed.append(bytes(chunk))
        self._fed_bytes += len(chunk)
        if self.pending_bytes < self._scan_at:
            return []
        return self._scan(final=False)

    def finish(self) -> list[GameBytes | OversizedGame]:
        games = self._scan(final=True)
        self._buf = b""
        return games

    @property
    def pending_bytes(self) -> int:
        return len(self._buf) + self._fed_bytes

    def _join(self) -> bytes:
        if self._fed:
            self._buf = b"".join([self._buf, *self._fed])
            self._fed, self._fed_bytes = [], 0
        return self._buf

    def _scan(self, final: bool) -> list[GameBytes | OversizedGame]:
        buf = self._join()
        arr = np.frombuffer(buf, np.uint8)
        out: list[GameBytes | OversizedGame] = []
        pos = 0
        cap = len(self._starts)
        while True:
            count, pos = _split(
                arr,
                pos,
                final,
                self._resync,
                self._starts,
                self._main_ends,
                self._ends,
                self._status,
            )
            if count:
                self._resync = False
            for k in range(count):
                s, m, e = int(self._starts[k]), int(self._main_ends[k]), int(self._ends[k])
                out.append(GameBytes(buf[s:e], m - s, int(self._status[k]), self._base + s))
            if count < cap or pos >= len(buf):
                break
        rest = len(buf) - pos
        if not final and rest > self.max_game_bytes:
            # Drop what is held and skip to the next game that opens with a
            # root node: the dropped game's variations must not pass for games.
            out.append(OversizedGame(self._base + pos, self.max_game_bytes))
            self._buf, self._base, self._resync = b"", self._base + len(buf), True
            self._scan_at = 0
            return out
        self._buf = buf[pos:]
        self._base += pos
        self._scan_at = min(2 * rest, self.max_game_bytes + 1)
        return out


@dataclass(frozen=True, slots=True)
class OversizedGame:
    offset: int
    size: int

    @property
    def problem(self) -> str:
        return f"game larger than {self.size:,} bytes (skipped)"


def split_games(data: bytes) -> list[GameBytes]:
    """All games of a complete byte string (a file read whole, a JSON field)."""
    splitter = GameSplitter(max_game_bytes=len(data) + 1)
    games = splitter.feed(data) + splitter.finish()
    return [g for g in games if isinstance(g, GameBytes)]


# --- main line ---------------------------------------------------------------

# One token per match: a node holding nothing but a move (the common case,
# one token instead of three), a property (identifier + all its bracketed
# values), a node separator, a nesting "(" or anything else (a syntax error).
# Whitespace between tokens is skipped by findall. The value pattern is the
# unrolled form of (?:[^\]\\]|\\.)*.
#
# Linear time on every input, which takes two things: possessive quantifiers
# (``++``, ``*+``: nothing is given back, so a failed match costs what it
# read), and one junk token that swallows the rest of the main line (reading
# stops at the first syntax error anyway). Otherwise each of n letters, or each
# ``x[`` inside an unclosed comment, would start an O(n) attempt of its own --
# O(n^2) in all -- and n junk bytes would still cost n Python tuples. For the
# same reason a run of empty nodes (``;;;;``) is one token (count its ``;``),
# and so is a run of ``(`` (nesting, which the main line ignores).
_TOKEN = re.compile(
    rb";\s*+([BW])\s*+\[([a-z]{2}|)\](?=\s*+(?:[;(]|\Z))"
    rb"|([A-Za-z]++)\s*+((?:\[[^\]\\]*+(?:\\.[^\]\\]*+)*+\]\s*+)++)|(;(?:\s*+;)*+)|(\((?:\s*+\()*+)|(\S.*)",
    re.S,
)
_LETTERS = re.compile(rb"[A-Za-z]+")
_VALUE = re.compile(rb"\[([^\]\\]*(?:\\.[^\]\\]*)*)\]", re.S)
_SOFT_BREAK = re.compile(rb"\\(?:\r\n|\n\r|\n|\r)")
_ESCAPE = re.compile(rb"\\(.)", re.S)

# (move colour, move point) for a move-only node, else (identifier, value group,
# ";", "(", junk) with empty strings in the unused places.
Token = tuple[bytes, bytes, bytes, bytes, bytes, bytes, bytes]
Node = list[tuple[bytes, bytes]]  # (identifier, raw "[v1][v2]" group) pairs


class SgfSyntaxError(ValueError):
    """The main line of a game cannot be read."""


def main_line_tokens(game: bytes, main_end: int | None = None) -> list[Token]:
    """Tokens of the main line of one game (bytes from its opening ``(``).

    ``main_end`` is where the splitter found the main line to end; without
    it the game is scanned for it.
    """
    return _TOKEN.findall(_main_line(game, main_end))


def _main_line(game: bytes, main_end: int | None) -> bytes:
    if main_end is None:
        found = split_games(game)
        main_end = found[0].main_end if found else len(game)
    return game[:main_end]


def syntax_error(tokens: list[Token], game: bytes, main_end: int | None = None) -> str:
    """The reject reason for the first junk token."""
    junk = next(t[6] for t in tokens if t[6])
    return _junk_message(_main_line(game, main_end), junk)


def normalise_ident(ident: bytes) -> bytes:
    """FF[3] long identifiers (``AddBlack``) reduced to their capitals (``AB``)."""
    return bytes(c for c in ident if 65 <= c <= 90)


def parse_main_line(game: bytes, main_end: int | None = None) -> list[Node]:
    """Nodes of the main line of one game (bytes from its opening ``(``).

    Properties keep their raw value group (``b"[pd]"``); see :func:`values`.
    """
    tokens = main_line_tokens(game, main_end)
    nodes: list[Node] = []
    props: Node | None = None
    for color, point, ident, group, semi, _paren, junk in tokens:
        if color:
            nodes.append([(color, b"[" + point + b"]")])
            props = nodes[-1]
        elif ident:
            if props is None:
                raise SgfSyntaxError(f"property {_show(ident)} before the first node")
            if not ident.isupper():
                ident = normalise_ident(ident)
                if not ident:
                    continue
            props.append((ident, group))
        elif semi:
            nodes.extend([] for _ in range(semi.count(b";") - 1))  # empty nodes
            props = []
            nodes.append(props)
        elif junk:
            raise SgfSyntaxError(syntax_error(tokens, game, main_end))
    if not nodes:
        raise SgfSyntaxError("no node in game")
    return nodes


def _show(raw: bytes, limit: int = 20) -> str:
    text = raw[:limit].decode("latin-1")
    return repr(text + ("..." if len(raw) > limit else ""))


def _junk_message(text: bytes, junk: bytes) -> str:
    for m in _TOKEN.finditer(text):
        if m.group(7):
            at = m.start(7)
            context = text[at : at + 12]
            letters = _LETTERS.match(junk)
            if letters and junk[letters.end() :].lstrip()[:1] == b"[":
                return f"syntax error at byte {at}: the value of {_show(context)} never closes"
            if letters:
                return f"syntax error at byte {at}: property {_show(context)} has no value"
            return f"syntax error at byte {at}: unexpected {_show(context)}"
    return "syntax error"


def values(group: bytes) -> list[bytes]:
    """The raw (still escaped) values of a property's ``[..][..]`` group."""
    stripped = group.rstrip()
    if stripped.count(b"]") == 1:
        return [stripped[1:-1]]
    return _VALUE.findall(group)


def first_value(group: bytes) -> bytes:
    stripped = group.rstrip()
    if stripped.count(b"]") == 1:
        return stripped[1:-1]
    found = _VALUE.match(group)
    return found.group(1) if found else b""


def unescape(raw: bytes) -> bytes:
    """SGF text escapes: ``\\`` + newline is a soft break (removed), ``\\x`` is ``x``."""
    if b"\\" not in raw:
        return raw
    # split keeps the captured character between the pieces: joined, that is the
    # unescaped text, 3-4 times faster than sub(rb"\1") (no template per match).
    return b"".join(_ESCAPE.split(_SOFT_BREAK.sub(b"", raw)))
