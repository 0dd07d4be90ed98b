"""``harness bench distributed``: self-play games/hour, local backend vs Ray.

The same RL self-play settings are played twice: by the local backend (one
process, one batched search with ``--parallel`` slots over all the games)
and by Ray actors on this machine, each playing units of ``--parallel``
games (the Ray default): first one actor, then ``--workers`` (default one per
core). The table compares games per hour. Start-up (Ray, TensorFlow in each
actor, tracing the network) is timed apart: each side first plays one game
per process that is not counted. One actor against the local process is the
Ray path's overhead (object store, units that end with idle slots); all the
actors against it is what the backend buys on this machine.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from harness.files import show_table

HELP = "self-play games/hour with the local backend vs Ray actors on this machine"
HEADER = ("backend", "workers", "games", "seconds", "games/hour", "start-up s", "notes")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="a0.tiny", help="zoo model (fresh weights)")
    parser.add_argument("--encoder", default="agz17")
    parser.add_argument("--board-size", type=int, default=9)
    parser.add_argument("--playouts", type=int, default=16, help="root visits per move")
    parser.add_argument("--games", type=int, default=32, help="games timed on each backend")
    parser.add_argument("--parallel", type=int, default=4,
                        help="search slots (games at once) per process")
    parser.add_argument("--workers", type=int, default=0,
                        help="Ray actors (default: one per core)")
    parser.add_argument("--max-moves", type=int, default=None,
                        help="stop games after this many moves (default 2x the points)")
    parser.add_argument("--ray-address", default="",
                        help="benchmark an existing Ray cluster instead of a local instance")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", metavar="STEM", default=None, help="also write STEM.csv/.md")


def _config(args: argparse.Namespace, backend: str, games: int):
    from harness.config_io import from_mapping
    from harness.rl.config import RLConfig

    return from_mapping(RLConfig, {
        "run": "bench", "board_size": args.board_size, "encoder": args.encoder,
        "model": args.model, "seed": args.seed, "backend": backend,
        "ray_address": args.ray_address,
        "mcts": {"playouts": args.playouts, "add_noise": True, "temperature_moves": 8},
        "evaluator": {"batch_size": args.parallel},
        "selfplay": {"games": games, "parallel": args.parallel, "workers": args.workers,
                     "max_moves": args.max_moves},
    }, "bench")


def _local(args: argparse.Namespace, model) -> tuple[float, float, int]:
    """(start-up seconds, timed seconds, moves) of the local backend."""
    from harness.rl.selfplay import Unit, play_unit, selfplay_units, unit_search
    from harness.search import NetworkEvaluator

    config = _config(args, "local", args.games)
    t0 = time.perf_counter()
    evaluator = NetworkEvaluator(model, config.encoder, config.board_size, config.evaluator)
    play_unit(unit_search(evaluator, config, Unit(0, 1, 0)), 1, config, 0, lambda r: None)
    startup = time.perf_counter() - t0
    moves = 0

    def count(record) -> None:
        nonlocal moves
        moves += record.length

    t0 = time.perf_counter()
    for unit in selfplay_units(config, 1, 0):
        play_unit(unit_search(evaluator, config, unit), unit.count, config, unit.seed, count)
    return startup, time.perf_counter() - t0, moves


def _ray(args: argparse.Namespace, checkpoint: Path, workers: int
         ) -> tuple[float, float, int, int]:
    """(start-up seconds, timed seconds, moves, workers) of Ray actors."""
    import dataclasses

    from harness.rl.remote import SelfPlayActors
    from harness.rl.selfplay import Unit, selfplay_units

    config = _config(args, "ray", args.games)
    config = dataclasses.replace(
        config, selfplay=dataclasses.replace(config.selfplay, workers=workers))
    actors = SelfPlayActors(config)
    try:
        t0 = time.perf_counter()
        actors._start()
        workers = len(actors.pool.actors)
        warm = [Unit(-1 - n, 1, n) for n in range(workers)]  # one uncounted game per actor
        for _ in actors.play(warm, checkpoint):
            pass
        startup = time.perf_counter() - t0
        moves = 0
        t0 = time.perf_counter()
        for _, record, _ in actors.play(selfplay_units(config, 1, 0), checkpoint):
            moves += record.length
        return startup, time.perf_counter() - t0, moves, workers
    finally:
        actors.close()


def measure(args: argparse.Namespace) -> list[tuple]:
    from harness.features import get_encoder
    from harness.nets import build_model, model_info, save_model

    planes = get_encoder(args.encoder).planes
    model = build_model(args.model, args.board_size, planes, seed=args.seed)
    model.model_info = model_info(model, encoder=args.encoder)  # the workers load its file
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = save_model(model, Path(tmp) / "bench.keras")
        local_start, local_s, local_moves = _local(args, model)
        one = _ray(args, checkpoint, 1)
        many = _ray(args, checkpoint, args.workers or os.cpu_count() or 1)
    local_rate = 3600 * args.games / local_s
    setting = (f"{args.model} {args.board_size}x{args.board_size}, {args.playouts} playouts, "
               f"{args.parallel} slots/process")
    rows: list[tuple] = [("local", 1, args.games, local_s, local_rate, local_start,
                          f"{setting}; {local_moves / local_s:.0f} moves/s")]
    for start, seconds, moves, workers in (one, many):
        rate = 3600 * args.games / seconds
        change = 100 * (rate / local_rate - 1)
        what = "overhead (below 0: a cost)" if workers == 1 else "scaling"
        rows.append(("ray", workers, args.games, seconds, rate, start,
                     f"units of {args.parallel} games, {moves / seconds:.0f} moves/s; "
                     f"{change:+.0f}% games/hour vs local, {what}"))
    return rows


def run(args: argparse.Namespace) -> int:
    rows = measure(args)
    return show_table(HEADER, rows, args.save)
