"""The development data: every file and archive read, every game replayed or rejected.

Skipped, with the reason, when ``../shared/data`` is absent. Run with ``-s``
to see the counts by reason.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from sgfmill import boards as sgfmill_boards
from sgfmill import sgf as sgfmill_sgf

from harness.devdata import dev_data_dir
from harness.game.geometry import BLACK, WHITE
from harness.sgf import ReplayError, iter_records, replay_positions
from harness.sgf.record import normalise_komi

DATA = dev_data_dir()
DEV = DATA / "dev-sgf"
ARCHIVES = DATA / "archives"

pytestmark = pytest.mark.skipif(
    not DEV.is_dir(), reason=f"development data not found at {DATA} (set HARNESS_DEV_DATA)"
)


def read_and_replay(source) -> list:
    """Records of a source, replayed: ``reject`` set on those that do not replay."""
    records = list(iter_records(source))
    for record in records:
        if record.ok:
            try:
                replay_positions(record)
            except ReplayError as exc:
                record.reject = str(exc)
    return records


def report(title: str, records) -> Counter:
    reasons = Counter(r.reject or "read and replayed" for r in records)
    print(f"\n{title}: {len(records)} games")
    for reason, count in reasons.most_common():
        print(f"  {count:6d}  {reason}")
    return reasons


def game_key(record) -> tuple:
    return (record.size, tuple(record.moves), tuple(sorted(record.setup_black)), record.black)


@pytest.fixture(scope="module")
def dev_records():
    return read_and_replay(DEV)


def test_every_dev_file_is_read_and_replayed_or_rejected_with_a_reason(dev_records):
    files = [Path(folder) / f for folder, _, names in os.walk(DEV) for f in names]
    reasons = report("dev-sgf", dev_records)
    reads = reasons.pop("read and replayed")
    rejects = sum(reasons.values())
    # Each development file holds one game (variations are not games).
    assert reads + rejects == len(files) == len(dev_records)
    assert Counter(r.source for r in dev_records) == Counter(str(f) for f in files)
    assert all(r.reject for r in dev_records if not r.ok)
    assert reads >= 0.99 * len(files)


@pytest.mark.skipif(not (ARCHIVES / "dev-all.sgf.xz").exists(), reason="dev-all.sgf.xz absent")
def test_concatenated_xz_archive_holds_the_same_games_as_dev_sgf(dev_records):
    packed = read_and_replay(ARCHIVES / "dev-all.sgf.xz")
    report("dev-all.sgf.xz", packed)
    assert len(packed) == len(dev_records)
    assert Counter(map(game_key, packed)) == Counter(map(game_key, dev_records))
    assert Counter(r.reject for r in packed) == Counter(r.reject for r in dev_records)


@pytest.mark.parametrize(
    ("archive", "folder"),
    [
        ("fineart.sgf.bz2", "FineArt"),
        ("jin-mao-ce-shi.tar.gz", "Jin Mao Ce Shi"),
        ("li-long.zip", "Li Long"),
    ],
)
def test_each_archive_matches_its_folder(dev_records, archive, folder):
    path = ARCHIVES / archive
    if not path.exists():
        pytest.skip(f"{path} absent")
    packed = read_and_replay(path)
    report(archive, packed)
    loose = [r for r in dev_records if Path(r.source).parent.name == folder]
    assert len(packed) == len(loose) > 0
    assert Counter(map(game_key, packed)) == Counter(map(game_key, loose))
    assert Counter(r.reject for r in packed) == Counter(r.reject for r in loose)
    if "!" in packed[0].source:  # archive members keep their names
        members = {r.source.split("!", 1)[1] for r in packed}
        assert members == {f"{folder}/{Path(r.source).name}" for r in loose}


def test_sgfmill_agrees_on_a_sample(dev_records):
    """An independent reader and board: moves, setup, komi, names, final position."""
    # Every 20th game, and every game whose file has variations (main line only).
    sample = [
        r
        for i, r in enumerate(dev_records)
        if i % 20 == 0 or Path(r.source).read_bytes().count(b"(;") > 1
    ]
    compared = boards = 0
    for record in sample:
        game = sgfmill_sgf.Sgf_game.from_bytes(Path(record.source).read_bytes())
        root = game.get_root()
        size = game.get_size()
        assert size == record.size
        theirs = []
        for node in game.get_main_sequence():
            colour, move = node.get_move()
            if colour is None:
                continue
            point = size * size if move is None else (size - 1 - move[0]) * size + move[1]
            theirs.append((BLACK if colour == "b" else WHITE, point))
        assert theirs == record.moves, record.source
        black, white = set(), set()
        for node in game.get_main_sequence():
            if node.get_move()[0] is not None:
                break
            if node.has_setup_stones():
                b, w, e = node.get_setup_stones()
                black, white = (black - w - e) | b, (white - b - e) | w
        assert sorted((size - 1 - r) * size + c for r, c in black) == sorted(record.setup_black)
        assert sorted((size - 1 - r) * size + c for r, c in white) == sorted(record.setup_white)
        if root.has_property("KM"):
            assert normalise_komi(root.get_raw("KM").decode()) == record.komi
        try:
            name = game.get_player_name("b")
        except (ValueError, UnicodeDecodeError):
            name = None
        if name is not None and "\ufffd" not in name:
            assert name.strip() == record.black, record.source
        compared += 1
        if record.ok:
            board = sgfmill_boards.Board(size)
            board.apply_setup(black, white, set())
            for colour, point in record.moves:
                if point < size * size:
                    row, col = divmod(point, size)
                    board.play(size - 1 - row, col, "b" if colour == BLACK else "w")
            final = np.zeros(size * size, np.int8)
            for colour, (r, c) in board.list_occupied_points():
                final[(size - 1 - r) * size + c] = BLACK if colour == "b" else WHITE
            assert np.array_equal(final, replay_positions(record)[-1]), record.source
            boards += 1
    print(f"\nsgfmill cross-check: {compared} games compared, {boards} final positions")
    assert compared == len(sample) and boards >= 0.95 * len(sample)


FORMATS = DATA / "formats"


@pytest.mark.skipif(not FORMATS.is_dir(), reason="format samples absent")
def test_engine_layout_samples():
    records = {Path(r.source).name + f"#{r.index}": r for r in read_and_replay(FORMATS)}
    report("formats", records.values())
    elf = records["elf_selfplay_record_SYNTHETIC.json#0"]
    assert elf.ok and elf.size == 19 and elf.komi == 7.5 and len(elf.moves) == 3
    assert elf.result.winner == WHITE  # reward -1: Black's view
    assert elf.visits.shape == (3, 362)
    np.testing.assert_allclose(elf.visits.sum(axis=1), 1.0, rtol=1e-5)
    kata = [r for name, r in records.items() if name.startswith("katago")]
    assert [r.reject for r in kata] == ["rectangular board 9x11 unsupported"] * 2
    lz = [r for name, r in records.items() if name.startswith("lz_all")]
    assert [r.reject is None for r in lz] == [True, True, False, True]
    assert lz[2].reject == "truncated game: the next game starts before this one closes"
    assert lz[0].moves[-2:] == [(BLACK, 361), (WHITE, 361)]  # tt passes
    assert [r.result.to_sgf() for r in lz if r.ok] == ["B+3.5", "W+R", "W+R"]
