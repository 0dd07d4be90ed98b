"""``harness models``: the zoo as a table (parameters, FLOPs, heads, source), and
what a ``.keras`` file records about itself (its model info, the compute of the
run that trained it included)."""

from __future__ import annotations

import argparse

from harness.files import format_table, save_table

HELP = ("list the model zoo: parameters, FLOPs per position, heads, paper section; "
        "or show what .keras files record (encoder, board, heads, training compute)")
HEADER = ("name", "canonical", "family", "params", "MFLOPs/position", "heads", "value", "source")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="model names (default: every preset; see docs/models.md), or "
                        ".keras files, whose recorded model info is shown")
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


def describe_file(path: str) -> list[str]:
    """What the ``.keras`` file at ``path`` records, in lines for people; read
    without TensorFlow. Raises ModelFileError for a file that is not a model."""
    from harness.nets.info import read_model_info

    info = read_model_info(path)
    if info is None:
        return [f"{path}: no model info inside (written by an older harness)"]
    lines = [f"{path}: {info.architecture or 'unnamed network'}, encoder {info.encoder}, "
             f"{info.board_size}x{info.board_size} {info.rules or '(rules not recorded)'}, "
             f"heads {'+'.join(info.heads)}, value {info.value}"]
    if info.compute is not None:
        lines.append(f"  compute: {info.compute.describe()}")
    return lines


def run(args: argparse.Namespace) -> int:
    from harness.nets import model_names
    from harness.nets.plugins import model_spec

    files = [n for n in args.names if n.endswith(".keras")]
    for path in files:
        print("\n".join(describe_file(path)))
    if files and len(files) == len(args.names):
        return 0
    names = [n for n in args.names if n not in files] or model_names()
    for name in names:
        model_spec(name)
    rows = zoo_rows(names, args.board_size, args.planes)
    print(f"board {args.board_size}x{args.board_size}, {args.planes} input planes")
    print(format_table(HEADER, rows))
    if args.save:
        save_table(HEADER, rows, args.save)
    return 0
