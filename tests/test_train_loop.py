"""The training loop on an in-memory split: files of a run, Ctrl-C, resume, conventions."""

from __future__ import annotations

import csv
import json
import os
import signal

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from harness.train.checkpoints import load_checkpoint  # noqa: E402
from harness.train.config import ConfigError, TrainConfig  # noqa: E402
from harness.train.sources import ArraySource  # noqa: E402
from harness.train.trainer import EXIT_INTERRUPTED, TrainingPlan, train  # noqa: E402

SIZE, PLANES = 5, 2


def tiny_model(activation: str = "tanh"):
    keras.utils.set_random_seed(1)
    inp = keras.Input((SIZE, SIZE, PLANES))
    h = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
    h = keras.layers.Flatten()(h)
    policy = keras.layers.Dense(SIZE * SIZE + 1, name="policy")(h)
    value = keras.layers.Dense(1, activation=activation, name="value")(h)
    return keras.Model(inp, {"policy": policy, "value": value})


def tiny_split(n: int = 96, seed: int = 0) -> ArraySource:
    """Plane 0 holds a stone at the target move; plane 1 is full iff the value is +1."""
    rng = np.random.default_rng(seed)
    moves = rng.integers(0, SIZE * SIZE, n)
    value = rng.choice([-1.0, 1.0], n)
    x = np.zeros((n, SIZE, SIZE, PLANES), np.float32)
    x[np.arange(n), moves // SIZE, moves % SIZE, 0] = 1
    x[value > 0, :, :, 1] = 1
    return ArraySource(x, {"policy": moves, "value": value})


def plan_for(tmp_path, activation="tanh", source=None, **changes) -> TrainingPlan:
    values = dict(model="tiny", data="memory", run="r", runs_dir=str(tmp_path), epochs=2,
                  epoch_samples=64, batch_size=16, lr=0.05, lr_schedule="cosine",
                  lr_final=0.005, tensorboard=False)
    config = TrainConfig(**{**values, **changes})
    return TrainingPlan(config, source or tiny_split(), tiny_split(48, seed=1),
                        lambda: tiny_model(activation), load_checkpoint)


def read_metrics(run_dir):
    with open(run_dir / "metrics.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_two_epochs_write_every_file_of_a_run(tmp_path):
    result = train(plan_for(tmp_path), progress=False, log=lambda s: None)
    run = tmp_path / "r"
    assert result.exit_code == 0 and result.step == 8
    rows = read_metrics(run)
    assert [int(r["epoch"]) for r in rows] == [1, 2]
    assert [int(r["step"]) for r in rows] == [4, 8]
    for row in rows:
        for key in ("val_policy_top1", "val_policy_top5", "val_value_mse", "val_policy_loss",
                    "val_value_loss", "train_loss", "lr", "samples_per_s", "wall_time_s"):
            assert row[key] != "" and np.isfinite(float(row[key])), key
        assert 0 <= float(row["val_policy_top1"]) <= float(row["val_policy_top5"]) <= 1
    assert float(rows[1]["lr"]) < float(rows[0]["lr"])  # cosine decays
    assert json.loads((run / "config.json").read_text())["epochs"] == 2
    for name in ("epoch-001.keras", "epoch-002.keras", "best.keras", "state.json"):
        assert (run / name).exists(), name
    assert not list(run.glob(".*tmp*"))  # atomic writes leave no temporaries
    model = load_checkpoint(run / "epoch-002.keras")
    assert int(model.optimizer.iterations) == 8


def test_existing_run_is_not_overwritten(tmp_path):
    train(plan_for(tmp_path, epochs=1), progress=False, log=lambda s: None)
    with pytest.raises(ConfigError, match="already exists"):
        train(plan_for(tmp_path, epochs=1), progress=False, log=lambda s: None)


class InterruptingSource(ArraySource):
    """Sends SIGINT to this process when the stream reaches a given batch, once."""

    def __init__(self, base: ArraySource, at_batch: int):
        super().__init__(base.x, base.targets)
        self.countdown = at_batch

    def batches(self, batch_size, *, seed, augment):
        for batch in super().batches(batch_size, seed=seed, augment=augment):
            if augment:
                self.countdown -= 1
                if self.countdown == 0:
                    os.kill(os.getpid(), signal.SIGINT)
            yield batch


def test_ctrl_c_checkpoints_and_resume_matches_an_uninterrupted_run(tmp_path):
    straight = train(plan_for(tmp_path / "a"), progress=False, log=lambda s: None)
    # Batch 1 is consumed by the trainer's peek at the targets; the signal arrives as
    # the 3rd training batch of epoch 1 is produced, so that step finishes first.
    plan = plan_for(tmp_path / "b", source=InterruptingSource(tiny_split(), 4))
    interrupted = train(plan, progress=False, log=lambda s: None)
    assert interrupted.exit_code == EXIT_INTERRUPTED
    assert "interrupted in epoch 1 after 3 of 4 steps" in interrupted.message
    state = json.loads((tmp_path / "b" / "r" / "state.json").read_text())
    assert state["partial"] == {"epoch": 1, "batches": 3, "step": 3,
                                "checkpoint": "interrupted.keras"}
    assert not (tmp_path / "b" / "r" / "metrics.csv").exists()

    resumed = train(plan_for(tmp_path / "b"), resume=True, progress=False, log=lambda s: None)
    assert resumed.exit_code == 0 and resumed.step == straight.step == 8
    rows_a, rows_b = read_metrics(tmp_path / "a" / "r"), read_metrics(tmp_path / "b" / "r")
    assert [r["step"] for r in rows_b] == ["4", "8"]
    # Same batches in the same order and the optimizer state restored: same result.
    for key in ("val_loss", "val_policy_top1", "val_value_mse"):
        assert float(rows_b[-1][key]) == pytest.approx(float(rows_a[-1][key]), rel=1e-4)


def test_sigmoid_head_trains_on_probabilities(tmp_path):
    """BCE head: targets (z+1)/2; metrics report value MSE in [-1, 1] anyway."""
    result = train(plan_for(tmp_path, activation="sigmoid", epochs=3, lr=0.2,
                            lr_schedule="constant"),
                   progress=False, log=lambda s: None)
    assert result.exit_code == 0
    rows = read_metrics(tmp_path / "r")
    # A constant 0.5 prediction has signed MSE exactly 1 and BCE log 2.
    assert float(rows[-1]["val_value_mse"]) < 0.5
    assert float(rows[-1]["val_value_loss"]) < 0.5 * np.log(2)
    model = load_checkpoint(tmp_path / "r" / "epoch-003.keras")
    val = tiny_split(48, seed=1)
    p = np.asarray(model.predict_on_batch(val.x)["value"]).ravel()
    assert np.all((p > 0.5) == (val.targets["value"] > 0))  # probability of a win


def test_value_loss_must_match_the_head(tmp_path):
    with pytest.raises(ConfigError, match="does not match the model's value head"):
        train(plan_for(tmp_path, activation="sigmoid", value_loss="mse"), progress=False,
              log=lambda s: None)
