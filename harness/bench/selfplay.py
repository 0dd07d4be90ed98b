"""``harness bench selfplay``: how fast batched MCTS self-play runs.

Three figures answer "is the search the bottleneck?": network evaluations per
second inside self-play against the bare model at the same batch size (the
ratio is the search's overhead), self-play moves per second and full games
per hour (temperature for the opening, greedy after), and, for scale, plain
UCT random-playout simulations per second. The bare model is timed in short
bursts between self-play moves so that both rates see the same machine load;
the table says how many games the game rate rests on (games that finish
within a short run are the short ones: run for several game lengths).

``--oracle`` plays with a rules-based evaluator (uniform priors, material
value: a few microseconds a position) instead of the network, so the time
per move is the search's own work, the host's share of self-play; with
``--host-threads`` it shows how that share shrinks as threads are added.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from harness.files import show_table
from harness.game.position import DEFAULT_KOMI
from harness.search.config import ROOT_RULES, MCTSConfig
from harness.search.runtime import add_inference_argument

HELP = "self-play network evaluations/s vs the bare model, games/hour, UCT playouts/s"
HEADER = ("measure", "value", "unit", "notes")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="a0.6.64",
                        help="zoo model name (built fresh) or a .keras file (default a0.6.64)")
    parser.add_argument("--encoder", default="agz17", help="input encoder (default agz17)")
    parser.add_argument("--board-size", type=int, default=9)
    parser.add_argument("--playouts", type=int, default=200, help="root visits per move")
    parser.add_argument("--root", choices=ROOT_RULES, default=MCTSConfig.root,
                        help="root rule ([mcts] root); gumbel searches add Gumbel noise "
                        "to every search, as its self-play does")
    parser.add_argument("--games", type=int, default=64, help="concurrent games (search slots)")
    parser.add_argument("--leaves", type=int, default=1,
                        help="leaves per game per network call (virtual loss between them)")
    parser.add_argument("--total-games", type=int, default=None,
                        help="stop after this many finished games (default: only --seconds)")
    parser.add_argument("--seconds", type=float, default=120.0,
                        help="stop self-play after this long and estimate from the moves made")
    parser.add_argument("--opening", type=int, default=8,
                        help="moves played with temperature 1 before greedy play")
    parser.add_argument("--komi", type=float, default=DEFAULT_KOMI)
    parser.add_argument("--cache", type=int, default=0, help="evaluation cache entries")
    parser.add_argument("--symmetry", default="random", help="random, none or 0..7")
    parser.add_argument("--forward", default="function", choices=("function", "predict_on_batch"))
    parser.add_argument("--oracle", action="store_true",
                        help="evaluate with a rules-based oracle instead of the network: "
                        "times the search's own work per move (--model is not used)")
    parser.add_argument("--host-threads", type=int, default=MCTSConfig.host_threads,
                        help="threads for each step's tree work ([mcts] host_threads)")
    parser.add_argument("--overlap", action="store_true",
                        help="overlap tree work with the network ([mcts] overlap)")
    parser.add_argument("--fill-eyes", action="store_true",
                        help="let the search fill its own true eyes ([mcts] fill_eyes), "
                        "to measure what dropping them costs")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads per network pass ([evaluator] threads; default 1 "
                        "with --overlap, else 0: the runtime's default)")
    add_inference_argument(parser)
    parser.add_argument("--bare-seconds", type=float, default=1.0,
                        help="length of each bare-model burst")
    parser.add_argument("--bare-every", type=float, default=15.0,
                        help="seconds of self-play between two bare-model bursts")
    parser.add_argument("--uct-seconds", type=float, default=2.0,
                        help="time for the UCT measurement (0 skips it)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", metavar="STEM", default=None, help="also write STEM.csv/.md")


def _load_model(name: str, size: int, planes: int):
    from harness import nets

    if name.endswith(".keras"):
        return nets.load_model(name)
    return nets.build_model(name, size, planes, seed=1)


def bare_rate(evaluator, batch: int, seconds: float) -> tuple[int, float]:
    """(positions, seconds) of the evaluator's own forward path at ``batch``
    on random planes, for at least ``seconds``."""
    import numpy as np

    x = np.random.default_rng(0).random(
        (batch, evaluator.size, evaluator.size, evaluator.planes), dtype=np.float32
    )
    calls, start = 0, time.perf_counter()
    while True:
        evaluator.forward(x)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and calls >= 3:
            return calls * batch, elapsed


class _Interleaved:
    """Bare-model bursts taken between self-play moves, so that both rates see
    the same machine load (other jobs share the cores), and the self-play
    counters with those bursts left out."""

    def __init__(self, evaluator, bare, search, batch: int, every: float, burst: float):
        self.evaluator, self.bare, self.search, self.batch = evaluator, bare, search, batch
        self.every, self.burst = every, burst
        self.bare_positions, self.bare_seconds = 0, 0.0
        self.paused = 0.0  # wall time spent in bursts
        self.last = time.perf_counter()
        self.samples: list[tuple[float, int, int, float]] = []

    def __call__(self, slot, record) -> None:
        now = time.perf_counter()
        if self.bare is not None and now - self.last >= self.every:
            self.search.drain()  # the burst must not share the network with an evaluation
            positions, seconds = self.evaluator.positions, self.evaluator.seconds
            n, t = bare_rate(self.bare, self.batch, self.burst)
            self.evaluator.positions, self.evaluator.seconds = positions, seconds
            self.bare_positions += n
            self.bare_seconds += t
            self.paused += time.perf_counter() - now
            self.last = time.perf_counter()
        self.samples.append((time.perf_counter() - self.paused, self.search.searches,
                             self.evaluator.positions, self.evaluator.seconds))


def _evaluators(args: argparse.Namespace, batch: int):
    """(the search's evaluator, the bare network to time beside it or None,
    a name for the table)."""
    from harness.features import get_encoder
    from harness.search import EvaluatorConfig, NetworkEvaluator
    from harness.search.oracle import OracleEvaluator

    size = args.board_size
    encoder = get_encoder(args.encoder)
    if args.oracle:  # the encoder's history, so leaves carry the rows a network reads
        oracle = OracleEvaluator(size, history=encoder.history, komi=args.komi)
        return oracle, None, f"oracle {size}x{size} (uniform priors, material value)"
    model = _load_model(args.model, size, encoder.planes)
    symmetry = int(args.symmetry) if args.symmetry.isdigit() else args.symmetry
    threads = args.threads if args.threads is not None else (1 if args.overlap else 0)
    settings = EvaluatorConfig(batch_size=batch, symmetry=symmetry, cache_size=args.cache,
                               forward=args.forward, seed=args.seed, threads=threads)
    evaluator = NetworkEvaluator(model, encoder, size, settings, inference=args.inference)
    # The bare figure is the runtime as a lone caller runs it: every core to one pass.
    bare = evaluator if not threads else NetworkEvaluator(
        model, encoder, size, replace(settings, threads=0), inference=args.inference)
    runtime = evaluator.runtime.choice.describe()
    return evaluator, bare, f"{model.name} {size}x{size} batch {batch}, {runtime}"


def measure(args: argparse.Namespace) -> list[tuple]:
    from harness.search import BatchedSearch
    from harness.search.game_driver import play_games

    # Positions per evaluator call: with overlap each half of the slots has its own calls.
    batch = args.games * args.leaves // (2 if args.overlap and args.games >= 2 else 1)
    evaluator, bare, name = _evaluators(args, batch)
    config = MCTSConfig(playouts=args.playouts, leaves_per_game=args.leaves,
                        temperature_moves=args.opening, overlap=args.overlap,
                        host_threads=args.host_threads, fill_eyes=args.fill_eyes,
                        root=args.root, add_noise=args.root == "gumbel")
    search = BatchedSearch(evaluator, config, games=args.games, seed=args.seed)
    total = args.total_games or 1_000_000
    # Compile the kernels and the graph outside the timed run.
    play_games(search, 1, komi=args.komi, max_moves=2, seed=args.seed)
    if bare is not None:
        bare_rate(bare, batch, 1.0)
    search.searches = 0
    probe = _Interleaved(evaluator, bare, search, batch, args.bare_every, args.bare_seconds)
    start = time.perf_counter()
    records = play_games(search, total, komi=args.komi, seed=args.seed, on_move=probe,
                         stop_after=args.seconds)
    elapsed = time.perf_counter() - start - probe.paused
    search.close()
    if bare is not None and probe.bare_seconds == 0:
        n, t = bare_rate(bare, batch, args.bare_seconds)
        probe.bare_positions, probe.bare_seconds = n, t

    # Rates come from the steady state: from the moment every slot has made a
    # move to the last move made, so that neither the start (all searches
    # begin together) nor the searches abandoned at the deadline skew them.
    steady = [s for s in probe.samples if s[1] >= args.games] or probe.samples
    first, last = steady[0], steady[-1]
    if last[0] - first[0] < 1.0:  # too short for a steady window
        first = (start, 0, 0, 0.0)
    window = last[0] - first[0]
    evals = (last[2] - first[2]) / window
    moves = last[1] - first[1]
    rate = moves / window
    evaluator_share = (last[3] - first[3]) / window
    search_notes = (f"{args.games} games x {args.leaves} leaves, {args.playouts} playouts"
                    + (", Gumbel root" if args.root == "gumbel" else "")
                    + (", tree work overlapped" if args.overlap else "")
                    + f", {args.host_threads} host thread{'s' * (args.host_threads > 1)}"
                    + (", own eyes may be filled" if args.fill_eyes else ""))
    rows: list[tuple] = []
    if bare is not None:
        bare_speed = probe.bare_positions / probe.bare_seconds
        rows += [
            ("bare model evaluations", bare_speed, "positions/s",
             f"{name}, {probe.bare_seconds:.0f} s in bursts between self-play moves"),
            ("self-play evaluations", evals, "positions/s", search_notes),
            ("self-play / bare", evals / bare_speed, "ratio", "goal >= 0.9"),
            ("network share of self-play", evaluator_share, "fraction",
             "time inside forward passes"),
        ]
    else:
        rows += [
            ("self-play evaluations", evals, "positions/s", f"{name}; {search_notes}"),
            ("oracle share of self-play", evaluator_share, "fraction",
             "time inside the oracle's evaluate; the rest is the search's own work"),
        ]
    rows += [
        ("self-play moves", rate, "moves/s",
         f"{(last[2] - first[2]) / max(moves, 1):.0f} evaluations per move, {window:.0f} s"),
        ("time per move", 1e6 / rate if rate else float("nan"), "us/move",
         "wall time per move made, every slot's searches together"),
    ]
    finished = len(records)
    if finished:
        length = sum(r.length for r in records) / finished
        rows.append(("self-play games", 3600 * rate / length, "games/hour",
                     f"moves/s over mean length ({length:.0f} moves, {finished} games)"))
        rows.append(("self-play games (counted)", 3600 * finished / elapsed, "games/hour",
                     f"{finished} games finished in {elapsed:.0f} s from a cold start"))
    else:
        rows.append(("self-play games", float("nan"), "games/hour",
                     f"no game finished in {elapsed:.0f} s"))
    if args.uct_seconds > 0:
        rows.append(_uct_row(args.board_size, args.uct_seconds, args.komi))
    return rows


def _uct_row(size: int, seconds: float, komi: float) -> tuple:
    try:
        from harness.players.uct import uct_playout_rate
    except ImportError:
        return ("UCT playouts", float("nan"), "playouts/s", "harness.players.uct not available")
    return ("UCT playouts", uct_playout_rate(size, seconds, komi), "playouts/s",
            f"{size}x{size}, random playouts, one core")


def run(args: argparse.Namespace) -> int:
    rows = measure(args)
    return show_table(HEADER, rows, args.save)
