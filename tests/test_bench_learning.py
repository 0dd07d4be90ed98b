"""``harness bench learning``: both loops train the same model for the same samples."""

from __future__ import annotations

import csv

import pytest

pytest.importorskip("keras")

from harness.cli import main
from harness.data.ingest import IngestConfig, ingest
from harness.data.synthetic import write_random_sgfs


def test_both_loops_report_a_curve_at_the_same_sample_counts(tmp_path, capsys):
    source = write_random_sgfs(tmp_path / "games.sgf", 40, size=9, moves=30, seed=5)
    data = tmp_path / "games.h5"
    ingest(IngestConfig(sources=[str(source)], output=data, board_size=9, val_games=8,
                        workers=1, progress=False))
    code = main(["bench", "learning", "--dataset", str(data), "--model", "a0.tiny",
                 "--samples", "256", "--points", "2", "--batch-size", "32",
                 "--val-samples", "64", "--save", str(tmp_path / "curve")])
    assert code == 0
    with open(tmp_path / "curve.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["samples"], r["loop"]) for r in rows] == [
        ("128", "harness train"), ("128", "minimal fit"),
        ("256", "harness train"), ("256", "minimal fit"),
    ]
    for row in rows:
        assert 0 <= float(row["val top-1 %"]) <= 100
        assert float(row["val value MSE"]) >= 0 and float(row["train samples/s"]) > 0
    assert "minimal fit" in capsys.readouterr().out
