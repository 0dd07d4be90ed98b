"""The bench tables' arithmetic: GFLOP/s and share of the matmul peak
(harness bench models), and the runtime table's ratios (harness bench runtime)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys

import pytest

from harness.bench import models as bench_models

SIZE, PLANES = 9, 17


def test_models_rows_give_gflops_from_flops_and_rates():
    args = argparse.Namespace(names=["a0.tiny"], board_size=SIZE, planes=PLANES,
                              batch_sizes=(4,), train_batch=8, seconds=0.05,
                              precision="float32")
    header = bench_models.HEADER
    rows = [dict(zip(header, row, strict=True)) for row in bench_models.measure(args, log=str)]
    peak, forward, train = rows
    assert peak["pass"] == "peak" and peak["of peak"] == 1.0 and peak["GFLOP/s"] > 0
    # a0.tiny on 9x9 with 17 planes: 1.61 MFLOPs per position (harness models).
    assert forward["MFLOPs"] == pytest.approx(1.61, abs=0.01)
    assert forward["GFLOP/s"] == pytest.approx(forward["MFLOPs"] * forward["positions/s"] / 1e3)
    assert train["GFLOP/s"] == pytest.approx(3 * train["MFLOPs"] * train["positions/s"] / 1e3)
    for row in (forward, train):
        assert row["of peak"] == pytest.approx(row["GFLOP/s"] / peak["GFLOP/s"])
        assert row["precision"] == "float32"


JIT_CHECK = """
import keras
from harness.bench.models import train_rate
from harness.nets import build_model
from harness.train.config import OptimizerSettings
from harness.train.trainer import compile_model

bench = build_model("a0.tiny", 5, 17, seed=0)
train_rate(bench, 2, 0.0)
trained = build_model("a0.tiny", 5, 17, seed=0)
compile_model(trained, OptimizerSettings(), 0.01, "mse", soft_policy=False)
trained.make_train_function()
print(keras.backend.backend(), bench.jit_compile, trained.jit_compile)
"""


@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_the_bench_compiles_its_training_step_as_harness_train_does(backend):
    """On JAX a step compiled with jit_compile=False runs op by op, a path
    training never takes, so the bench must not time it."""
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"{backend} not installed")
    env = {**os.environ, "KERAS_BACKEND": backend}
    done = subprocess.run([sys.executable, "-c", JIT_CHECK], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    name, bench, trained = done.stdout.split()[-3:]
    assert name == backend
    assert bench == trained
    if backend == "jax":
        assert bench == "True"
