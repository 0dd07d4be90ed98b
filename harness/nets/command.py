"""``harness models``: the zoo as a table (parameters, FLOPs, heads, source)."""

from __future__ import annotations

import argparse

from harness.files import format_table, save_table

HELP = "list the model zoo: parameters, FLOPs per position, heads, paper section"
HEADER = ("name", "canonical", "family", "params", "MFLOPs/position", "heads", "value", "source")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="model names (default: every preset); see docs/models.md")
    parser.add_argument("--board-size", type=int, default=19)
    parser.add_argument("--planes", type=int, default=21, help="input planes (encoder width)")
    parser.add_argument("--save", metavar="STEM", default=None,
                        help="also write STEM.csv and STEM.md")


def zoo_rows(names: list[str], board_size: int, planes: int) -> list[tuple]:
    import keras

    from harness.nets import build_model, model_summary
    from harness.nets.registry import preset

    rows = []
    for name in names:
        model = build_model(name, board_size, planes)
        info = model_summary(model)
        known = preset(name)
        rows.append((name, info["name"], info["family"], info["params"], info["flops"] / 1e6,
                     "+".join(info["heads"]), info["value_loss"], known.source if known else ""))
        del model
        keras.backend.clear_session()
    return rows


def run(args: argparse.Namespace) -> int:
    from harness.nets import model_names
    from harness.nets.plugins import model_spec

    names = args.names or model_names()
    try:
        for name in names:
            model_spec(name)
        rows = zoo_rows(names, args.board_size, args.planes)
    except ValueError as error:
        print(f"harness models: {error}")
        return 2
    print(f"board {args.board_size}x{args.board_size}, {args.planes} input planes")
    print(format_table(HEADER, rows))
    if args.save:
        save_table(HEADER, rows, args.save)
    return 0
