"""The TYGEM / Tom kifu + index reader, on hand-written fixtures and on the real samples.

Fixtures (``tests/fixtures/kifu/``) are written by hand with known answers:
TYGEM ``2011-01`` holds, line by line, a normal game, a game with no index
row, a move-count mismatch, a blank line, ``B+Time``, a game with passes, a
line without its TAB, a bad move, a move on an occupied point and a capture
won ``W+Offline``. The real-sample tests check the join against an
independent reading of the index with the ``csv`` module, and skip when
``../shared/data`` is absent.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from harness.devdata import dev_data_dir
from harness.game.geometry import BLACK, WHITE
from harness.sgf import iter_records
from harness.sgf.kifu import IndexFinder, iter_lines, parse_line, read_kifu_result
from harness.sgf.sources import content_kind

FIXTURES = Path(__file__).parent / "fixtures" / "kifu"
TYGEM, TOM = FIXTURES / "tygem", FIXTURES / "tom"
PASS = 361
DATA = dev_data_dir()
REAL_TYGEM, REAL_TOM = DATA / "tygem", DATA / "tom"
needs_tygem = pytest.mark.skipif(not REAL_TYGEM.is_dir(), reason=f"{REAL_TYGEM} absent (dev data)")
needs_tom = pytest.mark.skipif(not REAL_TOM.is_dir(), reason=f"{REAL_TOM} absent (dev data)")


def point(sgf: str) -> int:
    """Independent of the reader: SGF letters -> row * 19 + col."""
    return (ord(sgf[1]) - 97) * 19 + ord(sgf[0]) - 97


def zipped_tygem(root: Path) -> Path:
    """The fixture laid out as TYGEM ships it: each month and the index in a zip."""
    for folder, name in (("Kifu", "2011-01"), ("Kifu", "2011-02"), ("index", "Kifu2011.index")):
        (root / folder).mkdir(parents=True, exist_ok=True)
        stem = name.removesuffix(".index")
        with zipfile.ZipFile(root / folder / f"{stem}.zip", "w", zipfile.ZIP_DEFLATED) as z:
            z.write(TYGEM / folder / name, name)
    return root


def by_gid(records) -> dict[str, object]:
    return {r.properties.get("GN", f"line {r.index}"): r for r in records}


def test_a_normal_game_is_joined_with_its_index_row():
    records = list(iter_records(TYGEM / "Kifu" / "2011-01"))
    game = records[0]
    assert game.ok and game.properties["GN"] == "1001"
    assert game.moves == [
        (BLACK, point("pd")), (WHITE, point("dp")), (BLACK, point("pp")), (WHITE, point("dd"))
    ]
    assert (game.black, game.white) == ("blackid", "whiteid")  # the account (English) names
    assert game.properties["black_name"] == "白石" and game.properties["white_name"] == "흑돌"
    assert (game.properties["black_nation"], game.properties["white_nation"]) == ("2", "0")
    assert game.black_rank == game.white_rank == "9d"
    assert game.date == "2011-01-02 13:45"
    assert (game.result.winner, game.result.kind) == (BLACK, "resign")
    assert game.komi == 6.5 and game.rules == "Japanese" and game.size == 19
    assert (game.properties["TM"], game.properties["OT"]) == ("600", "3x30 byo-yomi")


def test_every_line_is_one_record_with_the_reason_it_was_refused():
    records = list(iter_records(TYGEM / "Kifu" / "2011-01"))
    assert [r.index for r in records] == list(range(9))  # the blank line is not a game
    assert all(r.source == str(TYGEM / "Kifu" / "2011-01") for r in records)
    assert [r.reject for r in records] == [
        None,
        None,  # no index row: kept, result unknown
        "move count differs from the index: 4 stones on the line (+0 passes), 5 in the index",
        None,
        None,
        "malformed kifu line: no TAB after the game id",
        "malformed kifu line: bad move at move 2",
        None,  # an illegal move is for the replay to find
        None,
    ]


def test_a_game_without_an_index_row_is_kept_with_an_unknown_result():
    game = by_gid(iter_records(TYGEM / "Kifu" / "2011-01"))["1002"]
    assert game.ok and not game.result.known
    assert len(game.moves) == 3 and game.black == "" and game.properties["index"] == "no row"
    assert game.komi == 6.5 and game.rules == "Japanese"  # the collection says so


def test_time_and_offline_results_keep_their_winner():
    games = by_gid(iter_records(TYGEM / "Kifu" / "2011-01"))
    assert (games["1004"].result.winner, games["1004"].result.kind) == (BLACK, "time")
    assert games["1004"].result.to_sgf() == "B+T"
    assert (games["1009"].result.winner, games["1009"].result.kind) == (WHITE, "forfeit")
    assert read_kifu_result("W+9.5").margin == 9.5
    assert not read_kifu_result("X+Offline").known


def test_passes_are_moves_but_not_counted_by_the_index():
    game = by_gid(iter_records(TYGEM / "Kifu" / "2011-01"))["1005"]
    assert game.ok  # index says 2 moves: the two stones, not the two passes
    assert game.moves == [(BLACK, point("pd")), (WHITE, PASS), (BLACK, point("dd")), (WHITE, PASS)]
    assert (game.result.winner, game.result.margin) == (WHITE, 9.5)


def test_zipped_months_and_index_read_like_the_plain_files(tmp_path):
    plain = list(iter_records(TYGEM / "Kifu" / "2011-01"))
    zipped = list(iter_records(zipped_tygem(tmp_path) / "Kifu" / "2011-01.zip"))
    assert [r.source for r in zipped] == [f"{tmp_path}/Kifu/2011-01.zip!2011-01"] * 9
    strip = [(r.moves, r.reject, r.result, r.black, r.date, r.komi) for r in plain]
    assert [(r.moves, r.reject, r.result, r.black, r.date, r.komi) for r in zipped] == strip


def test_a_folder_reads_every_month_in_order_and_never_the_index_as_games(tmp_path):
    root = zipped_tygem(tmp_path)
    records = list(iter_records(root))
    assert [r.source.rsplit("!", 1)[1] for r in records] == ["2011-01"] * 9 + ["2011-02"]
    feb = records[-1]
    assert feb.ok and feb.white == "white21" and feb.date == "2011-02-01 08:00"
    assert content_kind("Kifu2011.zip") is None and content_kind("Kifu.index") is None
    assert content_kind("2011-01") == "kifu" and content_kind("2011-01.zip") == "zip"
    assert content_kind("kifu.zip") == "zip"  # a zip of SGF files by that common name is read


def test_an_index_of_another_year_is_not_read():
    finder = IndexFinder.near(TYGEM / "Kifu" / "2011-01")
    assert [Path(f).name for f in finder.files] == ["Kifu2011.index", "Kifu2012.index"]
    rows = finder.index_for("2011-01", 1 << 20).rows
    assert 1001 in rows and 1000 not in rows  # 1000 is only in Kifu2012.index
    assert 1000 in finder.index_for("2012-05", 1 << 20).rows


def test_a_kifu_file_with_no_index_anywhere_keeps_every_game_without_result(tmp_path):
    shutil.copy(TYGEM / "Kifu" / "2011-02", tmp_path / "2011-02")
    (game,) = iter_records(tmp_path / "2011-02")
    assert game.ok and not game.result.known and game.komi == 0.0 and game.rules is None


def test_tom_reads_komi_from_its_index_and_leaves_rules_unknown():
    records = list(iter_records(TOM))
    assert [r.properties["GN"] for r in records] == ["354460", "354461", "354999"]
    game, no_row, bad_row = records
    assert game.ok and game.komi == 7.5 and game.rules is None
    assert (game.white, game.black) == ("忧郁的孤影", "楚阳春")
    assert (game.result.winner, game.result.margin) == (BLACK, 0.5)
    assert game.date == "2003-09-25 20:21" and game.properties["TM"] == "300"
    assert no_row.ok and not no_row.result.known and no_row.komi == 0.0
    assert bad_row.reject == "malformed index row: komi 'x.5'"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"12 ;B[pd]", "no TAB after the game id"),
        (b"x12\t;B[pd]", "game id 'x12'"),
        (b"12\tB[pd]", "the moves do not start with ';'"),
        (b"12\t;B[pd];W[pd]]", "bad move at move 2"),
        (b"12\t;B[pd];;W[dd]", "bad move at move 2"),
        (b"12\t;B[pd];X[dd]", "bad move at move 2"),
        (b"12\t;B[pd];W[ut]", "bad move at move 2"),
    ],
)
def test_malformed_lines_raise_with_the_place(line, reason):
    with pytest.raises(ValueError, match=f"^malformed kifu line: {re.escape(reason)}$"):
        parse_line(line)


def test_lines_are_split_across_chunks_and_an_overlong_line_is_skipped_whole():
    chunks = [b"1\t;B[pd]\n2\t;B", b"[dd]\n3\t" + b";B[pd]" * 10, b"\n4\t;W[aa]"]
    assert list(iter_lines(iter(chunks), 40)) == [b"1\t;B[pd]", b"2\t;B[dd]", None, b"4\t;W[aa]"]


def test_an_sgf_file_named_like_a_month_is_still_read_as_sgf(tmp_path):
    (tmp_path / "2011-05").write_text("(;GM[1]SZ[19]KM[7.5]RE[W+R];B[pd];W[dp])")
    (game,) = iter_records(tmp_path / "2011-05")
    assert game.ok and game.komi == 7.5 and game.moves == [(BLACK, 72), (WHITE, point("dp"))]


def test_binary_and_empty_months_are_one_reject_each(tmp_path):
    (tmp_path / "2011-03").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "2011-04").write_bytes(b"")
    assert [r.reject for r in iter_records(tmp_path)] == [
        "binary data, not a kifu file",
        "empty kifu file",
    ]


# --- the real samples ---------------------------------------------------------------------


def independent_index(text: str, columns: int) -> dict[str, list[str]]:
    rows = csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE)
    return {row[0]: row for row in rows if len(row) == columns}


@needs_tygem
def test_real_tygem_month_joins_every_game_with_its_row():
    with zipfile.ZipFile(REAL_TYGEM / "index" / "Kifu2011.zip") as z:
        index = independent_index(z.read("Kifu2011.index").decode("utf-8"), 11)
    records = iter_records(REAL_TYGEM / "Kifu" / "2011-01.zip")
    seen = mismatched = 0
    for record in records:
        seen += 1
        row = index[record.properties["GN"]]
        stones = sum(1 for _, p in record.moves if p != PASS)
        assert (record.reject is None) == (stones == int(row[9])), record.reject
        mismatched += record.reject is not None
        assert (record.white, record.black) == (row[3], row[6])
        assert record.date == row[1][1:].replace(".", "-")
        assert record.result.to_sgf()[0] == row[8][0] and record.result.known
    assert seen == 12310 and mismatched == 34  # counted by hand from the raw files


@needs_tom
def test_real_tom_months_join_komi_and_results():
    index = independent_index((REAL_TOM / "Kifu.index").read_text("utf-8"), 8)
    records = list(iter_records(REAL_TOM / "kifu"))
    assert len(records) == 710
    assert sum(r.reject is not None for r in records) == 2  # two lines one move short
    for record in records:
        row = index[record.properties["GN"]]
        assert record.komi == float(row[4])
        assert (record.white, record.black) == (row[2], row[3])
        if record.ok:
            assert sum(1 for _, p in record.moves if p != PASS) == int(row[6])
