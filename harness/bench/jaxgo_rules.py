"""``harness bench jaxgo-rules``: the JAX rules checked against the numba rules.

Not a speed table but an agreement one (with its seconds): the JAX rules are
only worth running on a device if they play the harness's game, so every
claim that they do comes from this table.
"""

from __future__ import annotations

import argparse
import importlib.util

from harness.files import show_table
from harness.game.position import DEFAULT_KOMI, RULE_NAMES

HELP = "random games in the JAX rules and the numba rules side by side: differences by kind"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--board-size", type=int, default=9)
    parser.add_argument("--rules", nargs="+", default=["superko"], choices=sorted(RULE_NAMES))
    parser.add_argument("--batch", type=int, default=1000, help="games a JAX call steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pass-prob", type=float, default=0.05,
                        help="chance of passing when a point is also legal")
    parser.add_argument("--komi", type=float, default=DEFAULT_KOMI)
    parser.add_argument("--move-limit", type=int, default=None,
                        help="moves a game may last (default: twice the points)")
    parser.add_argument("--save", default=None, help="also write STEM.csv and STEM.md")


def run(args: argparse.Namespace) -> int:
    """Prints the table; exit status 1 when any difference was found."""
    if importlib.util.find_spec("jax") is None:
        raise SystemExit('harness bench jaxgo-rules: JAX is not installed (pip install ".[jax]")')
    import jax

    from harness.jaxgo.agreement import HEADER, agreement

    print(f"harness bench jaxgo-rules: JAX on {jax.devices()[0].device_kind}", flush=True)
    rows, examples, differences = [], [], 0
    for rules in args.rules:
        result = agreement(args.games, args.board_size, rules, args.batch, args.seed,
                           args.pass_prob, args.komi, args.move_limit)
        rows += result.rows()
        examples += result.examples
        differences += result.total
    show_table(HEADER, rows, args.save)
    for line in examples:
        print(f"first differences: {line}")
    return 1 if differences else 0
