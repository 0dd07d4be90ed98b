"""ELF OpenGo self-play records (JSON) -> GameRecord with soft policy targets.

A record (one JSON value per game, as JSON lines or inside a JSON array; the
game itself may sit under ``"result"``) holds:

- ``content``: the moves as a bare SGF sequence ``(;B[pd];W[dd];B[])`` with no
  size, komi or result: 19x19 and komi 7.5 are assumed unless the content or
  the record says otherwise;
- ``policies``: one vector of MCTS visit counts per move over ELF's padded
  21x21 board (a one-point margin around 19x19): entry 0 — a margin corner,
  never a point — is the pass count, and point (row, col) is entry
  ``(row + 1) * 21 + (col + 1)``. Leela Zero's converter maps ELF row ``i`` to
  its own row ``18 - i`` because Leela Zero counts rows from the bottom; our
  rows count from the top like SGF's, so ELF's rows are ours unchanged.
  :func:`policy_orientation` checks that against the moves actually played
  (the most visited move is usually the one played) and picks whichever of
  the eight board symmetries agrees best (another than the identity only if
  it wins clearly), so a mis-oriented source is caught rather than trusted.
  The development sample's policies are placeholders (the same counts for
  every move, pass included) that fit no orientation: the identity is kept;
- ``reward``: +1 if Black won, -1 if White won (Black's view). A game ending
  in two passes was counted (``score``, margin unknown); otherwise it ended
  by resignation.

Visits become ``GameRecord.visits``: float32 ``(n_moves, P + 1)``, each row
normalised to sum 1 (rows with no visits stay zero), pass last as everywhere
in the harness.
"""

from __future__ import annotations

import codecs
import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from harness.game.geometry import BLACK, WHITE
from harness.game.result import GameResult
from harness.sgf.record import GameRecord, parse_sgf_bytes

ELF_SIZE = 19
ELF_KOMI = 7.5


def _symmetries(board: np.ndarray) -> list[np.ndarray]:
    """The eight symmetries of ``(..., N, N)`` arrays, identity first."""
    out = []
    for k in range(4):
        rotated = np.rot90(board, k, axes=(-2, -1))
        out.append(rotated)
        out.append(np.swapaxes(rotated, -2, -1))
    return out


def policy_orientation(points: np.ndarray, board_visits: np.ndarray) -> tuple[int, int]:
    """(symmetry index, moves whose most-visited point is the one played).

    ``board_visits`` is ``(n, N, N)`` in ELF's row/column order, ``points``
    the played points (pass = N*N is skipped: it says nothing about axes).
    """
    size = board_visits.shape[1]
    played = points < size * size
    if not played.any():
        return 0, 0
    scores = []
    for candidate in _symmetries(board_visits[played]):
        best = candidate.reshape(candidate.shape[0], -1).argmax(axis=1)
        scores.append(int((best == points[played]).sum()))
    k = int(np.argmax(scores))  # first maximum: identity wins ties
    if k and not (scores[k] >= 3 and scores[k] > 2 * scores[0]):
        k = 0  # another symmetry must win clearly, not by the chance of a short game
    return k, scores[k]


def visits_from_policies(policies: Any, points: np.ndarray, size: int = ELF_SIZE) -> np.ndarray:
    """Normalised visit targets ``(n, P + 1)`` (pass last) from ELF's padded vectors."""
    wide = size + 2
    counts = np.asarray(policies, dtype=np.float64)  # float32 would turn 1e39 into inf
    if not (np.isfinite(counts).all() and (counts >= 0).all()):
        raise ValueError("visit counts must be finite and non-negative")
    if counts.ndim != 2 or counts.shape[1] != wide * wide:
        counts = counts.reshape(len(counts), -1)
        if counts.shape[1] != wide * wide:
            raise ValueError(f"policy vectors of {counts.shape[1]} entries, expected {wide * wide}")
    padded = counts.reshape(-1, wide, wide)
    board = padded[:, 1 : size + 1, 1 : size + 1]
    k, _ = policy_orientation(points, board)
    board = np.ascontiguousarray(_symmetries(board)[k]).reshape(len(counts), size * size)
    visits = np.concatenate([board, counts[:, :1]], axis=1)
    totals = visits.sum(axis=1, keepdims=True)
    np.divide(visits, totals, out=visits, where=totals > 0)
    return visits.astype(np.float32, copy=False)


def record_from_elf(
    obj: Any,
    source: str,
    index: int,
    *,
    size: int = ELF_SIZE,
    komi: float = ELF_KOMI,
) -> GameRecord:
    """One ELF record; problems become ``reject``, never exceptions."""
    game = obj.get("result", obj) if isinstance(obj, dict) else None
    if not isinstance(game, dict) or not isinstance(game.get("content"), str):
        return GameRecord(source, index, reject="ELF record without a 'content' move list")
    content = game["content"].encode("utf-8", errors="replace")
    if b"SZ[" not in content:
        content = content.replace(b"(;", f"(;SZ[{size}]".encode(), 1)
    records = parse_sgf_bytes(content, source)
    record = records[0]
    record.index = index
    if len(records) != 1:
        record.reject = record.reject or f"ELF content holds {len(records)} games"
    if record.reject:
        return record
    if b"KM[" not in content:
        value = game.get("komi", komi)
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and abs(value) <= record.size * record.size
        ):
            record.reject = f"ELF record: bad komi {str(value)[:20]!r}"
            return record
        record.komi = float(value)
    if "reward" in game or b"RE[" not in content:
        record.result = _result(game.get("reward"), record.moves, record.size)
    policies = game.get("policies")
    if policies is not None:
        if not isinstance(policies, list):
            record.reject = "ELF record: policies is not a list"
            return record
        if len(policies) != len(record.moves):
            record.reject = f"ELF record: {len(policies)} policies for {len(record.moves)} moves"
            return record
        points = np.fromiter((p for _, p in record.moves), np.int64, len(record.moves))
        try:
            record.visits = visits_from_policies(policies, points, record.size)
        except (ValueError, TypeError) as exc:
            record.reject = f"ELF record: bad policies ({exc})"
    return record


def _result(reward: Any, moves: list[tuple[int, int]], size: int) -> GameResult:
    if isinstance(reward, bool) or not isinstance(reward, int | float):
        return GameResult(0, "unknown")
    if reward == 0:
        return GameResult(0, "draw")
    passes = size * size
    counted = len(moves) >= 2 and moves[-1][1] == passes and moves[-2][1] == passes
    return GameResult(BLACK if reward > 0 else WHITE, "score" if counted else "resign")


def iter_json_values(
    chunks: Iterable[bytes], max_value_bytes: int = 256 << 20
) -> Iterator[Any | JsonProblem]:
    """JSON values from JSON lines or one top-level JSON array, in bounded memory.

    JSON lines: one value per line; a value spread over several lines (pretty
    printed) is gathered until it parses, and text that does not parse is
    reported as a :class:`JsonProblem` once a later line parses alone. A
    top-level array is read element by element. Nothing much larger than
    ``max_value_bytes`` is held.
    """
    texts = _texts(chunks)
    head = ""
    for text in texts:
        head += text
        if head.strip():
            break
    if not head.strip():
        return
    if head.lstrip().startswith("["):
        yield from _array_values(head.lstrip()[1:], texts, max_value_bytes)
    else:
        yield from _line_values(_lines(_chain(head, texts), max_value_bytes), max_value_bytes)


def _texts(chunks: Iterable[bytes]) -> Iterator[str]:
    text_of = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for chunk in chunks:
        yield text_of.decode(chunk)
    yield text_of.decode(b"", final=True)


def _chain(first, rest):
    yield first
    yield from rest


def _line_values(lines: Iterator[str | JsonProblem], max_value_bytes: int):
    pending = ""
    retry_at = 0  # parse a growing multi-line value when it may be complete
    for line in lines:
        if isinstance(line, JsonProblem):
            yield line
            pending = ""
            continue
        stripped = line.strip()
        if not stripped:
            continue
        if pending and stripped[0] == "{":
            alone = _loads(line)
            if isinstance(alone, dict):  # a whole record: what was pending is broken
                yield JsonProblem(f"bad JSON record ({len(pending):,} characters)")
                pending = ""
                yield alone
                continue
        if pending and stripped[0] not in "}]" and len(pending) < retry_at:
            pending += line  # inside a pretty-printed value: cannot end here
            continue
        if pending:
            retry_at = 2 * len(pending)
            value = _loads(pending + line)
            if value is not _FAIL:
                pending = ""
                yield value
                continue
            pending += line
        else:
            value = _loads(line)
            if value is _FAIL:
                pending, retry_at = line, 0
            else:
                yield value
        if len(pending) > max_value_bytes:
            yield JsonProblem(f"JSON record larger than {max_value_bytes:,} bytes")
            pending = ""
    if pending:
        yield JsonProblem(f"bad or truncated JSON record ({len(pending):,} characters)")


_FAIL = object()


# What json raises besides JSONDecodeError on hostile text: ValueError for an
# integer of over 4,300 digits (Python's int-string limit), RecursionError for
# thousands of nested brackets. Both mean "this value cannot be read".
_UNREADABLE = (ValueError, RecursionError)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except _UNREADABLE:  # JSONDecodeError is a ValueError
        return _FAIL


def _lines(texts: Iterable[str], max_line: int) -> Iterator[str | JsonProblem]:
    """Lines (with their newline); an overlong line becomes one problem."""
    tail = ""
    skipping = False
    for text in texts:
        parts = (tail + text).split("\n")
        tail = parts.pop()
        for part in parts:
            if skipping:
                skipping = False
                continue
            yield part + "\n"
        if len(tail) > max_line:
            if not skipping:
                yield JsonProblem(f"JSON line longer than {max_line:,} bytes")
            tail, skipping = "", True
    if tail and not skipping:
        yield tail


def _array_values(buf: str, texts: Iterator[str], max_value_bytes: int):
    decoder = json.JSONDecoder()
    pos = 0
    done = False
    want = 0  # read until the buffer holds this much before parsing again
    while True:
        while not done and len(buf) - pos < want:
            text = next(texts, None)
            if text is None:
                done = True
            else:
                buf = buf[pos:] + text
                want -= pos
                pos = 0
        while pos < len(buf) and buf[pos] in " \t\r\n,":
            pos += 1
        if pos < len(buf) and buf[pos] == "]":
            return
        if pos >= len(buf) and done:
            yield JsonProblem("truncated JSON array: no closing ']'")
            return
        try:
            value, pos = decoder.raw_decode(buf, pos)
        except json.JSONDecodeError as exc:
            if done:
                yield JsonProblem(f"bad or truncated JSON array: {exc.msg}")
                return
            if len(buf) - pos > max_value_bytes:
                yield JsonProblem(f"JSON record larger than {max_value_bytes:,} bytes")
                return
            want = 2 * (len(buf) - pos) + 1
            continue
        except _UNREADABLE as exc:
            yield JsonProblem(f"unreadable JSON value ({type(exc).__name__})")
            return
        yield value
        want = 0


class JsonProblem:
    def __init__(self, reason: str):
        self.reason = reason
