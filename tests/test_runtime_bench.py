"""The bench tables' arithmetic: GFLOP/s and share of the matmul peak
(harness bench models), and the runtime table's ratios (harness bench runtime)."""

from __future__ import annotations

import argparse

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
