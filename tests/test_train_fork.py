"""Branching a run (harness.train.fork) and the warm-up, stable, decay schedule."""

from __future__ import annotations

import pytest

from harness.train.config import ConfigError, TrainConfig
from harness.train.fork import fork_run
from harness.train.run_dir import RunDir, RunState
from harness.train.schedules import ScheduleSpec, learning_rate, learning_rate_at


def committed_run(tmp_path) -> RunDir:
    """A run after its first epoch, as the trainer leaves it (the checkpoint a stand-in)."""
    config = TrainConfig(model="a0.tiny", data="d.h5", run="main", runs_dir=str(tmp_path),
                         budget=64, budget_unit="samples", lr_schedule="constant")
    run = RunDir(config.run_dir)
    run.create(config)
    (run.path / "epoch-001.keras").write_bytes(b"weights and optimizer")
    run.write_metrics([{"epoch": 1, "step": 4, "samples_seen": 64}])
    run.write_state(RunState(epochs_done=1, step=4, checkpoint="epoch-001.keras",
                             samples_seen=64, wall_time_s=1.5))
    return run


def branch(tmp_path, **changes) -> TrainConfig:
    values = {"model": "a0.tiny", "data": "d.h5", "run": "branch", "runs_dir": str(tmp_path),
              "budget": 80, "budget_unit": "samples", "epochs": 2, "lr_schedule": "wsd"}
    return TrainConfig(**{**values, **changes})


def test_a_branch_continues_the_source_state_checkpoint_and_history(tmp_path):
    source = committed_run(tmp_path)
    target = fork_run(source.path, branch(tmp_path))
    assert target.read_state() == source.read_state()
    assert (target.path / "epoch-001.keras").read_bytes() == b"weights and optimizer"
    assert target.read_metrics() == source.read_metrics()
    assert target.read_config().lr_schedule == "wsd" and target.read_config().budget == 80
    assert not (tmp_path / "branch.fork").exists()


@pytest.mark.parametrize(("changes", "message"), [
    ({"seed": 3}, "must keep its seed"),
    ({"batch_size": 64}, "must keep its batch_size"),
    ({"epochs": 1}, "do not continue"),
])
def test_a_branch_that_would_not_continue_its_source_is_refused(tmp_path, changes, message):
    source = committed_run(tmp_path)
    with pytest.raises(ConfigError, match=message):
        fork_run(source.path, branch(tmp_path, **changes))
    assert not (tmp_path / "branch").exists()


def test_an_uncommitted_epoch_is_not_branched_from(tmp_path):
    source = committed_run(tmp_path)
    source.write_state(RunState(epochs_done=1, step=6, checkpoint="epoch-001.keras",
                                partial={"epoch": 2, "batches": 2, "step": 6,
                                         "checkpoint": "interrupted.keras"}))
    with pytest.raises(ConfigError, match="no committed epoch"):
        fork_run(source.path, branch(tmp_path))


def test_wsd_is_stable_then_falls_linearly_to_the_final_rate():
    spec = ScheduleSpec("wsd", initial=0.01, final=0.001, total_steps=1000, cooldown=200,
                        warmup=100)
    assert learning_rate(spec, 49) == pytest.approx(0.005)  # warm-up
    assert learning_rate_at(spec, 0.5) == learning_rate_at(spec, 0.8) == 0.01
    assert learning_rate_at(spec, 0.9) == pytest.approx(0.0055)
    assert learning_rate_at(spec, 1.0) == pytest.approx(0.001)
    # the setting: the final fraction of the run
    assert TrainConfig(model="m", data="d", lr=0.01, lr_schedule="wsd", lr_cooldown=0.3,
                       epochs=2, epoch_samples=1000, batch_size=10).schedule(100, 2).cooldown == 60
    with pytest.raises(ConfigError, match="lr_cooldown"):
        TrainConfig(model="m", data="d", lr_cooldown=0.0)


def test_the_keras_schedule_computes_the_same_wsd_rates():
    pytest.importorskip("keras")
    from harness.train._keras_schedule import HarnessSchedule

    spec = ScheduleSpec("wsd", initial=0.01, final=0.001, total_steps=1000, cooldown=200,
                        warmup=100)
    keras_rate = HarnessSchedule(**spec.__dict__)
    for step in (0, 50, 500, 800, 900, 999, 1200):
        assert float(keras_rate(step)) == pytest.approx(learning_rate(spec, step), rel=1e-5)
    assert HarnessSchedule(**keras_rate.get_config()).cooldown == 200
