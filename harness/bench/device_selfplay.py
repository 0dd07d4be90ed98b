"""``harness bench device-selfplay``: self-play on the device beside the host path.

Issue #63's question: how much of the bare network's speed does self-play
keep? The host path (numba tree search, the network called per batch of
leaves) and the device path (the whole move one jitted call,
:mod:`harness.jaxgo.search`) play the same number of games at once with the
same network and search settings, one after the other in one process, and
the bare network is timed at the same batch beside them. Keras's JAX backend
only (``KERAS_BACKEND=jax``): both paths then run the same compiled network.
"""

from __future__ import annotations

import argparse
import time

from harness.files import show_table
from harness.game.position import DEFAULT_KOMI
from harness.search.config import ROOT_RULES

HELP = "device self-play (mctx over the JAX rules) beside the host path: evaluations/s, moves/s"
BARE_SECONDS = 3.0  # the bare network's timing: long enough for a steady rate
HEADER = ("path", "evaluations/s", "self-play / bare", "moves/s", "games/hour", "notes")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default="a0.6.64",
                        help="zoo model name (built fresh) or a .keras file (default a0.6.64)")
    parser.add_argument("--board-size", type=int, default=9)
    parser.add_argument("--playouts", type=int, default=32, help="simulations per move")
    parser.add_argument("--root", choices=ROOT_RULES, default="gumbel")
    parser.add_argument("--games", type=int, default=128, help="games played at once")
    parser.add_argument("--paths", nargs="+", choices=("host", "device"),
                        default=["host", "device"])
    parser.add_argument("--agreement", action="store_true",
                        help="instead of speed: with noise off, does the device search choose "
                        "the host search's move at every position of --games host games?")
    parser.add_argument("--max-moves", type=int, default=40,
                        help="moves of each host game --agreement plays")
    parser.add_argument("--komi", type=float, default=DEFAULT_KOMI)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", metavar="STEM", default=None, help="also write STEM.csv/.md")


def bare_rate(model, games: int, size: int, seconds: float) -> float:
    """Positions/s of the model's jitted stateless call at ``games`` rows."""
    import jax
    import numpy as np

    from harness.jaxgo.search import model_params

    run = jax.jit(lambda p, x: model.stateless_call(p[0], p[1], x, training=False)[0])
    params = model_params(model)
    x = np.random.default_rng(0).random((games, size, size, 17), dtype=np.float32)
    jax.block_until_ready(run(params, x))
    calls, start = 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - start < seconds:
        jax.block_until_ready(run(params, x))
        calls += 1
    return calls * games / (time.perf_counter() - start)


def device_row(model, mcts, args) -> tuple[float, float, int, float]:
    """(evaluations/s, moves/s, games, seconds) of one batch played to its end."""
    from harness.jaxgo.games import play_batch
    from harness.jaxgo.search import DeviceSearch, model_params, network

    search = DeviceSearch(network(model), mcts)
    params = model_params(model)
    play_batch(search, params, args.games, args.board_size, komi=args.komi, max_moves=2,
               seed=args.seed)  # compiles outside the timed run
    start = time.perf_counter()
    records, _ = play_batch(search, params, args.games, args.board_size, komi=args.komi,
                            seed=args.seed)
    seconds = time.perf_counter() - start
    moves = sum(r.length for r in records)
    # The games' own evaluations: a finished game's slot is searched on until
    # the batch's last game ends, which costs time but plays nothing.
    return moves * (mcts.playouts + 1) / seconds, moves / seconds, len(records), seconds


def host_row(model, mcts, args) -> tuple[float, float, int, float]:
    from harness.search import BatchedSearch, EvaluatorConfig, NetworkEvaluator
    from harness.search.game_driver import play_games

    settings = EvaluatorConfig(batch_size=args.games * mcts.leaves_per_game, seed=args.seed)
    evaluator = NetworkEvaluator(model, "agz17", args.board_size, settings, inference="keras")
    search = BatchedSearch(evaluator, mcts, games=args.games, seed=args.seed)
    play_games(search, 1, komi=args.komi, max_moves=2, seed=args.seed)
    positions = evaluator.positions
    start = time.perf_counter()
    records = play_games(search, args.games, komi=args.komi, seed=args.seed)
    seconds = time.perf_counter() - start
    moves = sum(r.length for r in records)
    return (evaluator.positions - positions) / seconds, moves / seconds, len(records), seconds


def run(args: argparse.Namespace) -> int:
    import keras

    if keras.backend.backend() != "jax":
        raise SystemExit("harness bench device-selfplay: needs Keras's JAX backend "
                         f"(KERAS_BACKEND=jax), not {keras.backend.backend()}")
    from harness import nets
    from harness.search.config import MCTSConfig

    size = args.board_size
    model = (nets.load_model(args.model) if args.model.endswith(".keras")
             else nets.build_model(args.model, size, 17, seed=1))
    mcts = MCTSConfig(playouts=args.playouts, root=args.root, add_noise=True,
                      temperature_moves=8 if args.root == "puct" else 0)
    if args.agreement:
        return agreement_table(model, mcts, args)
    bare = bare_rate(model, args.games, size, BARE_SECONDS)
    rows = []
    for path in args.paths:
        evals, moves, games, seconds = (host_row if path == "host" else device_row)(
            model, mcts, args)
        length = moves * seconds / games
        rows.append((path, evals, evals / bare, moves, 3600 * games / seconds,
                     f"{games} games at once to their ends ({length:.0f} moves), "
                     f"{seconds:.0f} s"))
    rows.append(("bare network", bare, 1.0, float("nan"), float("nan"),
                 f"{model.name}, {size}x{size}, batch {args.games}, jitted stateless call"))
    print(f"{args.playouts} {args.root} simulations a move, {args.games} games at once")
    return show_table(HEADER, rows, args.save)


AGREEMENT_HEADER = ("root", "simulations", "positions", "same move", "target L1 max",
                    "target L1 median")


def agreement_table(model, mcts, args) -> int:
    from harness.jaxgo.equivalence import search_agreement

    found = search_agreement(model, mcts, args.board_size, games=args.games,
                             max_moves=args.max_moves, komi=args.komi, seed=args.seed)
    print(f"{model.name}, {args.board_size}x{args.board_size}, noise off, symmetry off, "
          f"{args.games} host games of at most {args.max_moves} moves")
    return show_table(AGREEMENT_HEADER, [(args.root, args.playouts, found.positions,
                                          found.same_moves, found.target_l1_max,
                                          found.target_l1_median)], args.save)
