"""``harness bench runtime``: forward positions/s of Keras, ONNX Runtime and OpenVINO.

The numbers behind ``--inference auto`` (:mod:`harness.search.runtime`): each
model is exported once, every runtime is checked against Keras on sample
positions, then the runtimes run the same input in alternating calls (rounds
of one call each, median per runtime), so a machine shared with other work
slows them alike and the ratios hold within the run.
"""

from __future__ import annotations

import argparse
import time

from harness.bench.models import batch_list
from harness.files import show_table

HELP = "forward positions/s of Keras vs ONNX Runtime vs OpenVINO (what --inference auto picks)"
HEADER = ("model", "board", "batch", "keras pos/s", "onnx pos/s", "openvino pos/s",
          "best", "best/keras")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME",
                        help="model names (docs/models.md) or .keras files")
    parser.add_argument("--board-size", type=int, default=19)
    parser.add_argument("--planes", type=int, default=21, help="input planes (encoder width)")
    parser.add_argument("--batch-sizes", type=batch_list, default=(1, 16, 64),
                        help="comma-separated batch sizes (default 1,16,64)")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="time per batch size, shared by the runtimes")
    parser.add_argument("--save", metavar="STEM", default=None, help="also write STEM.csv/.md")


def _model(name: str, size: int, planes: int):
    from harness import nets
    from harness.search.runtime import mark_frozen

    if name.endswith(".keras"):
        model = nets.load_model(name)
        mark_frozen(model, name)
        return model
    return nets.build_model(name, size, planes, seed=0)


def forwards(model, log=print) -> dict:
    """Every runtime that runs ``model`` and agrees with Keras, by name."""
    from harness.nets.export import graph_file
    from harness.search.runtime import (
        BUILDERS,
        checked,
        exported_runtimes_unavailable,
        frozen_source,
        keras_forward,
        sample_planes,
    )

    keras = keras_forward(model)
    found = {"keras": keras}
    unavailable = exported_runtimes_unavailable()
    if unavailable:
        log(f"  {', '.join(BUILDERS)}: not measured ({unavailable})")
        return found
    sample = sample_planes(model.inputs[0].shape[1:])
    with graph_file(model, frozen_source(model)) as graph:
        for name, build in BUILDERS.items():
            try:
                found[name] = checked(build(graph()), keras, sample, name)
            except Exception as error:  # missing wheel, failed export or disagreement
                log(f"  {name}: not measured ({type(error).__name__}: {error})")
    return found


def rates(candidates: dict, x, seconds: float) -> dict[str, float]:
    """Positions per second of each candidate on ``x``: warm-up calls, then
    rounds of one call per candidate until ``seconds`` pass (at least 3
    rounds); the median call time per candidate."""
    import numpy as np

    times: dict[str, list[float]] = {name: [] for name in candidates}
    for forward in candidates.values():
        forward(x)
        forward(x)
    started = time.perf_counter()
    while min(len(t) for t in times.values()) < 3 or time.perf_counter() - started < seconds:
        for name, forward in candidates.items():
            t0 = time.perf_counter()
            forward(x)
            times[name].append(time.perf_counter() - t0)
    return {name: x.shape[0] / float(np.median(t)) for name, t in times.items()}


def measure(args: argparse.Namespace, log=print) -> list[tuple]:
    import keras

    from harness.search.runtime import sample_planes, tile_sample

    rows = []
    board = f"{args.board_size}x{args.board_size}"
    for name in args.names:
        keras.backend.clear_session()
        model = _model(name, args.board_size, args.planes)
        candidates = forwards(model, log)
        sample = sample_planes(model.inputs[0].shape[1:], 64, seed=1)
        for batch in args.batch_sizes:
            got = rates(candidates, tile_sample(sample, batch), args.seconds)
            best = max(got, key=got.get)
            rows.append((name, board, batch, got["keras"], got.get("onnx", "-"),
                         got.get("openvino", "-"), best, got[best] / got["keras"]))
            log(f"  {name} batch {batch}: " + ", ".join(f"{k} {v:,.0f}" for k, v in got.items()))
    return rows


def run(args: argparse.Namespace) -> int:
    rows = measure(args)
    return show_table(HEADER, rows, args.save)
