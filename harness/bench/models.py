"""``harness bench models``: forward passes and training samples per second.

Cazenave's tables I and II: forward speed by batch size, and how fast a
network trains. Inference runs Keras's compiled predict step on a fixed input
shape, warmed up before timing; training runs the compiled train step with
SGD and the heads' losses. Timings on a shared machine are noisy.

Against the limit: each row also gives the achieved GFLOP/s (the model's
FLOPs per position, from ``harness models``, times positions/s; a training
step counts three times the forward FLOPs: the forward pass and the two
backward products) and its share of the machine's matrix-multiply peak,
measured in the same run (the first row), in the dtype the models compute in
(float32, or bfloat16 under ``mixed_bfloat16``).
"""

from __future__ import annotations

import argparse
import time

from harness.cpu import PRECISIONS
from harness.devices import device, resolve_precision
from harness.files import format_table, save_table
from harness.nets.compute import TRAIN_FLOPS_FACTOR

HELP = "forward positions/s by batch size and training samples/s (Cazenave tables I-II)"
HEADER = ("model", "board", "params", "MFLOPs", "pass", "batch", "positions/s", "batches/s",
          "GFLOP/s", "of peak", "precision")
MATMUL_SIZE = 2048
GPU_MATMUL_SIZE = 8192  # a 2048 product is over before a GPU's clocks rise
DEFAULT_BATCHES = (1, 8, 32, 128, 512)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="model names (docs/models.md)")
    parser.add_argument("--board-size", type=int, default=19)
    parser.add_argument("--planes", type=int, default=21, help="input planes (encoder width)")
    parser.add_argument("--batch-sizes", type=batch_list, default=DEFAULT_BATCHES,
                        help="comma-separated inference batch sizes (default 1,8,32,128,512)")
    parser.add_argument("--train-batch", type=int, default=32,
                        help="training batch size (Cazenave trains with 32); 0 skips training")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--precision", choices=PRECISIONS, default="auto",
                        help="Keras dtype policy the models are built under (auto: the "
                        "device's: mixed_bfloat16 on CPUs with AMX/AVX512-BF16 and on GPUs "
                        "from compute capability 8.0, mixed_float16 on older GPUs, else "
                        "float32)")
    parser.add_argument("--jit-compile", action="store_true",
                        help="compile the training step with XLA (Keras leaves it off on "
                        "CPU-only machines; this measures what it would give)")
    parser.add_argument("--save", metavar="STEM", default=None,
                        help="write STEM.csv and STEM.md (default results/bench/models-BxB)")


def batch_list(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(t) for t in text.replace(" ", "").split(",") if t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad batch sizes {text!r} (want e.g. 1,8,32)") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"bad batch sizes {text!r} (positive integers)")
    return sizes


def _rate(step, seconds: float) -> float:
    """Calls per second of ``step`` after two warm-up calls (the first compiles)."""
    step()
    step()
    calls, start = 0, time.perf_counter()
    while True:
        step()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and calls >= 3:
            return calls / elapsed


def matmul_peak(seconds: float, size: int = MATMUL_SIZE, dtype: str = "float32",
                repeats: int = 1) -> float:
    """GFLOP/s of a ``size`` x ``size`` matrix product in ``dtype`` on the
    Keras backend's device (the kernels the models' convolutions use: oneDNN
    through TensorFlow on a CPU, cuBLAS on a GPU), from the fastest call: a
    peak, which other work on the machine only lowers. ``repeats`` products
    run per timed call, so that a GPU's launch and the one number read back
    to wait for it are not what is timed."""
    import keras
    import numpy as np

    rng = np.random.default_rng(0)
    a = keras.ops.cast(rng.random((size, size), dtype=np.float32), dtype)
    b = keras.ops.cast(rng.random((size, size), dtype=np.float32), dtype)

    def products():
        out = a
        for _ in range(repeats):
            out = keras.ops.matmul(a, b)
        # One number read back waits for the device (as float32: TensorFlow
        # cannot hand a bfloat16 scalar to numpy).
        return keras.ops.convert_to_numpy(keras.ops.cast(out[0, 0], "float32"))

    products()
    best, calls, start = float("inf"), 0, time.perf_counter()
    while calls < 3 or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        products()
        best = min(best, time.perf_counter() - t0)
        calls += 1
    return 2 * size**3 * repeats / best / 1e9


def forward_rate(model, batch: int, seconds: float) -> float:
    """Forward batches per second with a fixed input shape."""
    import numpy as np

    shape = (batch, *model.inputs[0].shape[1:])
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    return _rate(lambda: model.predict_on_batch(x), seconds)


def train_rate(model, batch: int, seconds: float, jit_compile: bool | str = "auto") -> float:
    """Training batches per second (SGD with momentum, every head's loss).

    ``"auto"`` is what ``harness train`` gets from Keras: a jitted step on JAX
    and on a TensorFlow GPU, a graph without XLA on a TensorFlow CPU. False
    would run JAX's step op by op, a path no training takes."""
    import keras
    import numpy as np

    rng = np.random.default_rng(0)
    board = model.inputs[0].shape[1]
    points = board * board
    x = rng.random((batch, *model.inputs[0].shape[1:]), dtype=np.float32)
    heads = set(model.output_names)
    value = rng.integers(0, 2, (batch, 1)).astype(np.float32)
    targets = {"policy": rng.integers(0, points + 1, batch),
               "value": value if model.value_loss == "bce" else 2 * value - 1}
    losses = {"policy": keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              "value": "binary_crossentropy" if model.value_loss == "bce" else "mse"}
    if "ownership" in heads:
        targets["ownership"] = rng.integers(-1, 2, (batch, points)).astype(np.float32)
        losses["ownership"] = "mse"
    if "score" in heads:
        targets["score"] = rng.normal(0, 5, (batch, 1)).astype(np.float32)
        losses["score"] = "mse"
    model.compile(optimizer=keras.optimizers.SGD(0.001, momentum=0.9), loss=losses,
                  jit_compile=jit_compile)
    return _rate(lambda: model.train_on_batch(x, targets), seconds)


def measure(args: argparse.Namespace, log=print) -> list[tuple]:
    import keras

    from harness.nets import build_model, model_summary
    from harness.train.preflight import dtype_policy

    board = f"{args.board_size}x{args.board_size}"
    precision = resolve_precision(getattr(args, "precision", "auto"))
    dev = device()
    size, repeats = (GPU_MATMUL_SIZE, 10) if dev.is_gpu else (MATMUL_SIZE, 1)
    # The peak in the dtype the models compute in (bfloat16 under mixed_bfloat16).
    compute = {"mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}.get(precision,
                                                                            "float32")
    peak = matmul_peak(args.seconds, size, dtype=compute, repeats=repeats)
    log(f"  {compute} matmul {size}: {peak:,.1f} GFLOP/s")
    rows = [(f"matmul {size}x{size}", "-", "-", 2 * size**3 / 1e6, "peak",
             "-", "-", "-", peak, 1.0, compute)]

    def row(name, info, kind, batch, rate):
        mflops = info["flops"] / 1e6
        factor = TRAIN_FLOPS_FACTOR if kind.startswith("train") else 1
        gflops = factor * mflops * rate * batch / 1e3
        log(f"  {name} {kind} batch {batch}: {rate * batch:,.0f} positions/s, "
            f"{gflops:,.1f} GFLOP/s ({gflops / peak:.0%} of peak)")
        return (name, board, info["params"], mflops, kind, batch, rate * batch, rate, gflops,
                gflops / peak, precision)

    for name in args.names:
        keras.backend.clear_session()
        with dtype_policy(precision):
            model = build_model(name, args.board_size, args.planes, seed=0)
        info = model_summary(model)
        for batch in args.batch_sizes:
            rows.append(row(name, info, "forward", batch,
                            forward_rate(model, batch, args.seconds)))
        if args.train_batch:
            xla = getattr(args, "jit_compile", False)
            rate = train_rate(model, args.train_batch, args.seconds, True if xla else "auto")
            rows.append(row(name, info, "train (XLA)" if xla else "train", args.train_batch,
                            rate))
    return rows


def run(args: argparse.Namespace) -> int:
    from harness.nets.plugins import model_spec

    for name in args.names:
        model_spec(name)
    rows = measure(args)
    print(format_table(HEADER, rows))
    stem = args.save or f"results/bench/models-{args.board_size}x{args.board_size}"
    save_table(HEADER, rows, stem)
    print(f"saved {stem}.csv and {stem}.md")
    return 0
