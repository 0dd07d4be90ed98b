"""The ``harness`` command: one subcommand per pipeline stage.

Each subcommand lives in its stage's package as a module with ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. Those modules keep heavy
imports (TensorFlow) inside ``run`` so that ``harness --help`` and the GTP
engine start fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# (subcommand, module). Order is the order of ``harness --help``.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("suite", "harness.suite.command"),
    ("bench", "harness.bench.command"),
    ("models", "harness.nets.command"),
    ("ingest", "harness.data.command"),
    ("gtp", "harness.gtp.command"),
    ("datagen", "harness.arena.datagen"),
    ("tournament", "harness.arena.command"),
    ("train", "harness.train.command"),
    ("evaluate", "harness.train.evaluate_command"),
    ("compare", "harness.train.compare_command"),
    ("plot", "harness.report.plot_command"),
    ("rl", "harness.rl.command"),
    ("rl-report", "harness.rl.report_command"),
)


def build_parser() -> argparse.ArgumentParser:
    from harness import __version__

    parser = argparse.ArgumentParser(
        prog="harness",
        description="Compare neural-network architectures for computer Go.",
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # one broken stage must not take every command down
            p = sub.add_parser(name, help=f"(unavailable: {exc})")
            p.set_defaults(_run=_unavailable(name, exc))
            continue
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _unavailable(name: str, exc: Exception):
    def run(_args: argparse.Namespace) -> int:
        print(f"harness {name}: cannot load ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 2

    return run


def main(argv: list[str] | None = None) -> int:
    # TensorFlow's C++ start-up chatter (CPU features, missing CUDA) is noise
    # for a command-line tool; real errors still show.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
