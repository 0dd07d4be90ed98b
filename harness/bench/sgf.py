"""``harness bench sgf``: games/s and moves/s for reading and replaying SGF.

Reads ``dev-all.sgf.xz`` (all development games in one xz stream) when it is
present, otherwise games it generates with random playouts and writes as SGF
in memory. Three measures, each on the same games: reading alone
(decompress, split, parse, records), reading + compiled replay
(``replay_positions``: what ingest uses), and reading + replay through the
``Game`` object API.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import time
from pathlib import Path

from harness.devdata import dev_archive
from harness.files import show_table

HELP = "SGF parsing and replay speed (games/s, moves/s) on dev-all.sgf.xz or generated games"
HEADER = ("measure", "games", "moves", "seconds", "games/s", "moves/s")
DEFAULT_SOURCE = dev_archive()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", default=None, help=f"SGF source (default {DEFAULT_SOURCE})")
    parser.add_argument(
        "--games", type=int, default=2000, help="games to generate when the source is absent"
    )
    parser.add_argument(
        "--api-games", type=int, default=500, help="games for the slower Game-API replay"
    )
    parser.add_argument("--save", default=None, help="also write STEM.csv and STEM.md")


def generated_sgf(games: int, size: int = 19, seed: int = 1) -> bytes:
    """Random-playout games as one concatenated SGF stream (Leela Zero style)."""
    from harness.game import board as K
    from harness.game.geometry import geometry
    from harness.game.position import Game
    from harness.sgf.writer import to_sgf

    geo = geometry(size)
    K.seed_rng(seed)
    scratch = geo.neighbours[:, 0].copy()
    out = io.StringIO()
    for _ in range(games):
        game = Game(size, 7.5)
        for _ in range(2 * size * size):
            if game.is_over:
                break
            move = K.random_move(
                game.boards, 0, geo.neighbours, geo.diagonals, geo.zobrist, scratch
            )
            game.play(int(move))
        out.write(to_sgf(game))
    return out.getvalue().encode()


def _records(source: Path | None, data: bytes | None):
    from harness.sgf import iter_records, parse_sgf_bytes

    if data is not None:
        return parse_sgf_bytes(data, "<generated>")
    return iter_records(source)


def measure(args: argparse.Namespace) -> tuple[str, list[tuple]]:
    from harness.sgf import ReplayError, replay, replay_positions

    source = Path(args.source) if args.source else DEFAULT_SOURCE
    data = None
    if not source.exists():
        data = generated_sgf(args.games)
        label = f"{args.games} generated random games"
    else:
        label = str(source)
    # Warm up the compiled kernels so that compilation is not timed.
    for record in itertools.islice(_records(source, data), 2):
        if record.ok:
            replay_positions(record)
            replay(record)

    def timed(limit: int | None, work) -> tuple:
        start = time.perf_counter()
        games = moves = 0
        for record in itertools.islice(_records(source, data), limit):
            games += 1
            moves += len(record.moves)
            if record.ok and work is not None:
                with contextlib.suppress(ReplayError):
                    work(record)
        seconds = time.perf_counter() - start
        return games, moves, seconds, games / seconds, moves / seconds

    rows = [
        ("read (decompress, split, parse)", *timed(None, None)),
        ("read + replay (compiled)", *timed(None, replay_positions)),
        ("read + replay (Game API)", *timed(args.api_games, replay)),
    ]
    return label, rows


def run(args: argparse.Namespace) -> int:
    label, rows = measure(args)
    print(f"source: {label} (one core)")
    return show_table(HEADER, rows, args.save)
