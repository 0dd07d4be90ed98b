"""A bad archive member costs that member: one reject under its own name, the rest is read.

Regression tests of issue 41 (bullets 2 and 3); each failed before its fix.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import zipfile
from pathlib import Path

import pytest

from harness.data.synthetic import random_sgf
from harness.sgf import iter_records, sources


def _member_offset(data: bytes, name: str) -> int:
    """Where a zip member's compressed bytes start."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.getinfo(name)
    return info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)


def zip_with_corrupt_member(path: Path, corrupt: str) -> Path:
    """Ten deflated games g0..g9; the compressed bytes of ``corrupt`` are scrambled."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(10):
            archive.writestr(f"g{i}.sgf", random_sgf(i))
    data = bytearray(buffer.getvalue())
    start = _member_offset(bytes(data), corrupt)
    for k in range(start + 5, start + 25):
        data[k] ^= 0x55
    path.write_bytes(bytes(data))
    return path


def read(path: Path) -> list[tuple[str, int, str | None]]:
    """(member name, index, reject) of every record of ``path``."""
    return [(r.source.rpartition("!")[2], r.index, r.reject) for r in iter_records(path)]


# --- bullet 2: a corrupt member ends the archive under the wrong name ----------------------


def test_a_corrupt_zip_member_is_one_reject_under_its_name_and_the_rest_is_read(tmp_path):
    records = read(zip_with_corrupt_member(tmp_path / "a.zip", "g4.sgf"))
    assert [name for name, _, _ in records] == [f"g{i}.sgf" for i in range(10)]
    rejects = {name: reason for name, _, reason in records if reason is not None}
    assert list(rejects) == ["g4.sgf"]
    assert rejects["g4.sgf"].startswith("read error: ")  # the stream's own reason, not a crash


def test_an_unexpected_error_in_one_zip_member_costs_only_that_member(tmp_path, monkeypatch):
    path = zip_with_corrupt_member(tmp_path / "a.zip", "g9.sgf")
    real = sources.read_stream

    def fragile(fileobj, label, name, options):  # a generator, like read_stream
        if name == "g2.sgf":
            raise RuntimeError("boom")
        yield from real(fileobj, label, name, options)

    monkeypatch.setattr(sources, "read_stream", fragile)
    records = read(path)
    assert ("g2.sgf", 0, "internal error: RuntimeError: boom") in records
    assert [name for name, _, _ in records] == [f"g{i}.sgf" for i in range(10)]


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("mode", ["w", "w:gz"])
def test_a_corrupt_compressed_tar_member_is_one_reject_and_the_rest_is_read(tmp_path, mode):
    bad = bytearray(gzip.compress(random_sgf(9).encode()))
    for k in range(12, 30):
        bad[k] ^= 0x55
    path = tmp_path / ("a.tar" if mode == "w" else "a.tar.gz")
    with tarfile.open(path, mode) as tar:
        _add(tar, "g0.sgf", random_sgf(0).encode())
        _add(tar, "g1.sgf.gz", bytes(bad))
        _add(tar, "g2.sgf", random_sgf(2).encode())
    with open(path, "ab") as f:
        f.write(b"trailing junk")
    records = read(path)
    assert [(n, r is None) for n, _, r in records] == [
        ("g0.sgf", True), ("g1.sgf.gz", False), ("g2.sgf", True)
    ]


@pytest.mark.parametrize("suffix, compress", [(".gz", gzip.compress), (".bz2", bz2.compress),
                                              (".xz", lzma.compress)])
def test_trailing_junk_after_a_compressed_stream_keeps_every_game(tmp_path, suffix, compress):
    path = tmp_path / f"two.sgf{suffix}"
    path.write_bytes(compress((random_sgf(1) + random_sgf(2)).encode()) + b"junk at the end")
    records = read(path)
    assert [(i, r is None) for _, i, r in records] == [(0, True), (1, True), (2, False)]
    assert records[2][2].startswith("corrupt ")


# --- bullet 3: a byte-order mark glued to the first kifu game id ---------------------------

TYGEM = Path(__file__).parent / "fixtures" / "kifu" / "tygem"
BOM = b"\xef\xbb\xbf"


def _zip_one(path: Path, name: str, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)


def test_a_zipped_kifu_month_and_index_starting_with_a_bom_keep_their_first_game(tmp_path):
    month = BOM + (TYGEM / "Kifu" / "2011-01").read_bytes()
    _zip_one(tmp_path / "Kifu" / "2011-01.zip", "2011-01", month)
    index = BOM + (TYGEM / "index" / "Kifu2011.index").read_bytes()
    _zip_one(tmp_path / "index" / "Kifu2011.zip", "Kifu2011.index", index)
    first = next(iter_records(tmp_path / "Kifu" / "2011-01.zip"))
    assert first.ok and first.properties["GN"] == "1001"
    assert (first.black, first.white) == ("blackid", "whiteid")  # joined with its index row


def test_a_bom_split_across_one_byte_chunks_is_still_dropped():
    from harness.sgf.kifu import iter_lines

    data = BOM + b"1001\t;B[pd]\n1002\t;B[qd]"
    lines = list(iter_lines((data[i:i + 1] for i in range(len(data))), 1000))
    assert lines == [b"1001\t;B[pd]", b"1002\t;B[qd]"]


def test_an_archive_inside_an_archive_is_one_reject_and_the_rest_is_read(tmp_path):
    inner = zip_with_corrupt_member(tmp_path / "inner.zip", "g3.sgf").read_bytes()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("a.sgf", random_sgf(20))
        archive.writestr("more/games.zip", inner)
        archive.writestr("b.sgf", random_sgf(21))
    path = tmp_path / "outer.zip"
    path.write_bytes(buffer.getvalue())
    records = read(path)
    assert [(name, reason) for name, _, reason in records] == [
        ("a.sgf", None), ("more/games.zip", "nested archive (not read)"), ("b.sgf", None)]
