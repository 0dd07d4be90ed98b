"""``harness bench KIND``: speed tables. Each kind is a module in this package."""

from __future__ import annotations

import argparse
import importlib

HELP = ("measure speed and print a table (rules, ingest, pipeline, models, runtime, layers, "
        "selfplay, distributed, learning, jaxgo-rules, device-selfplay)")

# (kind, module): each module has HELP, add_arguments(parser), run(args) -> int.
KINDS: tuple[tuple[str, str], ...] = (
    ("rules", "harness.bench.rules"),
    ("models", "harness.bench.models"),
    ("runtime", "harness.bench.runtime"),
    ("layers", "harness.bench.layers"),
    ("sgf", "harness.bench.sgf"),
    ("ingest", "harness.bench.ingest"),
    ("pipeline", "harness.bench.pipeline"),
    ("selfplay", "harness.bench.selfplay"),
    ("distributed", "harness.bench.distributed"),
    ("learning", "harness.bench.learning"),
    ("jaxgo-rules", "harness.bench.jaxgo_rules"),
    ("device-selfplay", "harness.bench.device_selfplay"),
)
# The kinds that run networks, whose numbers depend on the Keras backend and device.
ON_DEVICE = frozenset({"models", "runtime", "layers", "selfplay", "distributed", "learning",
                       "device-selfplay"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    for name, module_name in KINDS:
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_bench=module.run)


def run(args: argparse.Namespace) -> int:
    if args.kind in ON_DEVICE:
        from harness.devices import device

        print(f"harness bench {args.kind}: {device().describe()}", flush=True)
    return args._bench(args)
