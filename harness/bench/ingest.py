"""``harness bench ingest``: ingest speed and size on disk.

Runs a whole ingest (read, parse, replay, dedupe, journal, assembly) into a
temporary directory, once per worker count, and reports positions per
second of wall time and per CPU second (all processes: the honest "per core"
figure on a shared machine), and bytes per position of the final file.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
from pathlib import Path

from harness.devdata import dev_archive
from harness.files import show_table

HELP = "ingest positions/s (wall and per CPU second) and bytes/position on disk"
HEADER = (
    "source",
    "workers",
    "games",
    "positions",
    "seconds",
    "positions/s",
    "CPU seconds",
    "positions/CPU-s",
    "bytes/position",
)
DEV_ARCHIVE = dev_archive()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source", nargs="*", help=f"SGF files/archives/directories (default: {DEV_ARCHIVE})"
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=None,
        help="worker counts to measure (default: 1 and all cores)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N games")
    parser.add_argument("--board-size", type=int, default=19)
    parser.add_argument("--save", default=None, help="also write STEM.csv and STEM.md")


def measure(sources: list[str], workers: int, limit: int | None, board_size: int) -> tuple:
    from harness.data.ingest import IngestConfig, ingest

    cpu_before = _cpu_seconds()
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        config = IngestConfig(
            sources=sources,
            output=Path(tmp) / "bench.h5",
            board_size=board_size,
            workers=workers,
            progress=False,
            val_games=0,
            limit=limit,
        )
        result = ingest(config)
    cpu = _cpu_seconds() - cpu_before
    rate = result.positions / max(result.seconds, 1e-9)
    name = ", ".join(Path(s).name for s in sources)
    return (
        name,
        workers,
        result.games,
        result.positions,
        round(result.seconds, 2),
        rate,
        round(cpu, 2),
        result.positions / max(cpu, 1e-9),
        round(result.bytes_per_position, 1),
    )


def _cpu_seconds() -> float:
    """User + system time of this process and its finished children (the workers)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run(args: argparse.Namespace) -> int:
    sources = args.source or [str(DEV_ARCHIVE)]
    missing = [s for s in sources if not Path(s).exists()]
    if missing:
        from harness.config_io import ConfigError

        raise ConfigError(f"{missing[0]}: not found (give a source)")
    counts = args.workers or sorted({1, os.cpu_count() or 1})
    rows = [measure(sources, w, args.limit, args.board_size) for w in counts]
    return show_table(HEADER, rows, args.save)
