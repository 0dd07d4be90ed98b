"""Streams, archives, directories and the other layouts, hostile ones included."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest

from harness.bench.sgf import generated_sgf
from harness.game.geometry import BLACK, WHITE
from harness.sgf import iter_records, parse_sgf_bytes
from harness.sgf.elf import iter_json_values, policy_orientation, record_from_elf
from harness.sgf.sources import content_kind, unsafe_member_name

FIXTURES = Path(__file__).parent / "fixtures" / "sgf"
GAMES = generated_sgf(12, size=9, seed=5)  # twelve random 9x9 games back to back
SINGLE = (FIXTURES / "handicap_second_node.sgf").read_bytes()


def reasons(records) -> list[str | None]:
    return [r.reject for r in records]


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def tar_bytes(members: dict[str, bytes], mode: str = "w") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "pack"),
    [
        ("games.sgf", lambda b: b),
        ("games.sgf.gz", gzip.compress),
        ("games.sgf.bz2", bz2.compress),
        ("games.sgf.xz", lzma.compress),
        ("games.gz", gzip.compress),  # no inner suffix: sniffed as SGF
        ("two-streams.sgf.gz", lambda b: gzip.compress(b[:1000]) + gzip.compress(b[1000:])),
        ("two-streams.sgf.xz", lambda b: lzma.compress(b[:1000]) + lzma.compress(b[1000:])),
        ("two-streams.sgf.bz2", lambda b: bz2.compress(b[:1000]) + bz2.compress(b[1000:])),
    ],
)
def test_compressed_concatenated_streams(tmp_path, name, pack):
    path = tmp_path / name
    path.write_bytes(pack(GAMES))
    records = list(iter_records(path, chunk_bytes=777))  # small chunks: games span them
    assert reasons(records) == [None] * 12
    assert [r.index for r in records] == list(range(12))
    assert [r.moves for r in records] == [r.moves for r in parse_sgf_bytes(GAMES)]
    assert all(r.source == str(path) for r in records)


@pytest.mark.parametrize(
    ("name", "mode"),
    [("a.tar", "w"), ("a.tar.gz", "w:gz"), ("a.tgz", "w:gz"), ("a.tar.bz2", "w:bz2"),
     ("a.tar.xz", "w:xz")],
)  # fmt: skip
def test_tar_archives(tmp_path, name, mode):
    members = {
        "dir/one.sgf": SINGLE,
        "dir/README.txt": b"not a game",
        "dir/many.sgf.gz": gzip.compress(GAMES),
    }
    path = tmp_path / name
    path.write_bytes(tar_bytes(members, mode))
    records = list(iter_records(path))
    # A member that is not a game file is not read, but says so in the rejects.
    assert records[1].source == f"{path}!dir/README.txt"
    assert records[1].reject == "not a game file by its name 'dir/README.txt' (not read)"
    games = records[:1] + records[2:]
    assert len(games) == 13 and all(r.ok for r in games)
    assert records[0].source == f"{path}!dir/one.sgf"
    assert records[2].source == f"{path}!dir/many.sgf.gz" and records[13].index == 11


def test_zip_archive_with_compressed_members(tmp_path):
    path = tmp_path / "a.zip"
    path.write_bytes(
        zip_bytes({"x/one.SGF": SINGLE, "x/many.sgf.xz": lzma.compress(GAMES), "x/notes.md": b""})
    )
    records = list(iter_records(path))
    assert records[-1].reject == "not a game file by its name 'x/notes.md' (not read)"
    assert len(records) == 14 and all(r.ok for r in records[:-1])
    assert records[0].source == f"{path}!x/one.SGF"


def test_directories_are_read_recursively_in_sorted_order(tmp_path):
    (tmp_path / "b" / "deep").mkdir(parents=True)
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / "deep" / "z.sgf").write_bytes(b"(;GM[1]SZ[9]PB[z];B[ee])")
    (tmp_path / "b" / "a.sgf").write_bytes(b"(;GM[1]SZ[9]PB[ba];B[ee])")
    (tmp_path / "a" / "c.sgf.bz2").write_bytes(bz2.compress(b"(;GM[1]SZ[9]PB[ac];B[ee])"))
    (tmp_path / "a" / "notes.txt").write_bytes(b"(;GM[1]SZ[9]PB[ignored];B[ee])")
    assert [r.black for r in iter_records(tmp_path)] == ["ac", "ba", "z"]
    assert [r.black for r in iter_records([tmp_path / "b" / "a.sgf", tmp_path / "a"])] == [
        "ba",
        "ac",
    ]


def test_missing_file_is_a_rejected_record(tmp_path):
    (record,) = iter_records(tmp_path / "nope.sgf")
    assert record.reject.startswith("cannot open")


# --- hostile input -------------------------------------------------------------


def test_truncated_xz_keeps_the_games_read_so_far(tmp_path):
    data = generated_sgf(40, size=9, seed=9)
    packed = lzma.compress(data)
    path = tmp_path / "cut.sgf.xz"
    path.write_bytes(packed[: len(packed) // 2])
    before = tree(tmp_path)
    records = list(iter_records(path, chunk_bytes=4096))
    good = [r for r in records if r.ok]
    assert 5 < len(good) < 40
    assert [r.moves for r in good] == [r.moves for r in parse_sgf_bytes(data)[: len(good)]]
    (last,) = [r for r in records if not r.ok]
    assert last is records[-1] and last.index == len(good)
    assert last.reject.startswith("truncated xz data: the stream ends early")
    assert tree(tmp_path) == before


def test_corrupt_gzip_is_a_reason_not_an_exception(tmp_path):
    packed = bytearray(gzip.compress(GAMES))
    packed[len(packed) // 2 : len(packed) // 2 + 64] = b"\xff" * 64
    path = tmp_path / "bad.sgf.gz"
    path.write_bytes(bytes(packed))
    records = list(iter_records(path))
    assert records[-1].reject.startswith("corrupt gzip data")


def test_zip_member_with_a_traversal_name_is_rejected_and_nothing_is_written(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    path = work / "evil.zip"
    path.write_bytes(zip_bytes({"../../x.sgf": SINGLE, "/etc/y.sgf": SINGLE, "ok/z.sgf": SINGLE}))
    before = tree(tmp_path)
    records = list(iter_records(path))
    assert reasons(records) == [
        "unsafe member name '../../x.sgf' (not read)",
        "unsafe member name '/etc/y.sgf' (not read)",
        None,
    ]
    assert tree(tmp_path) == before
    assert not (tmp_path / "x.sgf").exists() and not (tmp_path.parent / "x.sgf").exists()


def test_unsafe_member_names():
    for name in ("../a.sgf", "a/../../b.sgf", "/abs.sgf", "C:\\x.sgf", "..\\x.sgf", "a\0.sgf"):
        assert unsafe_member_name(name), name
    for name in ("a.sgf", "dir/b.sgf", "x..y.sgf"):
        assert not unsafe_member_name(name), name


def test_zip_member_declared_beyond_the_limit_is_not_read(tmp_path):
    path = tmp_path / "bomb.zip"
    path.write_bytes(zip_bytes({"big.sgf": b"(;GM[1]" + b"C[" + b"0" * (4 << 20) + b"])"}))
    assert path.stat().st_size < 100_000
    (record,) = iter_records(path, max_member_bytes=1 << 20)
    assert record.reject == "member of 4,194,315 bytes exceeds the 1,048,576 byte limit"


def test_compressed_member_that_inflates_past_the_limit_stops_reading(tmp_path):
    bomb = gzip.compress(GAMES + b"(;GM[1]C[" + b"0" * (8 << 20) + b"])")
    path = tmp_path / "bomb.zip"
    path.write_bytes(zip_bytes({"inner.sgf.gz": bomb}))
    records = list(iter_records(path, max_member_bytes=1 << 20))
    assert reasons(records[:12]) == [None] * 12  # the games before the bomb are kept
    assert len(records) == 13
    assert records[12].reject.startswith("data inflates past 1,048,576 bytes (stopped reading)")


def test_tar_member_declared_beyond_the_limit(tmp_path):
    path = tmp_path / "bomb.tar.xz"
    path.write_bytes(tar_bytes({"big.sgf": b"0" * (3 << 20), "ok.sgf": SINGLE}, "w:xz"))
    records = list(iter_records(path, max_member_bytes=1 << 20))
    assert records[0].reject.startswith("member of 3,145,728 bytes exceeds")
    assert records[1].ok


def test_binary_junk_named_sgf(tmp_path):
    path = tmp_path / "junk.sgf"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 20000, dtype=np.uint8).tobytes())
    assert reasons(iter_records(path)) == ["binary data, not SGF"]


def test_a_stray_nul_in_a_name_does_not_make_a_file_binary(tmp_path):
    path = tmp_path / "nul.sgf"
    path.write_bytes(b"(;GM[1]SZ[9]PB[a\0b]PW[c];B[ee];W[cc])")
    (record,) = iter_records(path)
    assert record.ok and len(record.moves) == 2


def test_corrupt_archives(tmp_path):
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04" + b"garbage" * 10)
    (record,) = iter_records(tmp_path / "bad.zip")
    assert record.reject.startswith("unreadable zip archive")
    packed = tar_bytes({"a.sgf": SINGLE, "b.sgf": GAMES}, "w:gz")
    (tmp_path / "cut.tar.gz").write_bytes(packed[: len(packed) * 2 // 3])
    records = list(iter_records(tmp_path / "cut.tar.gz"))
    assert records[0].ok and not records[-1].ok


def test_content_kind():
    assert content_kind("a.SGF") == "sgf"
    assert content_kind("a.sgf.xz") == "sgf"
    assert content_kind("a.sgfs") == "sgf"
    assert content_kind("x.json.gz") == "json"
    assert content_kind("x.tgz") == "tar"
    assert content_kind("x.tar.bz2") == "tar"
    assert content_kind("x.zip") == "zip"
    assert content_kind("README") is None


# --- KataGo .sgfs --------------------------------------------------------------

KATAGO = (
    b"(;FF[4]GM[1]SZ[9]PB[kata]PW[kata]HA[0]KM[7]RU[koPOSITIONALscoreAREAtaxNONEsui1]RE[0]"
    b"C[startTurnIdx=0];B[ee]C[0.49 0.49 0.02 v=600];W[]C[0.50 0.48 result=0])\n"
    b"(;FF[4]GM[1]SZ[9]KM[7]RU[koSIMPLEscoreAREAtaxNONEsui0]RE[Void];B[ee];W[cc])\n"
    b"(;FF[4]GM[1]SZ[9:11]KM[6]RE[B+R];B[ee])\n"
)


def test_katago_sgfs_one_game_per_line(tmp_path):
    path = tmp_path / "selfplay.sgfs"
    path.write_bytes(KATAGO)
    first, second, third = iter_records(path, keep_comments=True)
    assert first.rules == "koPOSITIONALscoreAREAtaxNONEsui1"
    assert first.result.kind == "draw" and first.komi == 7.0
    assert first.comments == {0: "0.49 0.49 0.02 v=600", 1: "0.50 0.48 result=0"}
    assert first.moves[1] == (WHITE, 81)
    assert second.result.kind == "void"
    assert third.reject == "rectangular board 9x11 unsupported"


# --- ELF OpenGo JSON -----------------------------------------------------------

ELF_MOVES = ["pd", "dd", "pq", "dp", "fc", "", ""]  # two passes at the end


def elf_policies(moves: list[str], transform=lambda b: b) -> list[list[int]]:
    """Visit counts on ELF's padded 21x21 board: the played move gets the most."""
    rng = np.random.default_rng(1)
    out = []
    for move in moves:
        board = rng.integers(0, 50, (19, 19))
        pass_count = 3
        if move:
            board[ord(move[1]) - 97, ord(move[0]) - 97] = 900
        else:
            pass_count = 900
        padded = np.zeros((21, 21), int)
        padded[1:20, 1:20] = transform(board)
        padded[0, 0] = pass_count
        out.append(padded.reshape(-1).tolist())
    return out


def elf_record(moves=ELF_MOVES, transform=lambda b: b, reward=1.0) -> dict:
    content = "(;" + ";".join(f"{'BW'[i % 2]}[{m}]" for i, m in enumerate(moves)) + ")"
    return {
        "request": {},
        "result": {
            "num_move": len(moves),
            "reward": reward,
            "content": content,
            "policies": elf_policies(moves, transform),
        },
    }


def test_elf_record_visits_follow_the_played_moves():
    record = record_from_elf(elf_record(), "elf.json", 0)
    assert record.ok and record.size == 19 and record.komi == 7.5
    assert record.moves[0] == (BLACK, 3 * 19 + 15)  # pd
    assert record.result.winner == BLACK and record.result.kind == "score"  # ends in passes
    assert record.visits.shape == (7, 362) and record.visits.dtype == np.float32
    np.testing.assert_allclose(record.visits.sum(axis=1), 1.0, rtol=1e-5)
    assert [int(np.argmax(v)) for v in record.visits] == [p for _, p in record.moves]


@pytest.mark.parametrize("k", range(1, 8))
def test_elf_orientation_is_detected_from_the_moves(k):
    # Store the visits in another of the eight orientations: the reader finds
    # which one agrees with the moves played and undoes it.
    from harness.sgf.elf import _symmetries

    inverse = {0: 0, 1: 1, 2: 6, 3: 3, 4: 4, 5: 5, 6: 2, 7: 7}

    def transform(board):
        return _symmetries(board)[inverse[k]]

    record = record_from_elf(elf_record(transform=transform), "elf.json", 0)
    assert [int(np.argmax(v)) for v in record.visits] == [p for _, p in record.moves]


def test_elf_orientation_prefers_identity_without_evidence():
    visits = np.zeros((2, 19, 19))
    assert policy_orientation(np.array([361, 361]), visits) == (0, 0)


def test_elf_resignation_and_mismatched_policies():
    record = record_from_elf(elf_record(ELF_MOVES[:5], reward=-1.0), "elf.json", 0)
    assert record.result.winner == WHITE and record.result.kind == "resign"
    bad = elf_record()
    bad["result"]["policies"].pop()
    assert record_from_elf(bad, "elf.json", 3).reject == "ELF record: 6 policies for 7 moves"
    assert record_from_elf({"x": 1}, "e", 0).reject == "ELF record without a 'content' move list"


@pytest.mark.parametrize("layout", ["lines", "array", "pretty", "lines.xz"])
def test_elf_files_in_every_layout(tmp_path, layout):
    values = [elf_record(), elf_record(ELF_MOVES[:5], reward=-1.0)]
    if layout == "array":
        text = json.dumps(values)
    elif layout == "pretty":
        text = "\n".join(json.dumps(v, indent=2) for v in values)
    else:
        text = "\n".join(json.dumps(v) for v in values) + "\n"
    path = tmp_path / ("elf.json.xz" if layout.endswith("xz") else "elf.json")
    data = text.encode()
    path.write_bytes(lzma.compress(data) if layout.endswith("xz") else data)
    records = list(iter_records(path, chunk_bytes=1000))
    assert reasons(records) == [None, None]
    assert [r.result.winner for r in records] == [BLACK, WHITE]
    assert records[1].index == 1 and records[1].visits.shape == (5, 362)


def test_bad_json_line_is_rejected_and_reading_goes_on():
    good = json.dumps(elf_record())
    lines = [good, '{"result": {"content": ', good, "broken", '"more": 1,', good]
    chunks = [("\n".join(lines) + "\n").encode()]
    values = list(iter_json_values(chunks))
    kinds = [type(v).__name__ for v in values]
    assert kinds == ["dict", "JsonProblem", "dict", "JsonProblem", "dict"]


def test_truncated_json_array():
    text = json.dumps([elf_record(), elf_record()])
    values = list(iter_json_values([text[: len(text) - 300].encode()]))
    assert isinstance(values[0], dict)
    assert values[-1].reason.startswith("bad or truncated JSON array")


def test_environment_is_not_touched(tmp_path):
    # Reading archives never creates files next to them or in the working directory.
    path = tmp_path / "a.tar.gz"
    path.write_bytes(tar_bytes({"../../escape.sgf": SINGLE, "ok.sgf": SINGLE}, "w:gz"))
    cwd = set(os.listdir(Path.cwd()))
    records = list(iter_records(path))
    assert reasons(records) == ["unsafe member name '../../escape.sgf' (not read)", None]
    assert set(os.listdir(Path.cwd())) == cwd
    assert tree(tmp_path) == ["a.tar.gz"]
