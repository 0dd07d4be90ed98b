"""Every game record in any mix of files, archives and directories, streamed.

``iter_records`` reads single ``.sgf`` files, multi-game and concatenated
files (Leela Zero ``all.sgf``, KataGo ``.sgfs``), ELF OpenGo JSON records,
``.gz``/``.bz2``/``.xz`` compressed files, ``.tar`` (plain or compressed) and
``.zip`` archives (members may be compressed themselves), and directories
(recursively, in sorted order so that runs are reproducible).

Guarantees, because ingest runs for hours over data nobody checked:

- Streamed: nothing is extracted to disk and no archive or member is held in
  memory; a concatenated stream is cut into games as it is decompressed, at
  most one unfinished game (``max_game_bytes``) being buffered.
- Bounded: a file or member that decompresses past ``max_member_bytes`` is
  rejected (declared sizes are checked before reading when the archive gives
  them) rather than read to the end.
- Every game seen is yielded, rejected ones with ``reject`` set, so reads +
  rejects = games seen. A problem that is not one game (a truncated or corrupt
  stream, an unreadable archive, binary junk) is yielded as one rejected
  record for its source; games read before it are kept.
- No exception escapes the iterator for bad data.
- Archive member names are labels only (``archive!member``), never paths we
  open or write; names that try to leave the archive (``../x``, ``/etc/x``)
  are rejected without reading the member.
"""

from __future__ import annotations

import os
import tarfile
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from harness.sgf import kifu
from harness.sgf.elf import ELF_KOMI, ELF_SIZE, JsonProblem, iter_json_values, record_from_elf
from harness.sgf.parser import GameSplitter, OversizedGame
from harness.sgf.record import (
    GameRecord,
    exception_reason,
    guarded_record,
    looks_binary,
    no_game_reason,
    record_from_game,
)
from harness.sgf.streams import (
    SUFFIX_KIND,
    CorruptStream,
    StreamTooLarge,
    bounded,
    inflate,
    read_chunks,
    sniff,
)

SGF_SUFFIXES = (".sgf", ".sgfs", ".mgt")
JSON_SUFFIXES = (".json", ".jsonl", ".ndjson")
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tbz", ".tar.xz", ".txz")
ZIP_SUFFIXES = (".zip",)

DEFAULT_MAX_MEMBER_BYTES = 1 << 30  # also harness ingest's --max-member-bytes
DEFAULT_MAX_GAME_BYTES = 64 << 20


@dataclass(frozen=True)
class ReadOptions:
    max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES
    max_game_bytes: int = DEFAULT_MAX_GAME_BYTES
    chunk_bytes: int = 1 << 20
    keep_comments: bool = False
    elf_size: int = ELF_SIZE
    elf_komi: float = ELF_KOMI
    kifu_index: kifu.IndexFinder = kifu.NO_INDEX  # set per file by read_path


def iter_records(
    sources: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES,
    max_game_bytes: int = DEFAULT_MAX_GAME_BYTES,
    chunk_bytes: int = 1 << 20,
    keep_comments: bool = False,
    elf_size: int = ELF_SIZE,
    elf_komi: float = ELF_KOMI,
) -> Iterator[GameRecord]:
    """Records of every game in ``sources`` (see the module docstring)."""
    options = ReadOptions(
        max_member_bytes, max_game_bytes, chunk_bytes, keep_comments, elf_size, elf_komi
    )
    if isinstance(sources, str | os.PathLike):
        sources = [sources]
    for source in sources:
        path = Path(source)
        for file in walk(path) if path.is_dir() else [path]:
            yield from _guarded(read_path(file, options), str(file))


def _guarded(records: Iterator[GameRecord], source: str) -> Iterator[GameRecord]:
    """``records``, but an unexpected exception ends only them, as one reject.

    Used per file and per archive member, so that a member nobody anticipated
    costs that member and the archive's other members are still read. The
    records yielded before it are kept; the reject takes the next index of the
    last source seen (``source`` if none was).
    """
    index = 0
    try:
        for record in records:
            source, index = record.source, record.index + 1
            yield record
    except Exception as exc:
        yield GameRecord(source, index, reject=exception_reason(exc))


def walk(root: Path) -> Iterator[Path]:
    """Readable files under ``root``, recursively, in sorted order."""
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if content_kind(name) is not None:
                yield Path(folder) / name


def content_kind(name: str) -> str | None:
    """'zip', 'tar', 'json', 'sgf' or 'kifu' from a file name (compression suffixes looked through).

    Kifu indexes (``Kifu2011.zip``, ``Kifu.index``) are not sources of games:
    the kifu files they describe read them (:mod:`harness.sgf.kifu`).
    """
    low = name.lower()
    if kifu.is_index_name(low):
        return None
    if low.endswith(ZIP_SUFFIXES):
        return "zip"
    if low.endswith(TAR_SUFFIXES):
        return "tar"
    stem = low
    while True:
        base, dot, ext = stem.rpartition(".")
        if dot and "." + ext in SUFFIX_KIND:
            stem = base
        else:
            break
    if stem.endswith(JSON_SUFFIXES):
        return "json"
    if stem.endswith(SGF_SUFFIXES):
        return "sgf"
    if kifu.is_kifu_name(stem):
        return "kifu"
    return None


def read_path(path: Path, options: ReadOptions = ReadOptions()) -> Iterator[GameRecord]:
    """Records of one file of any supported kind."""
    label = str(path)
    if kifu.may_hold_kifu(path.name):
        options = replace(options, kifu_index=kifu.IndexFinder.near(path))
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed below, after the generator runs
    except OSError as exc:
        yield GameRecord(label, 0, reject=f"cannot open: {exc.strerror or exc}")
        return
    with raw:
        head = raw.read(512)
        raw.seek(0)
        kind = content_kind(path.name)
        if kind == "zip" or (kind is None and head.startswith(b"PK\x03\x04")):
            yield from _read_zip(raw, label, options)
        elif kind == "tar" or (kind is None and _is_tar(raw)):
            yield from _read_tar(raw, label, options)
        else:
            yield from read_stream(raw, label, path.name, options)


def _is_tar(raw) -> bool:
    try:
        return tarfile.is_tarfile(raw)
    except Exception:
        return False
    finally:
        raw.seek(0)


def read_stream(fileobj, label: str, name: str, options: ReadOptions) -> Iterator[GameRecord]:
    """Records of one stream (a file or an archive member), decompressing as needed."""
    chunks = read_chunks(fileobj, options.chunk_bytes)
    try:
        first = next(chunks, b"")  # a zip member's CRC or deflate error can come this early
    except CorruptStream as exc:
        yield GameRecord(label, 0, reject=str(exc))
        return
    compression = sniff(first)
    stream = _prepend(first, chunks)
    if compression:
        stream = inflate(stream, compression)
    stream = bounded(stream, options.max_member_bytes)
    kind = content_kind(name)
    try:
        head = next(stream, b"")
    except (CorruptStream, StreamTooLarge) as exc:
        yield GameRecord(label, 0, reject=str(exc))
        return
    stream = _prepend(head, stream)
    if kind == "kifu" and not head.lstrip().startswith(b"("):  # "(" : SGF named like a month
        yield from kifu.kifu_records(
            stream, label, name, options.kifu_index, options.max_game_bytes,
            options.max_member_bytes,
        )
        return
    if kind != "sgf" and head.lstrip()[:1] in (b"{", b"["):
        kind = "json"
    if kind == "json":
        yield from _json_records(stream, label, options)
    else:
        yield from _sgf_records(stream, head, label, options)


def _prepend(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def _sgf_records(
    stream: Iterator[bytes], head: bytes, label: str, options: ReadOptions
) -> Iterator[GameRecord]:
    if looks_binary(head):
        yield GameRecord(label, 0, reject="binary data, not SGF")
        return
    splitter = GameSplitter(options.max_game_bytes)
    index = 0
    failure = None
    try:
        for chunk in stream:
            for game in splitter.feed(chunk):
                yield _record(game, label, index, options)
                index += 1
    except (CorruptStream, StreamTooLarge) as exc:
        failure = str(exc)
    if failure is None:
        for game in splitter.finish():
            yield _record(game, label, index, options)
            index += 1
        if index == 0:
            yield GameRecord(label, 0, reject=no_game_reason(head))
        return
    # The games read before the failure were yielded; what was held (a game
    # cut by the failure) and the failure itself make one rejected record.
    held = splitter.pending_bytes
    detail = f" ({held:,} bytes of an unfinished game lost)" if held else ""
    yield GameRecord(label, index, reject=failure + detail)


def _record(game, label: str, index: int, options: ReadOptions) -> GameRecord:
    if isinstance(game, OversizedGame):
        return GameRecord(label, index, reject=game.problem)
    return guarded_record(
        label, index, record_from_game, game, label, index, keep_comments=options.keep_comments
    )


def _json_records(stream: Iterator[bytes], label: str, options: ReadOptions):
    index = 0
    try:
        for value in iter_json_values(stream, options.max_game_bytes):
            if isinstance(value, JsonProblem):
                yield GameRecord(label, index, reject=value.reason)
            else:
                yield guarded_record(
                    label, index, record_from_elf, value, label, index,
                    size=options.elf_size, komi=options.elf_komi,
                )
            index += 1
    except (CorruptStream, StreamTooLarge) as exc:
        yield GameRecord(label, index, reject=str(exc))
        return
    if index == 0:
        yield GameRecord(label, 0, reject="no JSON record found")


# --- archives --------------------------------------------------------------------


def unsafe_member_name(name: str) -> bool:
    """Absolute, drive-letter, parent-directory or NUL-bearing member names."""
    if not name or "\0" in name:
        return True
    norm = name.replace("\\", "/")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":"):
        return True
    return ".." in PurePosixPath(norm).parts


def _tar_kind_problem(info: tarfile.TarInfo) -> str | None:
    """Why a tar member that is not a regular file is not read (a reject line, not silence)."""
    if info.isfile():
        return None
    if info.issym() or info.islnk():
        return f"link member {info.name!r} -> {info.linkname!r} (not followed)"
    if info.ischr() or info.isblk() or info.isfifo():
        return f"device or pipe member {info.name!r} (not read)"
    return f"special member {info.name!r} of tar type {info.type!r} (not read)"


def _member_problem(name: str, declared: int | None, options: ReadOptions) -> str | None:
    if unsafe_member_name(name):
        return f"unsafe member name {name!r} (not read)"
    kind = content_kind(name)
    if kind is None:
        return f"not a game file by its name {name!r} (not read)"
    if kind in ("zip", "tar"):
        return "nested archive (not read)"
    if declared is not None and declared > options.max_member_bytes:
        return f"member of {declared:,} bytes exceeds the {options.max_member_bytes:,} byte limit"
    return None


def _read_zip(raw, label: str, options: ReadOptions) -> Iterator[GameRecord]:
    try:
        archive = zipfile.ZipFile(raw)
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        yield GameRecord(label, 0, reject=f"unreadable zip archive: {exc}")
        return
    with archive:
        for info in members:
            if info.is_dir():
                continue
            member = f"{label}!{info.filename}"
            problem = _member_problem(info.filename, info.file_size, options)
            if problem is None and info.flag_bits & 0x1:
                problem = "encrypted member (not read)"
            if problem:
                yield GameRecord(member, 0, reject=problem)
                continue
            try:
                fileobj = archive.open(info)
            except (zipfile.BadZipFile, NotImplementedError, OSError, ValueError) as exc:
                yield GameRecord(member, 0, reject=f"unreadable member: {exc}")
                continue
            with fileobj:
                yield from _guarded(read_stream(fileobj, member, info.filename, options), member)


def _read_tar(raw, label: str, options: ReadOptions) -> Iterator[GameRecord]:
    # Stream mode ("r|*"): members in order, no seeking, any compression.
    last = "the start"
    try:
        with tarfile.open(fileobj=raw, mode="r|*") as archive:
            for info in archive:
                last = info.name
                if info.isdir():
                    continue
                member = f"{label}!{info.name}"
                problem = _tar_kind_problem(info) or _member_problem(info.name, info.size, options)
                if problem:
                    yield GameRecord(member, 0, reject=problem)
                    continue
                fileobj = archive.extractfile(info)
                if fileobj is None:
                    continue
                yield from _guarded(read_stream(fileobj, member, info.name, options), member)
    except (tarfile.TarError, OSError, EOFError, ValueError, CorruptStream) as exc:
        yield GameRecord(label, 0, reject=f"corrupt tar archive after {last!r}: {exc}")
    except Exception as exc:  # zlib.error, lzma.LZMAError from the stream layer
        yield GameRecord(label, 0, reject=f"corrupt tar archive after {last!r}: {exc}")
