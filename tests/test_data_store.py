"""Positions files: what goes in comes out, position by position.

Known games in SGF, known boards out (ASCII, ``X`` Black, ``O`` White, row 9
at the top); splits by game; dedupe; value masks; one-line errors for files
that are not complete datasets.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

from harness.data.dataset import check_file, open_dataset
from harness.data.ingest import IngestConfig, ingest
from harness.data.ingest_report import reason_category
from harness.data.layout import TEST, TRAIN, VAL, DatasetError
from harness.data.splits import assign_splits, cazenave_rows, parse_split_size
from harness.data.synthetic import write_random_sgfs
from harness.game.geometry import BLACK, EMPTY, WHITE, gtp_to_point

# Black captures the white stone on D5 with move 7 (D4); White then plays J9.
CAPTURE = (
    "(;GM[1]FF[4]SZ[9]KM[7]RE[B+R]PB[Alice]PW[Bob]RU[Chinese]"
    ";B[ee];W[de];B[dd];W[ai];B[ce];W[ah];B[df];W[ia])"
)
BEFORE_MOVE_7 = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . X . . . . .
. . X O X . . . .
. . . . . . . . .
. . . . . . . . .
O . . . . . . . .
O . . . . . . . .
"""
BEFORE_MOVE_8 = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . X . . . . .
. . X . X . . . .
. . . X . . . . .
. . . . . . . . .
O . . . . . . . .
O . . . . . . . .
"""
# Two handicap stones, White moves first; the result is unknown (no RE).
HANDICAP = "(;GM[1]FF[4]SZ[9]HA[2]KM[0.5]AB[cc][gg];W[gc];B[cg];W[ee])"
# The same game as CAPTURE under other player names: a duplicate.
CAPTURE_COPY = CAPTURE.replace("PB[Alice]", "PB[Carol]")
ILLEGAL = "(;GM[1]FF[4]SZ[9]RE[W+R];B[ee];W[ee])"
OTHER_SIZE = "(;GM[1]FF[4]SZ[13]RE[W+R];B[gg];W[dd])"


def board(ascii_board: str) -> np.ndarray:
    cells = ascii_board.split()
    return np.array([{".": EMPTY, "X": BLACK, "O": WHITE}[c] for c in cells], np.int8)


def _ingest(folder: Path, files: dict[str, str], **options) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text)
    out = folder / "out.h5"
    config = IngestConfig(
        sources=[str(folder / name) for name in files],
        output=out,
        board_size=9,
        val_games=0,
        workers=1,
        progress=False,
        **options,
    )
    ingest(config)
    return out


@pytest.fixture(scope="module")
def known(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("known")
    files = {
        "a_capture.sgf": CAPTURE,
        "b_handicap.sgf": HANDICAP,
        "c_copy.sgf": CAPTURE_COPY,
        "d_illegal.sgf": ILLEGAL,
        "e_13x13.sgf": OTHER_SIZE,
    }
    return _ingest(folder, files)


def test_positions_are_the_boards_before_each_move(known):
    with open_dataset(known) as ds:
        first = int(ds.games["first"][0])
        rows = ds.positions(np.arange(first, first + 8), history=2)
        # Row 7 is the position White's J9 was played in, the capture done.
        assert np.array_equal(rows["stones"][7, -1], board(BEFORE_MOVE_8))
        assert np.array_equal(rows["stones"][7, -2], board(BEFORE_MOVE_7))
        assert rows["move"][7] == gtp_to_point("J9", 9)
        assert rows["move"][6] == gtp_to_point("D4", 9)
        assert rows["to_play"][7] == WHITE and rows["to_play"][6] == BLACK
        assert not rows["stones"][0].any()  # empty board, and nothing before it
        assert list(rows["move_number"]) == list(range(8))


def test_value_is_the_result_from_the_side_to_move_and_masked_when_unknown(known):
    with open_dataset(known) as ds:
        games = ds.games
        capture, handicap = (int(np.flatnonzero(games["black"] == n)[0]) for n in ("Alice", ""))
        rows = ds.positions(np.arange(ds.n_positions), history=1)
        mine = rows["game_id"] == capture
        # Black won by resignation: +1 on Black's moves, -1 on White's.
        assert list(rows["value"][mine]) == [1, -1, 1, -1, 1, -1, 1, -1]
        assert rows["value_known"][mine].all()
        assert not rows["value_known"][rows["game_id"] == handicap].any()
        assert games["result"][capture] == "B+R"
        assert games["length"][capture] == 8


def test_handicap_stones_are_the_first_position_and_history_before_them_is_empty(known):
    with open_dataset(known) as ds:
        g = int(np.flatnonzero(ds.games["handicap"] == 2)[0])
        row = int(ds.games["first"][g])
        rows = ds.positions(np.array([row]), history=2)
        setup = np.zeros(81, np.int8)
        setup[[gtp_to_point("C7", 9), gtp_to_point("G3", 9)]] = BLACK
        assert np.array_equal(rows["stones"][0, -1], setup)
        assert not rows["stones"][0, 0].any()
        assert rows["to_play"][0] == WHITE


def test_duplicates_and_rejects_are_reported_and_counts_reconcile(known):
    report = json.loads(known.with_name("out.report.json").read_text())
    totals = report["totals"]
    assert totals == {
        "seen": 5,
        "kept": 2,
        "duplicates": 1,
        "rejected": 2,
        "positions": 8 + 3,
        "rejected_by_reason": {
            "board size 13 (dataset is 9x9)": 1,
            "illegal move (occupied point)": 1,
        },
    }
    assert report["reconciles"] and report["duplicates_dropped"] == 1
    with open(known.with_name("out.rejects.csv"), newline="") as f:
        rejects = {Path(r["source"]).name: r for r in csv.DictReader(f)}
    assert rejects["c_copy.sgf"]["kind"] == "duplicate"
    assert rejects["c_copy.sgf"]["reason"].endswith("a_capture.sgf#0")
    assert rejects["d_illegal.sgf"]["reason"] == "illegal move 2 E5 (occupied point)"
    assert set(rejects) == {"c_copy.sgf", "d_illegal.sgf", "e_13x13.sgf"}


def test_attributes_record_how_the_file_was_made(known):
    with open_dataset(known) as ds:
        a = ds.attrs
        assert (a["board_size"], a["encoder"], a["format_version"]) == (9, "cazenave21", 1)
        assert a["complete"] and a["harness_version"] and a["created"]
        paths = ds.file["sources/path"].asstr()[...]
        assert [Path(p).name for p in paths][:2] == ["a_capture.sgf", "b_handicap.sgf"]
        import hashlib

        sha = hashlib.sha256(Path(paths[0]).read_bytes()).hexdigest()
        assert ds.file["sources/sha256"][0].decode() == sha


def test_no_result_games_can_be_skipped(tmp_path):
    out = _ingest(tmp_path, {"h.sgf": HANDICAP, "c.sgf": CAPTURE}, no_result="skip")
    report = json.loads(out.with_name("out.report.json").read_text())
    assert report["totals"]["rejected_by_reason"] == {"no result (unknown)": 1}


def test_rules_filter_keeps_only_the_named_rule_sets(tmp_path):
    out = _ingest(tmp_path, {"h.sgf": HANDICAP, "c.sgf": CAPTURE}, rules=("japanese",))
    report = json.loads(out.with_name("out.report.json").read_text())
    assert report["totals"]["kept"] == 0
    assert set(report["totals"]["rejected_by_reason"]) == {
        "rules chinese not accepted (japanese)",
        "rules unknown not accepted (japanese)",
    }


# --- splits -------------------------------------------------------------------------


def test_split_sizes_are_counts_or_fractions():
    assert parse_split_size("500") == 500 and isinstance(parse_split_size("500"), int)
    assert parse_split_size("0.05") == 0.05 and parse_split_size("0") == 0
    for bad in ("-1", "1.5", "2.5"):
        with pytest.raises(ValueError):
            parse_split_size(bad)


def test_split_assignment_is_exact_reproducible_and_order_free():
    digests = np.array([f"{i:032x}" for i in range(1000)], dtype=object)
    split = assign_splits(digests, seed=7, n_val=50, n_test=30)
    assert (np.sum(split == VAL), np.sum(split == TEST), np.sum(split == TRAIN)) == (50, 30, 920)
    assert np.array_equal(split, assign_splits(digests, 7, 50, 30))
    order = np.random.default_rng(0).permutation(1000)
    assert np.array_equal(assign_splits(digests[order], 7, 50, 30), split[order])
    assert not np.array_equal(assign_splits(digests, 8, 50, 30), split)


def test_cazenave_rows_pick_one_position_inside_each_validation_game():
    digests = np.array([f"{i:032x}" for i in range(6)], dtype=object)
    first = np.array([0, 10, 30, 31, 60, 90])
    positions = np.array([10, 20, 1, 29, 30, 5])
    split = np.array([VAL, TRAIN, VAL, VAL, TEST, VAL], np.int8)
    rows = cazenave_rows(digests, first, positions, split, seed=3)
    for g in range(6):
        if split[g] == VAL:
            assert first[g] <= rows[g] < first[g] + positions[g]
        else:
            assert rows[g] == -1


@pytest.fixture(scope="module")
def random_file(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("random")
    source = write_random_sgfs(folder / "games.sgf", 40, size=9, moves=30, seed=1)
    out = folder / "random.h5"
    ingest(
        IngestConfig(
            sources=[str(source)],
            output=out,
            board_size=9,
            val_games=6,
            test_games=0.1,
            cazenave_val=True,
            seed=5,
            workers=1,
            progress=False,
        )
    )
    return out


def test_splits_are_by_game_and_recorded(random_file):
    with open_dataset(random_file) as ds:
        games = ds.games
        assert (np.sum(games["split"] == VAL), np.sum(games["split"] == TEST)) == (6, 4)
        assert json.loads(ds.attrs["split_games"]) == {"train": 30, "val": 6, "test": 4}
        assert ds.attrs["split_seed"] == 5
        game_of_row = ds.file["positions/game_id"][...]
        owner = {s: set(game_of_row[ds.split_rows(s)]) for s in ("train", "test")}
        assert not owner["train"] & owner["test"] and len(owner["test"]) == 4
        for split, code in (("train", TRAIN), ("test", TEST)):  # whole games, nothing else
            assert owner[split] == set(np.flatnonzero(games["split"] == code))
            assert len(ds.split_rows(split)) == games["positions"][games["split"] == code].sum()
        val_rows = ds.split_rows("val")  # Cazenave: one position per validation game
        assert len(val_rows) == 6
        val_games = ds.positions(val_rows)["game_id"]
        assert sorted(val_games) == sorted(np.flatnonzero(games["split"] == VAL))
        assert (
            len(ds.split_rows("val", cazenave=False))
            == games["positions"][games["split"] == VAL].sum()
        )


# --- files that are not complete datasets ------------------------------------------------


def _one_line_error(path: Path) -> str:
    with pytest.raises(DatasetError) as info:
        check_file(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    return message


def test_foreign_and_partial_files_give_one_line_errors(random_file, tmp_path):
    text = tmp_path / "notes.h5"
    text.write_text("not hdf5")
    assert "not an HDF5 file" in _one_line_error(text)
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["x"] = np.arange(3)
    assert "not a go-harness positions file" in _one_line_error(foreign)
    unfinished = tmp_path / "unfinished.h5"
    shutil.copy(random_file, unfinished)
    with h5py.File(unfinished, "a") as f:
        f.attrs["complete"] = False
    assert "incomplete" in _one_line_error(unfinished)
    partial = tmp_path / "x.h5.partial"
    shutil.copy(random_file, partial)
    assert "incomplete" in _one_line_error(partial)
    missing = tmp_path / "gone.h5"
    (tmp_path / "gone.h5.journal").mkdir()
    assert "--resume" in _one_line_error(missing)
    with pytest.raises(DatasetError):
        open_dataset(unfinished)


def test_reason_categories_drop_game_specific_details():
    assert reason_category("illegal move 57 D4 (occupied point)") == "illegal move (occupied point)"
    assert reason_category("too short: 3 moves (minimum 20)") == "too short"
    assert reason_category("board size 13 (dataset is 9x9)") == "board size 13 (dataset is 9x9)"
