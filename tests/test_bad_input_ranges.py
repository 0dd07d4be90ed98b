"""Every value the reader accepts is stored as read, or the game is one reject line.

The regression tests of issue 41 (an independent fuzz of the reader and
ingest). Each failed before its fix: the bullet it reproduces is named.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main as harness_main
from harness.data.convert import (
    MAX_GAME_MOVES,
    ConvertSettings,
    convert_record,
    unfit_game_value,
)
from harness.data.layout import (
    GAME_COLUMNS,
    OPTIONAL_POSITION_COLUMNS,
    POSITION_COLUMNS,
    column_range,
)
from harness.data.rows import GameInfo
from harness.data.synthetic import random_sgf
from harness.game.geometry import MAX_SIZE
from harness.sgf import parse_sgf_bytes

# /games columns the writer fills (row numbers, split); every other numeric
# column must come from a GameInfo field, which ``unfit_game_value`` checks.
WRITER_COLUMNS = {"first", "positions", "split", "cazenave_row"}
# The range of values each per-position column gets from a game the reader
# accepts; ``move_number`` grows with the game, so convert bounds its length.
POSITION_RANGES = {
    "stones": (0, 2),  # EMPTY, BLACK, WHITE
    "to_play": (1, 2),
    "move": (0, MAX_SIZE * MAX_SIZE),  # pass on the largest board
    "value": (-1, 1),
    "value_known": (0, 1),
    "ownership": (-1, 1),
    "score": (-2 * MAX_SIZE * MAX_SIZE, 2 * MAX_SIZE * MAX_SIZE),  # a board and a komi
    "move_number": (0, MAX_GAME_MOVES - 1),
}


def ingest(sources: Path, out: Path, size: int) -> tuple[int, dict, dict]:
    """Run ``harness ingest`` on one worker: (exit code, report, source name -> reject reason)."""
    code = harness_main(["ingest", str(sources), "-o", str(out), "--board-size", str(size),
                         "--quiet", "--workers", "1", "--val-games", "0"])
    report_path = out.with_name(out.stem + ".report.json")
    report = json.loads(report_path.read_text()) if report_path.is_file() else {}
    rejects_path = out.with_name(out.stem + ".rejects.csv")
    rejects = {}
    if rejects_path.is_file():
        with open(rejects_path, newline="") as f:
            rejects = {Path(row["source"]).name: row["reason"] for row in csv.DictReader(f)}
    return code, report, rejects


# --- bullet 1: a handicap the reader accepts but int8 cannot hold -----------------------


def test_a_handicap_past_its_column_is_one_reject_and_the_good_games_are_kept(tmp_path):
    sources = tmp_path / "in"
    sources.mkdir()
    for i in range(20):
        (sources / f"good{i:02}.sgf").write_text(random_sgf(i, size=19))
    (sources / "ha128.sgf").write_bytes(b"(;GM[1]FF[4]SZ[19]HA[128];B[pd])")
    code, report, rejects = ingest(sources, tmp_path / "out.h5", 19)
    assert code == 0 and (tmp_path / "out.h5").is_file()
    assert report["totals"]["kept"] == 20
    assert rejects == {
        "ha128.sgf": "handicap 128 does not fit the dataset (int8 column: -128 to 127)"
    }


def test_the_largest_handicap_the_reader_accepts_is_rejected_by_convert():
    (record,) = parse_sgf_bytes(b"(;GM[1]SZ[19]HA[361];B[pd])")
    assert record.ok and record.handicap == 361  # the reader's limit is size*size
    outcome = convert_record(record, ConvertSettings())
    assert outcome.kind == "rejected"
    assert outcome.reason == "handicap 361 does not fit the dataset (int8 column: -128 to 127)"


def test_a_handicap_at_the_column_limit_is_kept():
    (record,) = parse_sgf_bytes(b"(;GM[1]SZ[19]HA[127];B[pd])")
    outcome = convert_record(record, ConvertSettings())
    assert outcome.kind == "kept" and outcome.info.handicap == 127


def _past(column) -> float:
    """The first value past ``column``'s upper limit (ints), or one past float32's."""
    _low, high = column_range(column)
    return int(high) + 1 if np.dtype(column.dtype).kind in "iu" else 1e39


@pytest.mark.parametrize("column", [c for c in GAME_COLUMNS if column_range(c) is not None],
                         ids=lambda c: c.name)
def test_every_numeric_game_column_is_filled_checked_or_by_the_writer(column):
    """Walks the schema: a new numeric column fails here until it is checked."""
    fields = {f.name for f in dataclasses.fields(GameInfo)}
    if column.name in WRITER_COLUMNS:
        assert column.name not in fields
        return
    assert column.name in fields, f"/games/{column.name} is neither a GameInfo field nor written"
    info = GameInfo("s", 0, "0" * 32, 1)
    assert unfit_game_value(info) is None
    too_big = dataclasses.replace(info, **{column.name: _past(column)})
    reason = unfit_game_value(too_big)
    assert reason is not None and reason.startswith(f"{column.name} ") and "\n" not in reason


def test_unfit_values_are_counted_under_their_column_not_their_value():
    from harness.data.ingest_report import reason_category

    reason = "handicap 128 does not fit the dataset (int8 column: -128 to 127)"
    assert reason_category(reason) == "handicap does not fit the dataset"
    assert reason_category("too long: 40000 moves (the dataset holds at most 32768)") == "too long"


# --- bullet 4: a game longer than move_number counts --------------------------------------


def passes(moves: int) -> bytes:
    """A legal game of ``moves`` passes on 9x9."""
    return b"(;GM[1]SZ[9]" + b";B[];W[]" * (moves // 2) + b";B[]" * (moves % 2) + b")"


def test_a_game_longer_than_move_number_counts_is_rejected_with_the_limit():
    (record,) = parse_sgf_bytes(passes(40_000))
    assert record.ok  # legal: the reader has no length limit
    outcome = convert_record(record, ConvertSettings(board_size=9))
    assert outcome.kind == "rejected"
    assert outcome.reason == "too long: 40000 moves (the dataset holds at most 32768)"


def test_a_game_of_exactly_the_limit_is_kept_with_its_move_numbers_intact():
    (record,) = parse_sgf_bytes(passes(MAX_GAME_MOVES))
    outcome = convert_record(record, ConvertSettings(board_size=9))
    assert outcome.kind == "kept" and len(outcome.positions) == 32768


@pytest.mark.parametrize("column", [c for c in POSITION_COLUMNS + OPTIONAL_POSITION_COLUMNS
                                    if column_range(c) is not None], ids=lambda c: c.name)
def test_every_numeric_position_column_holds_the_largest_value_a_game_gives_it(column):
    """Walks the schema: a new per-position column fails here until its bound is known."""
    if column.name == "game_id":  # the writer's row of /games, not a game's value
        return
    assert column.name in POSITION_RANGES, f"/positions/{column.name}: what bounds it?"
    low, high = column_range(column)
    smallest, largest = POSITION_RANGES[column.name]
    assert low <= smallest and largest <= high


# --- bullet 5: nonsense numbers kept as komi and margins -----------------------------------


def long_game(properties: bytes) -> bytes:
    """A 19x19 record with ``properties`` in its root and 100 moves (no abandoned game)."""
    moves = b"".join(b";B[%c%c];W[%c%c]" % (97 + i % 19, 97 + i // 19, 97 + i % 19,
                                            115 - i // 19) for i in range(50))
    return b"(;GM[1]SZ[19]" + properties + moves + b")"


@pytest.mark.parametrize("komi", ["1e309", "nan", "inf", "-inf", "NaN", "1e400"])
def test_a_komi_that_is_not_a_finite_number_rejects_the_game(komi):
    (record,) = parse_sgf_bytes(long_game(f"KM[{komi}]".encode()))
    assert record.reject == f"bad komi {komi!r}"


@pytest.mark.parametrize("text, komi", [("6.5", 6.5), ("650", 6.5), ("6,5", 6.5),
                                        ("7.5 points", 7.5), ("", 0.0), ("?", 0.0)])
def test_ordinary_komi_values_read_as_before(text, komi):
    (record,) = parse_sgf_bytes(long_game(f"KM[{text}]".encode()))
    assert record.ok and record.komi == komi


@pytest.mark.parametrize("result", ["B+nan", "B+inf", "B+1e309", "B+1e30", "B+723"])
def test_a_margin_no_count_gives_is_unreadable_the_winner_kept(result):
    (record,) = parse_sgf_bytes(long_game(f"RE[{result}]".encode()))
    assert record.ok
    assert (record.result.winner, record.result.kind, record.result.margin) == (1, "score", None)
    assert record.result.to_sgf() == "B+"


def test_the_largest_margin_a_board_gives_is_kept():
    (record,) = parse_sgf_bytes(long_game(b"RE[W+722]"))
    assert record.result.margin == 722 and record.result.to_sgf() == "W+722"


def test_parse_result_reads_a_non_finite_margin_as_unreadable():
    from harness.game.result import GameResult, parse_result

    assert parse_result("W+nan") == GameResult(2, "score", None)
    assert parse_result("W+-inf") == GameResult(2, "score", None)


# --- bullet 6: reject reasons that span several lines ---------------------------------------

BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x85"]


def test_a_line_break_in_a_quoted_value_is_escaped_in_the_reason():
    (handicap,) = parse_sgf_bytes(b"(;GM[1]SZ[19]HA[999\nx];B[pd])")
    assert handicap.reject == "bad handicap HA[999\\nx]"
    (game,) = parse_sgf_bytes(b"(;GM[2\r\n3];B[pd])")
    assert game.reject == "not a Go record (GM[2\\r\\n3])"
    (komi,) = parse_sgf_bytes(b"(;GM[1]KM[nan\n];B[pd])")
    assert komi.reject == "bad komi 'nan\\n'"


@pytest.mark.parametrize("template", ["HA[999{}x]", "HA[-1{}]", "HA[{}1e999]", "GM[2{}3]",
                                      "GM[{}]", "KM[inf{}]", "SZ[1{}9]", "SZ[9:1{}3]",
                                      "AB[a{}a]", "AB[aa:b{}b]"])
def test_every_reject_reason_is_one_line_whatever_break_the_value_holds(template):
    reasons = []
    for brk in BREAKS:
        data = ("(;" + template.format(brk) + ";B[pd])").encode("latin-1")
        reasons += [convert_record(r, ConvertSettings()).reason for r in parse_sgf_bytes(data)]
    assert any(reasons)  # the template does make rejects
    assert all(len(reason.splitlines()) <= 1 for reason in reasons), reasons


def test_convert_puts_any_reader_s_reason_on_one_line():
    from harness.sgf.record import GameRecord

    outcome = convert_record(GameRecord("s", 0, reject="bad\nthing\u2028here"), ConvertSettings())
    assert outcome.reason == "bad\\nthing\\u2028here"
