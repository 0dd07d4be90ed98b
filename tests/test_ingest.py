"""``harness ingest`` end to end: real archives, independent replay, crashes, hostile input.

Real-data tests read ``../shared/data`` and skip when it is absent. The
independent reference for positions is sgfmill (its own SGF parser and its
own board), not the harness's replay.
"""

from __future__ import annotations

import csv
import json
import lzma
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import h5py
import numpy as np
import pytest

from harness.data.dataset import check_file, open_dataset
from harness.data.ingest import IngestConfig, IngestError, ingest
from harness.data.journal import journal_dir
from harness.data.layout import DatasetError
from harness.data.synthetic import random_sgf, write_random_sgfs
from harness.devdata import dev_data_dir
from harness.game.geometry import BLACK, WHITE

REPO = Path(__file__).resolve().parents[1]
DATA = dev_data_dir()
DEV_SGF = DATA / "dev-sgf"
DEV_ALL = DATA / "archives" / "dev-all.sgf.xz"
needs_dev_sgf = pytest.mark.skipif(not DEV_SGF.is_dir(), reason=f"{DEV_SGF} absent (dev data)")
needs_dev_all = pytest.mark.skipif(not DEV_ALL.is_file(), reason=f"{DEV_ALL} absent (dev data)")
# A dev game whose move 242 is on an occupied point (it must be rejected).
ILLEGAL_DEV_GAME = "Sweeper/2016.09.04 扫地僧2016 vs syknyk (43772425).SGF"


def run_ingest(sources, output, **options) -> dict:
    config = IngestConfig(
        sources=[str(s) for s in sources], output=output, progress=False, **options
    )
    ingest(config)
    return json.loads(output.with_name(output.stem + ".report.json").read_text())


def assert_same_content(a: Path, b: Path) -> None:
    """Every dataset and attribute equal (except the creation time)."""
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        names_a, names_b = [], []
        fa.visit(names_a.append)
        fb.visit(names_b.append)
        assert names_a == names_b
        for name in names_a:
            if isinstance(fa[name], h5py.Dataset):
                assert np.array_equal(fa[name][...], fb[name][...]), name
        attrs_a = {k: v for k, v in fa.attrs.items() if k != "created"}
        attrs_b = {k: v for k, v in fb.attrs.items() if k != "created"}
        assert attrs_a.keys() == attrs_b.keys()
        for key in attrs_a:
            assert np.array_equal(attrs_a[key], attrs_b[key]), key


def print_reconciliation(report: dict) -> None:
    for name, c in [*report["sources"].items(), ("TOTAL", report["totals"])]:
        print(
            f"{name}: seen {c['seen']} = kept {c['kept']} + duplicates {c['duplicates']} "
            f"+ rejected {c['rejected']} {c['rejected_by_reason']}; positions {c['positions']}"
        )


def check_reconciles(report: dict, output: Path) -> None:
    for counts in [*report["sources"].values(), report["totals"]]:
        assert counts["seen"] == counts["kept"] + counts["duplicates"] + counts["rejected"]
        assert counts["rejected"] == sum(counts["rejected_by_reason"].values())
    with open_dataset(output) as ds:
        lengths = ds.games["length"]
        assert len(lengths) == report["totals"]["kept"]
        assert ds.n_positions == lengths.sum() == report["totals"]["positions"]


# --- real data ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dev_sample(tmp_path_factory):
    """Every 25th dev file plus the known illegal one, ingested with two workers."""
    if not DEV_SGF.is_dir():
        pytest.skip(f"{DEV_SGF} absent (dev data)")
    folder = tmp_path_factory.mktemp("dev")
    files = sorted(p for p in DEV_SGF.rglob("*") if p.is_file())[::25]
    files.append(DEV_SGF / ILLEGAL_DEV_GAME)
    links = folder / "sample"
    links.mkdir()
    for i, f in enumerate(files):
        (links / f"{i:04d}-{f.name}").symlink_to(f)
    output = folder / "sample.h5"
    report = run_ingest([links], output, workers=2, val_games=0.1, cazenave_val=True)
    return output, report, len(files)


def test_dev_sample_counts_reconcile(dev_sample):
    output, report, files = dev_sample
    print_reconciliation(report)
    check_reconciles(report, output)
    assert report["totals"]["seen"] == files  # one game per dev file
    assert report["totals"]["rejected_by_reason"] == {"illegal move (occupied point)": 1}
    assert report["bytes_per_position"] < 300


def test_positions_are_the_main_line_moves_counted_by_sgfmill(dev_sample):
    from sgfmill import sgf

    output, _, _ = dev_sample
    counted = 0
    with open_dataset(output) as ds:
        for source, length in zip(ds.games["source"], ds.games["length"], strict=True):
            try:
                game = sgf.Sgf_game.from_bytes(Path(source).read_bytes())
            except ValueError:
                continue  # sgfmill cannot read a few real files
            moves = [node for node in game.get_main_sequence() if node.get_move()[0]]
            assert len(moves) == length, source
            counted += 1
    assert counted >= 0.9 * len(ds.games["length"])


def _sgfmill_positions(path: Path, move_number: int, history: int):
    """Stones before ``move_number`` (and ``history - 1`` earlier), replayed by sgfmill."""
    from sgfmill import sgf, sgf_moves

    game = sgf.Sgf_game.from_bytes(path.read_bytes())
    board, plays = sgf_moves.get_setup_and_moves(game)
    size = board.side

    def stones():
        out = np.zeros(size * size, np.int8)
        for colour, (row, col) in board.list_occupied_points():
            out[(size - 1 - row) * size + col] = BLACK if colour == "b" else WHITE
        return out

    before = [np.zeros(size * size, np.int8)] * history + [stones()]
    for colour, move in plays[:move_number]:
        if move is not None:
            board.play(move[0], move[1], colour)
        before.append(stones())
    colour, move = plays[move_number]
    point = size * size if move is None else (size - 1 - move[0]) * size + move[1]
    return np.array(before[-history:]), point, BLACK if colour == "b" else WHITE


def test_stored_positions_match_an_independent_replay_of_the_sgf(dev_sample):
    output, _, _ = dev_sample
    rng = np.random.default_rng(2024)
    checked = 0
    with open_dataset(output) as ds:
        rows = np.sort(rng.choice(ds.n_positions, 40, replace=False))
        got = ds.positions(rows, history=3)
        sources = ds.games["source"]
        for i in range(len(rows)):
            source = Path(sources[got["game_id"][i]])
            try:
                expected, move, colour = _sgfmill_positions(source, int(got["move_number"][i]), 3)
            except ValueError:
                continue  # sgfmill cannot read a few real files
            assert np.array_equal(got["stones"][i], expected), (source, got["move_number"][i])
            assert got["move"][i] == move and got["to_play"][i] == colour
            checked += 1
    assert checked >= 30


@pytest.mark.slow
@needs_dev_sgf
@needs_dev_all
def test_whole_dev_data_ingests_and_reconciles(tmp_path):
    reports = {}
    for name, source in (("dir", DEV_SGF), ("archive", DEV_ALL)):
        output = tmp_path / f"{name}.h5"
        reports[name] = report = run_ingest([source], output, val_games=0.05, cazenave_val=True)
        print_reconciliation(report)
        print(f"{name}: {report['bytes_per_position']} bytes/position, {report['seconds']} s")
        check_reconciles(report, output)
    a, b = reports["dir"]["totals"], reports["archive"]["totals"]
    assert a == b  # the same games, packed two ways
    assert a["seen"] == 4029
    with open_dataset(tmp_path / "dir.h5") as da, open_dataset(tmp_path / "archive.h5") as db:
        assert np.array_equal(da.games["digest"], db.games["digest"])
        assert np.array_equal(da.games["split"], db.games["split"])  # splits follow the games


# --- determinism, crashes and resume ---------------------------------------------------------


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("synthetic")
    write_random_sgfs(folder / "a.sgf", 60, size=9, moves=30, seed=0)
    write_random_sgfs(folder / "b.sgf", 60, size=9, moves=30, seed=1000)
    (folder / "c.sgf").write_text(random_sgf(5, moves=30))  # a duplicate of a.sgf's game 5
    return folder


def test_output_does_not_depend_on_the_number_of_workers(synthetic, tmp_path):
    options = {"board_size": 9, "val_games": 10, "test_games": 0.1, "cazenave_val": True}
    one = run_ingest([synthetic], tmp_path / "one.h5", workers=1, **options)
    two = run_ingest([synthetic], tmp_path / "two.h5", workers=2, commit_games=7, **options)
    assert_same_content(tmp_path / "one.h5", tmp_path / "two.h5")
    assert one["totals"] == two["totals"] and one["totals"]["duplicates"] == 1


def test_an_interrupted_ingest_resumes_to_the_same_file(synthetic, tmp_path):
    options = {"board_size": 9, "val_games": 10, "workers": 1, "commit_games": 10}
    run_ingest([synthetic], tmp_path / "whole.h5", **options)
    out = tmp_path / "cut.h5"
    ingest(
        IngestConfig(
            sources=[str(synthetic)], output=out, progress=False, stop_after_records=55, **options
        )
    )  # dies with 5 records uncommitted
    assert not out.exists() and len(list(journal_dir(out).glob("shard-*.h5"))) == 5
    with pytest.raises(DatasetError, match="--resume"):
        check_file(out)
    with pytest.raises(IngestError, match="--resume"):
        run_ingest([synthetic], out, **options)
    report = run_ingest([synthetic], out, resume=True, **{**options, "workers": 2})
    assert report["resumed_from_record"] == 50
    assert_same_content(tmp_path / "whole.h5", out)
    assert not journal_dir(out).exists()


@needs_dev_all
def test_sigkill_midway_then_resume_gives_the_uninterrupted_file(tmp_path):
    args = [str(DEV_ALL), "--limit", "300", "--commit-games", "25", "--quiet", "--workers", "2"]
    reference = tmp_path / "reference.h5"
    run_ingest([DEV_ALL], reference, limit=300, workers=1)
    out = tmp_path / "killed.h5"
    command = [sys.executable, "-m", "harness", "ingest", *args, "-o", str(out)]
    process = subprocess.Popen(
        command, cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    journal = journal_dir(out)
    deadline = time.monotonic() + 120
    while not (journal / "shard-000002.h5").exists():
        assert process.poll() is None, process.stderr.read().decode()
        assert time.monotonic() < deadline, "no shard committed in time"
        time.sleep(0.01)
    os.killpg(process.pid, signal.SIGKILL)  # the ingest and its workers
    process.wait()
    process.stderr.close()
    assert not out.exists()
    for leftover in (out, out.with_name(out.name + ".partial")):
        with pytest.raises(DatasetError):
            check_file(leftover)
    resumed = subprocess.run(
        [*command, "--resume"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(out.with_name("killed.report.json").read_text())
    assert 0 < report["resumed_from_record"] < 300
    assert_same_content(reference, out)


# --- hostile input ---------------------------------------------------------------------------


def test_hostile_archives_are_rejected_with_reasons_and_nothing_escapes(tmp_path, monkeypatch):
    inputs = tmp_path / "deep" / "inputs"
    inputs.mkdir(parents=True)
    games = "".join(random_sgf(i) for i in range(20)).encode()
    packed = lzma.compress(games)
    (inputs / "truncated.sgf.xz").write_bytes(packed[: len(packed) // 2])
    with zipfile.ZipFile(inputs / "escape.zip", "w") as z:
        z.writestr("../../x.sgf", random_sgf(99))
        z.writestr("ok.sgf", random_sgf(98))
    with zipfile.ZipFile(inputs / "bomb.zip", "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("big.sgf", b"(;SZ[9]" + b" " * (30 << 20) + b")")  # 30 MB -> 30 kB
    (inputs / "junk.sgf").write_bytes(np.random.default_rng(0).bytes(4096))
    before = sorted(p for p in tmp_path.rglob("*"))
    monkeypatch.chdir(inputs)  # where ../../x.sgf would land if a name were trusted
    out = tmp_path / "deep" / "out" / "hostile.h5"
    out.parent.mkdir()
    report = run_ingest([inputs], out, board_size=9, max_member_bytes=1 << 20, workers=2)
    reasons = {}
    with open(out.with_name("hostile.rejects.csv"), newline="") as f:
        for row in csv.DictReader(f):
            name = row["source"].removeprefix(f"{inputs}/")
            reasons.setdefault(name, []).append(row["reason"])
    assert "exceeds the 1,048,576 byte limit" in reasons["bomb.zip!big.sgf"][0]
    assert "unsafe member name" in reasons["escape.zip!../../x.sgf"][0]
    assert "binary" in reasons["junk.sgf"][0]
    assert "truncated xz" in reasons["truncated.sgf.xz"][0]
    assert report["totals"]["kept"] >= 1 + 5  # ok.sgf and the games before the cut
    after = sorted(p for p in tmp_path.rglob("*"))
    new = {p.relative_to(tmp_path).as_posix() for p in set(after) - set(before)}
    assert new == {
        "deep/out",
        "deep/out/hostile.h5",
        "deep/out/hostile.report.json",
        "deep/out/hostile.rejects.csv",
    }
    assert not (tmp_path / "x.sgf").exists() and not (REPO / "x.sgf").exists()


def test_the_report_states_peak_memory_of_the_process_and_its_workers(synthetic, tmp_path):
    import resource

    report = run_ingest([synthetic], tmp_path / "m.h5", workers=2, board_size=9)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # a Python process with numpy and h5py loaded holds tens of MiB at least
    assert 20 < report["peak_rss_mib"] <= own + 0.1
    assert report["peak_worker_rss_mib"] > 20
