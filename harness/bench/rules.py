"""``harness bench rules``: random-playout speed of the compiled rules."""

from __future__ import annotations

import argparse
import time

from numba import njit

from harness.files import show_table
from harness.game import board as K
from harness.game.geometry import geometry

HELP = "random-playout moves/s (one core) and encoder positions/s"
HEADER = ("measure", "board", "value", "unit")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument("--sizes", type=int, nargs="+", default=[9, 19])
    parser.add_argument("--encoder-size", type=int, default=19, help="board of the encoder rows")
    parser.add_argument("--encoders", nargs="*", default=None, help="default: every encoder")
    parser.add_argument("--save", default=None, help="also write STEM.csv and STEM.md")


@njit(cache=True)
def _playouts(b, size, nbr, diag, zob, count, rule):
    moves = 0
    for _ in range(count):
        K.reset(b, 0, size, rule)
        moves += K.playout(b, 0, nbr, diag, zob, 3 * size * size)
    return moves


def playout_rate(size: int, seconds: float) -> float:
    """Random-playout moves per second on one core (simple ko, as playouts use).

    Timed in this thread's CPU time, so the figure is a one-core rate even
    when other jobs share the machine.
    """
    geo = geometry(size)
    boards = K.new_boards(1, size, K.SIMPLE_KO)
    K.seed_rng(1)
    _playouts(boards, size, geo.neighbours, geo.diagonals, geo.zobrist, 2, K.SIMPLE_KO)  # compile
    moves, start, batch = 0, time.thread_time(), 64
    while time.thread_time() - start < seconds:
        moves += _playouts(
            boards, size, geo.neighbours, geo.diagonals, geo.zobrist, batch, K.SIMPLE_KO
        )
    return moves / (time.thread_time() - start)


def measure(args: argparse.Namespace) -> list[tuple]:
    rows = []
    for size in args.sizes:
        rate = playout_rate(size, args.seconds)
        rows.append(("random-playout moves", f"{size}x{size}", rate, "moves/s"))
    from harness.features.bench import encoder_rates

    rows += encoder_rates(args.encoder_size, args.seconds, args.encoders)
    return rows


def run(args: argparse.Namespace) -> int:
    rows = measure(args)
    return show_table(HEADER, rows, args.save)
