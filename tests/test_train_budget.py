"""Compute budgets: a run trains until its budget is spent, whatever the model's speed."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("keras")

from test_train_loop import plan_for, read_metrics

from harness.train.config import ConfigError, TrainConfig
from harness.train.run_dir import RunDir
from harness.train.trainer import train


def test_sample_budget_spends_exactly_its_samples_in_equal_slices(tmp_path):
    # 160 samples at batch 16 in 2 slices: each slice ends at the first step past 80.
    result = train(plan_for(tmp_path, budget=160, budget_unit="samples", epochs=2),
                   progress=False, log=lambda s: None)
    assert result.exit_code == 0 and result.step == 10
    rows = read_metrics(tmp_path / "r")
    assert [int(r["samples_seen"]) for r in rows] == [80, 160]
    assert [int(r["samples"]) for r in rows] == [80, 80]
    state = RunDir(tmp_path / "r").read_state()
    config = plan_for(tmp_path, budget=160, budget_unit="samples").config
    assert config.pace.used(state) == pytest.approx(1.0) and config.pace.run_over(state)


def test_budget_schedule_follows_the_fraction_spent(tmp_path):
    """Cosine over the budget: half-way the rate is midway, at the end it is the final rate."""
    train(plan_for(tmp_path, budget=320, budget_unit="samples", epochs=2, lr=0.04,
                   lr_final=0.0), progress=False, log=lambda s: None)
    rows = read_metrics(tmp_path / "r")
    # the rate of the last step of each slice: used 0.45 and 0.95 of the budget
    assert float(rows[0]["lr"]) == pytest.approx(0.02 * (1 + math.cos(math.pi * 0.45)),
                                                 rel=1e-4)
    assert float(rows[1]["lr"]) < 0.001


def test_wall_budget_stops_training_and_charges_only_training(tmp_path):
    result = train(plan_for(tmp_path, budget=3.0, budget_unit="wall_s", epochs=2),
                   progress=False, log=lambda s: None)
    assert result.exit_code == 0
    rows = read_metrics(tmp_path / "r")
    assert len(rows) == 2
    wall = float(rows[-1]["wall_time_s"])
    assert 3.0 <= wall < 3.0 + 60  # the last step may overrun, never stops short
    assert float(rows[-1]["cpu_time_s"]) > 0
    assert int(rows[-1]["samples_seen"]) > 0


def test_validation_rows_carry_intervals(tmp_path):
    train(plan_for(tmp_path, epochs=1), progress=False, log=lambda s: None)
    row = read_metrics(tmp_path / "r")[0]
    for name in ("policy_top1", "policy_top5", "value_mse"):
        low, mid, high = (float(row[f"val_{name}{s}"]) for s in ("_low", "", "_high"))
        assert low <= mid <= high and low < high
    assert int(row["val_games"]) == 48  # an in-memory split: every position its own game


def test_bad_budget_is_one_line():
    with pytest.raises(ConfigError, match="budget_unit"):
        TrainConfig(model="m", data="d", budget=10, budget_unit="hours")
    with pytest.raises(ConfigError, match="budget must be"):
        TrainConfig(model="m", data="d", budget=-1)


def test_seeds_make_one_run_per_seed_with_its_own_name():
    from harness.commands.train import seed_runs

    base = TrainConfig(model="a0.tiny", data="d.h5", run="r", seeds=(3, 5))
    runs = seed_runs(base)
    assert [(c.run, c.seed, c.seeds) for c in runs] == [("r-seed3", 3, ()), ("r-seed5", 5, ())]
    assert seed_runs(TrainConfig(model="a0.tiny", data="d.h5", run="r")) == [
        TrainConfig(model="a0.tiny", data="d.h5", run="r")]
    with pytest.raises(ConfigError, match="distinct"):
        TrainConfig(model="m", data="d", seeds=(1, 1))
