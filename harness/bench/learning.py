"""``harness bench learning``: does the harness learn as fast as a plain Keras loop?

A slow start (a network sitting at the most-common-move level for the first
thousand steps) can come from the network and the learning rate, or from the
trainer: batch composition, targets, augmentation, schedule, masks. This
bench separates the two. The same zoo model, initialised with the same seed
and trained with the same optimiser, batch size and learning rate, is trained
twice for the same number of samples:

- by ``harness train`` (a subprocess, exactly as a user runs it: streamed
  batches with random symmetries, budget slices, validation with intervals);
- by a minimal loop: the positions decoded once into arrays (no symmetries),
  then ``model.fit`` with the standard Keras losses, evaluated with numpy.

Both are validated on the same positions; the table prints the two
learning curves side by side, and each loop's training speed (samples/s
over its training steps only, the first step of a slice, which may trace
the graph, excluded), so the trainer's overhead is measured on the same
model, batch and precision.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.files import show_table

HELP = "the harness trainer's learning curve against a minimal Keras fit loop, same model"
HEADER = ("samples", "loop", "val top-1 %", "val value MSE", "train loss", "train samples/s")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="positions file made by harness ingest")
    parser.add_argument("--model", default="a0.tiny", help="zoo model name")
    parser.add_argument("--samples", type=int, default=40_000, help="training samples in all")
    parser.add_argument("--points", type=int, default=4, help="validations along the way")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--weight-decay", type=float, default=0.0,
                        help="decoupled weight decay for both loops (AdamW / SGD decay)")
    parser.add_argument("--val-samples", type=int, default=4096)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--precision", default="float32",
                        help="Keras dtype policy for both loops (default float32)")
    parser.add_argument("--save", default=None, help="also write STEM.csv and STEM.md")


def run(args: argparse.Namespace) -> int:
    points = _points(args.samples, args.points, args.batch_size)
    with tempfile.TemporaryDirectory(prefix="bench-learning-") as tmp:
        harness_rows = harness_curve(args, Path(tmp))
    reference_rows = reference_curve(args, points)
    rows = sorted(harness_rows + reference_rows, key=lambda r: (r[0], r[1]))
    return show_table(HEADER, rows, args.save)


def _points(samples: int, count: int, batch: int) -> list[int]:
    """Sample counts (whole batches) at which both loops validate."""
    steps = samples // batch
    return [round(steps * (i + 1) / count) * batch for i in range(count)]


def harness_curve(args: argparse.Namespace, runs_dir: Path) -> list[tuple]:
    """``harness train`` with a sample budget in ``points`` slices, read from metrics.csv."""
    command = [
        sys.executable, "-m", "harness", "train", "--model", args.model, "--data", args.dataset,
        "--run", "bench", "--runs-dir", str(runs_dir), "--budget", str(args.samples),
        "--budget-unit", "samples", "--epochs", str(args.points), "--batch-size",
        str(args.batch_size), "--optimizer", args.optimizer, "--lr", str(args.lr),
        "--lr-schedule", "constant", "--weight-decay", str(args.weight_decay),
        "--val-samples", str(args.val_samples), "--seed", str(args.seed),
        "--precision", args.precision, "--no-tensorboard", "--quiet",
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"harness train failed: {done.stderr.strip()[-2000:]}")
    with open(runs_dir / "bench" / "metrics.csv", newline="") as f:
        return [
            (int(float(r["samples_seen"])), "harness train", 100 * float(r["val_policy_top1"]),
             float(r["val_value_mse"]), float(r["train_loss"]), float(r["samples_per_s"]))
            for r in csv.DictReader(f)
        ]


def _arrays(dataset: str, split: str, batch: int, count: int, *, shuffle: bool, seed: int):
    """``count`` positions of ``split`` decoded once: planes, policy, value, value mask."""
    from harness.data.pipeline import BatchStream, PipelineConfig

    config = PipelineConfig(batch_size=batch, seed=seed, augment=False)
    if not shuffle:
        config = config.validation()
    with BatchStream(dataset, split, config) as stream:
        parts = list(itertools.islice(stream.epoch(seed), -(-count // batch)))
    x = np.concatenate([p[0] for p in parts])[:count]
    policy = np.concatenate([p[1]["policy"] for p in parts])[:count]
    value = np.concatenate([p[1]["value"] for p in parts])[:count].reshape(-1)
    known = np.concatenate([p[2]["value"] for p in parts])[:count].reshape(-1)
    return x, policy, value, known


def reference_curve(args: argparse.Namespace, points: list[int]) -> list[tuple]:
    """The minimal loop: arrays, ``model.fit``, numpy metrics."""
    import keras

    from harness.nets import build_model

    keras.mixed_precision.set_dtype_policy(args.precision)
    keras.utils.set_random_seed(args.seed)
    x, policy, value, known = _arrays(args.dataset, "train", args.batch_size, points[-1],
                                      shuffle=True, seed=args.seed)
    vx, vpolicy, vvalue, vknown = _arrays(args.dataset, "val", 256, args.val_samples,
                                          shuffle=False, seed=0)
    model = build_model(args.model, x.shape[1], x.shape[-1], heads=(), seed=args.seed)
    bce = getattr(model, "value_loss", "mse") == "bce"
    wd = args.weight_decay or None
    if args.optimizer == "adam":
        optimizer = (keras.optimizers.AdamW(args.lr, weight_decay=wd) if wd
                     else keras.optimizers.Adam(args.lr))
    else:
        optimizer = keras.optimizers.SGD(args.lr, momentum=0.9, weight_decay=wd)
    model.compile(optimizer=optimizer,
                  loss={"policy": keras.losses.CategoricalCrossentropy(from_logits=True),
                        "value": (keras.losses.BinaryCrossentropy() if bce
                                  else keras.losses.MeanSquaredError())})
    target = (value + 1) / 2 if bce else value
    rows, start = [], 0
    for end in points:
        clock = _step_clock()
        history = model.fit(
            x[start:end], {"policy": policy[start:end], "value": target[start:end]},
            sample_weight={"policy": np.ones(end - start, np.float32),
                           "value": known[start:end].astype(np.float32)},
            batch_size=args.batch_size, epochs=1, shuffle=False, verbose=0, callbacks=[clock],
        )
        speed = (end - start - args.batch_size) / clock.seconds if clock.seconds else float("nan")
        start = end
        out = model.predict(vx, batch_size=256, verbose=0)
        logits, predicted = out["policy"], np.asarray(out["value"], np.float64).reshape(-1)
        if bce:
            predicted = 2 * predicted - 1
        top1 = np.mean(np.argmax(logits, axis=1) == np.argmax(vpolicy, axis=1))
        mse = np.sum(vknown * (predicted - vvalue) ** 2) / max(1.0, vknown.sum())
        rows.append((end, "minimal fit", 100 * float(top1), float(mse),
                     float(history.history["loss"][-1]), speed))
    return rows


def _step_clock():
    import keras

    class StepClock(keras.callbacks.Callback):
        """Seconds from the end of a fit's first batch to the end of its last."""

        def on_train_batch_end(self, batch, logs=None):
            now = time.perf_counter()
            if batch == 0:
                self.start = now
            self.seconds = now - self.start

    return StepClock()
