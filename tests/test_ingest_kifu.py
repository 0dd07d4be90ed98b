"""``harness ingest`` of kifu + index layouts: counts, stored positions, splits by source, resume.

The independent reference for positions is sgfmill's board, fed from the kifu
lines by a regular expression here (not the harness's reader). Real-sample
tests read ``../shared/data/tygem`` and skip when it is absent.
"""

from __future__ import annotations

import re
import zipfile

import numpy as np
import pytest
from test_ingest import assert_same_content, run_ingest
from test_sgf_kifu import REAL_TYGEM, needs_tygem, point, zipped_tygem

from harness.data.dataset import open_dataset
from harness.data.ingest import IngestConfig, IngestError, ingest
from harness.data.journal import journal_dir
from harness.data.layout import TEST, TRAIN, VAL
from harness.data.splits import assign_splits, source_mask
from harness.game.geometry import BLACK, WHITE

KEPT = {"1001": 4, "1002": 3, "1004": 3, "1005": 4, "1009": 4, "2001": 2}  # GN -> moves


@pytest.fixture(scope="module")
def tygem(tmp_path_factory):
    return zipped_tygem(tmp_path_factory.mktemp("tygem"))


def sgfmill_rows(moves_text: str) -> np.ndarray:
    """Stones before each move of a kifu line, replayed by sgfmill (row 0 at the top here)."""
    from sgfmill import boards

    board = boards.Board(19)
    rows = []
    for colour, where in re.findall(r";([BW])\[([a-s]{2}|)\]", moves_text):
        stones = np.zeros(361, np.int8)
        for c, (row, col) in board.list_occupied_points():
            stones[(18 - row) * 19 + col] = BLACK if c == "b" else WHITE
        rows.append(stones)
        if where and where != "tt":
            col, row = ord(where[0]) - 97, ord(where[1]) - 97
            board.play(18 - row, col, colour.lower())
    return np.array(rows)


def test_the_fixture_folder_ingests_with_every_game_accounted_for(tygem, tmp_path):
    report = run_ingest([tygem], tmp_path / "k.h5", workers=1, val_games=0)
    totals = report["totals"]
    assert (totals["seen"], totals["kept"], totals["duplicates"]) == (10, 6, 0)
    assert totals["positions"] == sum(KEPT.values()) == 20
    assert totals["rejected_by_reason"] == {
        "malformed kifu line": 2,
        "illegal move (occupied point)": 1,
        "move count differs from the index": 1,
    }
    with open_dataset(tmp_path / "k.h5") as ds:
        games = ds.games
        assert list(games["length"]) == [4, 3, 3, 4, 4, 2]
        assert list(games["black"][:1]) == ["blackid"] and games["komi"][0] == 6.5
        assert list(games["result"]) == ["B+R", "?", "B+T", "W+9.5", "W+F", "W+R"]
        assert list(games["rules"]) == ["Japanese"] * 6
        known = ds.positions(np.arange(ds.n_positions))["value_known"]
        no_row = games["first"][1] + np.arange(3)
        assert not known[no_row].any() and known.sum() == 17  # the game with no index row


def test_stored_stones_match_sgfmill_including_a_capture(tygem, tmp_path):
    run_ingest([tygem / "Kifu" / "2011-01.zip"], tmp_path / "k.h5", workers=1, val_games=0)
    line = "1009\t;B[ba];W[aa];B[ab];W[cc]"
    with open_dataset(tmp_path / "k.h5") as ds:
        first, n = int(ds.games["first"][4]), int(ds.games["positions"][4])
        rows = ds.positions(np.arange(first, first + n))
    expected = sgfmill_rows(line.split("\t")[1])
    assert np.array_equal(rows["stones"][:, -1], expected)
    assert expected[3][point("aa")] == 0 and expected[2][point("aa")] == WHITE  # captured
    assert list(rows["move"]) == [point("ba"), point("aa"), point("ab"), point("cc")]
    assert list(rows["value"]) == [-1, 1, -1, 1]  # White won (W+Offline)


def test_no_result_skip_rejects_the_game_without_an_index_row(tygem, tmp_path):
    report = run_ingest([tygem], tmp_path / "k.h5", workers=1, val_games=0, no_result="skip")
    assert report["totals"]["kept"] == 5
    assert report["totals"]["rejected_by_reason"]["no result (unknown)"] == 1


def test_a_whole_month_becomes_the_test_split(tygem, tmp_path):
    report = run_ingest(
        [tygem], tmp_path / "k.h5", workers=1, val_games=1, test_sources=("2011-02",)
    )
    assert report["split_games"] == {"train": 4, "val": 1, "test": 1}
    with open_dataset(tmp_path / "k.h5") as ds:
        months = [s.rsplit("!", 1)[1] for s in ds.games["source"]]
        splits = list(ds.games["split"])
    assert [m for m, s in zip(months, splits, strict=True) if s == TEST] == ["2011-02"]
    assert splits[months.index("2011-02")] == TEST and splits.count(VAL) == 1


def test_an_empty_test_source_pattern_is_refused(tygem, tmp_path):
    with pytest.raises(IngestError, match="--test-source"):
        run_ingest([tygem], tmp_path / "k.h5", test_sources=(" ",))


def test_source_mask_and_held_out_splits_by_hand():
    sources = np.array(["a/2011-01.zip!2011-01"] * 3 + ["a/2011-06.zip!2011-06"] * 2, object)
    assert list(source_mask(sources, ("2011-06",))) == [False] * 3 + [True] * 2
    assert list(source_mask(sources, ("a/2011-0[16].zip",))) == [True] * 5
    assert not source_mask(sources, ()).any() and not source_mask(sources, ("2012",)).any()
    digests = np.array([f"{i:032x}" for i in range(5)], "S32")
    held = source_mask(sources, ("2011-06",))
    split = assign_splits(digests, 0, 1, 1, held)
    assert list(split[3:]) == [TEST, TEST]
    assert sorted(split[:3]) == [TRAIN, VAL, TEST]
    # With nothing held out the split is the by-game split, unchanged.
    assert np.array_equal(assign_splits(digests, 0, 2, 1, np.zeros(5, bool)),
                          assign_splits(digests, 0, 2, 1))
    with pytest.raises(ValueError, match="> 3 games"):
        assign_splits(digests, 0, 3, 1, held)


def test_an_interrupted_kifu_ingest_resumes_to_the_same_file(tygem, tmp_path):
    options = {"val_games": 1, "workers": 1, "commit_games": 2, "test_sources": ("2011-02",)}
    run_ingest([tygem], tmp_path / "whole.h5", **options)
    out = tmp_path / "cut.h5"
    ingest(IngestConfig(sources=[str(tygem)], output=out, progress=False,
                        stop_after_records=7, **options))
    assert not out.exists() and len(list(journal_dir(out).glob("shard-*.h5"))) == 3
    report = run_ingest([tygem], out, resume=True, **{**options, "workers": 2})
    assert report["resumed_from_record"] == 6
    assert_same_content(tmp_path / "whole.h5", out)


@needs_tygem
def test_real_tygem_games_replay_as_sgfmill_replays_them(tmp_path):
    month = REAL_TYGEM / "Kifu" / "2011-03.zip"
    report = run_ingest([month], tmp_path / "m.h5", workers=2, limit=150, val_games=0)
    assert report["totals"]["seen"] == 150 and report["reconciles"]
    with zipfile.ZipFile(month) as z:
        lines = z.read("2011-03").decode("ascii").splitlines()[:150]
    with open_dataset(tmp_path / "m.h5") as ds:
        games = ds.games
        assert set(games["komi"]) == {6.5}
        for g in range(0, len(games["index"]), 10):
            first, n = int(games["first"][g]), int(games["positions"][g])
            stored = ds.positions(np.arange(first, first + n))["stones"][:, -1]
            expected = sgfmill_rows(lines[int(games["index"][g])].split("\t")[1])
            assert np.array_equal(stored, expected), games["index"][g]
