"""``harness gtp``: speak GTP on stdin/stdout for GUIs, servers and match tools."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from harness.search.runtime import add_inference_argument, apply_inference

if TYPE_CHECKING:
    from harness.players.spec import PlayerSpec

HELP = "run a GTP v2 engine (a network with MCTS, or any player spec) on stdin/stdout"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--model", help="a .keras model: plays with MCTS (see --playouts)")
    who.add_argument(
        "--player",
        help="any player spec instead of a model: random, uct:1000, policy:PATH, "
        "mcts:PATH@200, gnugo:10, gtp:\"CMD ARGS\"",
    )
    parser.add_argument(
        "--playouts", type=int, default=None,
        help="playouts per move: for --model (default 200), or replacing the @N of a "
        "--player that searches (uct, mcts)",
    )
    parser.add_argument("--size", type=int, default=19, help="board size before boardsize")
    parser.add_argument("--komi", type=float, default=7.5, help="komi before the komi command")
    parser.add_argument(
        "--rules", choices=("superko", "simple-ko", "nogo"), default="superko",
        help="Go with positional superko (default) or simple ko, or NoGo"
    )
    parser.add_argument("--name", default="harness", help="what the name command reports")
    parser.add_argument("--seed", type=int, default=None, help="seed for random choices")
    add_inference_argument(parser)


def player_spec(args: argparse.Namespace) -> PlayerSpec:
    """The player to serve. ``--playouts`` wins over a ``--player``'s own ``@N``,
    as a tournament's does (:meth:`PlayerSpec.with_playouts`), so the name the
    engine's player carries states the budget it searches with."""
    from harness.players.spec import DEFAULT_PLAYOUTS, PlayerSpec, parse_player

    if args.player:
        spec = parse_player(args.player)
    else:
        spec = PlayerSpec("mcts", model=Path(args.model).expanduser(),
                          playouts=DEFAULT_PLAYOUTS["mcts"])
    return spec.with_playouts(args.playouts)


def run(args: argparse.Namespace) -> int:
    from harness.gtp.engine import GTPEngine, serve

    apply_inference(args.inference)
    player = player_spec(args).build(seed=args.seed)
    try:  # GTPEngine refuses an unsupported --size
        return serve(GTPEngine(player, size=args.size, komi=args.komi, rules=args.rules,
                               name=args.name))
    finally:
        player.close()
