"""Writing results so that a file under its final name is always whole, and tables.

Every result, journal, report and table the harness writes goes through
here. Why one module: a job killed mid-write must leave either the old file
or the new one, never half of either, and that takes three steps that are
easy to get partly right (a temporary name beside the target, ``fsync``
before the rename, removing the temporary file on failure); six copies of it
had drifted, and only one of them synced.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` for a writer that wants a file name
    (HDF5, Keras, matplotlib); on success it is synced and renamed to ``path``,
    on failure removed. The suffix is kept, for writers that choose a format by it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}",
                                dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)  # the rename itself survives a power cut
    finally:
        tmp.unlink(missing_ok=True)


def remove_temporaries(directory: str | Path) -> None:
    """Delete what :func:`atomic_path` left in ``directory`` when a job was killed."""
    for stray in Path(directory).glob(".*.tmp*"):
        stray.unlink(missing_ok=True)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8, newlines untranslated) to ``path`` atomically."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def atomic_json(path: str | Path, value: Any, *, indent: int | None = 2,
                sort_keys: bool = False) -> Path:
    """``value`` as JSON (one trailing newline), written atomically; numpy scalars
    and paths are written as their plain values."""
    text = json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=False,
                      default=_plain)
    return atomic_write(path, text + "\n")


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    return str(value)


def read_json(path: str | Path, default: Any = None) -> Any:
    """The JSON in ``path``, or ``default`` when there is no such file."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default


def read_regular_file(path: str | Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes.

    A path a user names (GTP ``loadsgf``) can be a FIFO or ``/dev/stdin``,
    whose read blocks until a writer comes, or ``/dev/zero``, which never
    ends: the file is opened without blocking and checked before any read.
    Raises ``OSError`` (a missing file) or ``ValueError`` (one line) otherwise.
    """
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path}: not a regular file")
        if info.st_size > limit:
            raise ValueError(f"{path}: {info.st_size:,} bytes, more than {limit:,}")
        data = f.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise ValueError(f"{path}: more than {limit:,} bytes")
    return data


def csv_text(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


# --- tables ------------------------------------------------------------------------------------


def format_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table, aligned for the terminal as well."""
    cells = [[str(h) for h in header]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _cell(value: object) -> str:
    if isinstance(value, float):
        from harness.stats import fmt_number

        return fmt_number(value)
    return str(value)


def with_extension(stem: str | Path, suffix: str) -> Path:
    """``stem`` + ``suffix``, appended rather than substituted: output stems
    often hold dotted names (``bench-a0.6.64``), which ``with_suffix`` would cut."""
    stem = Path(stem)
    return stem.with_name(stem.name + suffix)


def save_table(header: Sequence[str], rows: Sequence[Sequence[object]], stem: str | Path) -> None:
    """Write ``stem.csv`` and ``stem.md`` atomically."""
    atomic_write(with_extension(stem, ".csv"), csv_text(header, rows))
    atomic_write(with_extension(stem, ".md"), format_table(header, rows) + "\n")


def show_table(header: Sequence[str], rows: Sequence[Sequence[object]],
               save: str | Path | None) -> int:
    """Print the table, also write it to ``save`` (a stem) if given; exit status 0."""
    print(format_table(header, rows))
    if save:
        save_table(header, rows, save)
    return 0
