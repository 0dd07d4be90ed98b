"""``harness bench sgf``: games/s and moves/s for reading and replaying SGF.

Reads ``dev-all.sgf.xz`` (all development games in one xz stream) when it is
present, otherwise games it generates with random playouts and writes as SGF
in memory. Three measures, each on the same games: reading alone
(decompress, split, parse, records), reading + compiled replay
(``replay_positions``: what ingest uses), and reading + replay through the
``Game`` object API.

``--shapes`` instead times what ingest does with one game (parse and
convert: replay, rows, digest) written in record shapes that cost more per
byte than moves: whole-board setup repeated at the root, whole-board setup
edits between moves (722 points from 19 bytes), and the same with every
point written out. Seconds per MB, and each shape against plain moves (the
fuzz's bar, issue 41: at most 5x).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import math
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
    parser.add_argument("--shapes", action="store_true",
                        help="seconds per MB of parse + convert by record shape, against moves")
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


SHAPE_HEADER = ("shape", "bytes", "s/MB", "x plain moves")


def shape_games(moves: int = 150, seed: int = 0) -> dict[str, bytes]:
    """One 19x19 game of ``moves`` random points written in each shape."""
    import random

    def coord(p: int) -> bytes:
        return bytes((97 + p % 19, 97 + p // 19))

    points = list(range(361))
    random.Random(seed).shuffle(points)

    def game(every_move: bytes = b"", root: bytes = b"") -> bytes:
        body = b"".join(b";" + b"BW"[i % 2:i % 2 + 1] + b"[" + coord(p) + b"]" + every_move
                        for i, p in enumerate(points[:moves]))
        return b"(;GM[1]FF[4]SZ[19]KM[7.5]RE[B+R]" + root + body + b")"

    def whole(tag: bytes) -> bytes:
        return tag + b"".join(b"[" + coord(p) + b"]" for p in range(361))

    return {
        "plain moves": game(),
        "AB[aa:ss] x200 at the root": game(root=b"AB[aa:ss]" * 200),
        "AE[aa:ss]AB[aa:ss] after every move": game(every_move=b"AE[aa:ss]AB[aa:ss]"),
        "AE, AB of all 361 points after every move": game(every_move=whole(b"AE") + whole(b"AB")),
    }


def measure_shapes(seconds: float = 0.5) -> list[tuple]:
    from harness.data.convert import ConvertSettings, convert_record
    from harness.sgf import parse_sgf_bytes

    settings = ConvertSettings(board_size=19)

    def per_mb(data: bytes) -> float:
        best = math.inf
        for _ in range(3):
            start, reps = time.perf_counter(), 0
            while reps == 0 or time.perf_counter() - start < seconds / 3:
                for record in parse_sgf_bytes(data, "<shape>"):
                    convert_record(record, settings)
                reps += 1
            best = min(best, (time.perf_counter() - start) / reps)
        return best / (len(data) / 1e6)

    shapes = shape_games()
    per_mb(shapes["plain moves"])  # compile and warm up
    costs = {name: per_mb(data) for name, data in shapes.items()}
    plain = costs["plain moves"]
    return [(name, len(shapes[name]), cost, cost / plain) for name, cost in costs.items()]


def run(args: argparse.Namespace) -> int:
    if args.shapes:
        print("parse + convert (ingest's work per game), one core")
        return show_table(SHAPE_HEADER, measure_shapes(), args.save)
    label, rows = measure(args)
    print(f"source: {label} (one core)")
    return show_table(HEADER, rows, args.save)
