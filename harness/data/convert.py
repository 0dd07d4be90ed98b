"""One game record -> the rows it contributes, or the reason it contributes none.

This runs in the ingest workers: it replays the record with the rules kernel
(through :func:`harness.sgf.replay_positions`, which rejects exactly what
:func:`harness.sgf.replay` rejects, compiled) and keeps, for every move, the
position *before* it. Anything
that goes wrong becomes a one-line reject reason; nothing raises.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.data.layout import GAME_COLUMNS, POSITION_COLUMNS, column_range, numpy_dtype
from harness.data.rows import (
    GameInfo,
    GamePositions,
    RecordOutcome,
    game_digest,
    values_from_result,
)
from harness.data.settings import ConvertSettings, normalise_rules


def convert_record(record, settings: ConvertSettings) -> RecordOutcome:
    """Never raises: a record that cannot be stored comes back ``rejected`` with a reason.

    Every text of the outcome is made :func:`storable` here, in the worker:
    the parent's HDF5 and CSV writers would otherwise fail on it, and a failure
    there ends the whole ingest.
    """
    try:
        outcome = _convert(record, settings)
    except Exception as exc:  # a bug or an odd record must not end a long ingest
        from harness.sgf.record import exception_reason

        outcome = RecordOutcome(record.source, record.index, "rejected", exception_reason(exc))
    return _storable_outcome(outcome)


def storable(text: str) -> str:
    """``text`` as HDF5 strings and the rejects CSV can hold it.

    No NUL (HDF5 variable-length strings end at one and h5py refuses them: a
    ``PB[a\\0b]`` once ended an ingest) and valid UTF-8 (lone surrogates, from a
    tar member name tarfile decoded with ``surrogateescape`` or a JSON
    ``"\\ud800"``, become ``?``).
    """
    if text.isascii() and "\0" not in text:
        return text
    return text.replace("\0", "").encode("utf-8", "replace").decode("utf-8")


_INFO_TEXTS = ("source", "black", "white", "black_rank", "white_rank", "date", "rules", "result")


def _storable_outcome(outcome: RecordOutcome) -> RecordOutcome:
    """Texts HDF5 can hold; the reason on one line too, whatever reader made it.

    Readers escape the values they quote (issue 41: ``HA[...]`` with a line
    break made a reason of two lines); this is the net under all of them.
    """
    from harness.sgf.record import one_line

    info = outcome.info
    if info is not None:
        info = replace(info, **{k: storable(getattr(info, k)) for k in _INFO_TEXTS})
    return replace(outcome, source=storable(outcome.source),
                   reason=storable(one_line(outcome.reason)), info=info)


def _max_game_moves() -> int:
    """Moves in the longest game whose positions ``move_number`` (from 0) can count.

    Rejected rather than widened: 32,768 moves is a hundred times any real
    game, and a longer one (passes, mostly) is no training data; stored, its
    move numbers wrapped to -32768 and its history planes went wrong silently.
    """
    move_number = next(c for c in POSITION_COLUMNS if c.name == "move_number")
    return int(column_range(move_number)[1]) + 1


MAX_GAME_MOVES = _max_game_moves()


def _reject(record, reason: str) -> RecordOutcome:
    return RecordOutcome(record.source, record.index, "rejected", reason)


def _convert(record, settings: ConvertSettings) -> RecordOutcome:
    from harness.sgf import ReplayError, replay_positions

    if record.reject is not None:
        return _reject(record, record.reject)
    size = settings.board_size
    if record.size != size:
        return _reject(record, f"board size {record.size} (dataset is {size}x{size})")
    rules = normalise_rules(record.rules)
    if settings.rules and rules not in settings.rules:
        return _reject(record, f"rules {rules} not accepted ({', '.join(settings.rules)})")
    n = len(record.moves)
    if n < settings.min_moves:
        return _reject(record, f"too short: {n} moves (minimum {settings.min_moves})")
    if n > MAX_GAME_MOVES:
        return _reject(record, f"too long: {n} moves (the dataset holds at most {MAX_GAME_MOVES})")
    result = record.result
    if settings.no_result == "skip" and not result.known:
        return _reject(record, f"no result ({result.kind})")
    try:
        stones = replay_positions(record, settings.replay_rules)[:-1]  # before each move
    except ReplayError as exc:
        return _reject(record, str(exc))

    moves = np.array(record.moves, dtype=np.int16).reshape(-1, 2)
    to_play = moves[:, 0].astype(np.int8)
    positions = GamePositions(
        stones=stones,
        to_play=to_play,
        move=moves[:, 1].copy(),
        value=values_from_result(to_play, result.winner if result.known else 0),
        value_known=result.known,
        soft_policy=_sparse_visits(record.visits, n),
    )
    setup = (record.setup_black, record.setup_white, record.setup_empty)
    setup += tuple(
        pts for e in record.setup_events for pts in ([e.before_move], e.black, e.white, e.empty)
    )
    info = GameInfo(
        source=record.source,
        index=record.index,
        digest=game_digest(size, setup, moves),
        length=n,
        black=record.black,
        white=record.white,
        black_rank=record.black_rank,
        white_rank=record.white_rank,
        date=record.date,
        rules=record.rules or "",
        result=result.to_sgf(),
        winner=result.winner,
        result_known=result.known,
        komi=record.komi,
        handicap=record.handicap,
    )
    unfit = unfit_game_value(info)
    if unfit is not None:
        return _reject(record, unfit)
    return RecordOutcome(record.source, record.index, "kept", info=info, positions=positions)


def unfit_game_value(info: GameInfo) -> str | None:
    """Why a value of ``info`` does not fit its ``/games`` column, or None if all fit.

    Walks the schema instead of naming fields, so that a numeric column added
    later is checked too: the reader's limits are the game's (a handicap up to
    ``size*size``), the columns' are the file's (int8 handicap), and a value
    past a column ended the whole ingest in the parent's writer (issue 41).
    """
    for column in GAME_COLUMNS:
        limits = column_range(column)
        if limits is None or not hasattr(info, column.name):
            continue
        value = getattr(info, column.name)
        low, high = limits
        if not low <= value <= high:  # NaN fails this too
            return (f"{column.name} {value!r} does not fit the dataset "
                    f"({numpy_dtype(column)} column: {low:g} to {high:g})")
    return None


def _sparse_visits(visits, n: int):
    """CSR of the non-zero visit shares (normalised per move), or None."""
    if visits is None:
        return None
    visits = np.asarray(visits, np.float32)
    if visits.shape[0] != n:
        return None
    totals = visits.sum(axis=1, keepdims=True)
    probs = np.divide(visits, totals, out=np.zeros_like(visits), where=totals > 0)
    rows, cols = np.nonzero(probs)
    offsets = np.concatenate(([0], np.cumsum(np.bincount(rows, minlength=n)))).astype(np.int64)
    return offsets, cols.astype(np.int16), probs[rows, cols].astype(np.float16)
