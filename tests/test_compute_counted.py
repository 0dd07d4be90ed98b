"""Compute counted: every run records, per checkpoint, what it has spent so far.

A training sample costs three forward passes (the forward pass and the two
backward products), a self-play evaluation one; a network's forward pass
costs two FLOPs per multiply-accumulate of its layers. The cumulative
figures go into the run's stats (``metrics.csv``, ``stats.csv``) and into the
model info of every checkpoint the run saves, where a tool reads them without
TensorFlow.
"""

from __future__ import annotations

import csv
import json

import pytest

from harness.nets.compute import Compute
from harness.nets.info import ModelFileError, ModelInfo, read_model_info

RECORD = ModelInfo(encoder="mao3", board_size=5, architecture="a0.tiny",
                   compute=Compute(train_flops=3 * 10_800 * 128, selfplay_flops=7 * 10_800,
                                   wall_s=1.5, cpu_s=2.5, device="tensorflow on CPU",
                                   samples=128, evaluations=7))


def _rows(path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# --- the record -----------------------------------------------------------------------

def test_the_compute_reads_back_equal_from_the_model_info():
    assert ModelInfo.from_json(RECORD.to_json()) == RECORD


def test_a_record_written_before_compute_was_counted_reads_as_none():
    old = {k: v for k, v in json.loads(RECORD.to_json()).items() if k != "compute"}
    assert ModelInfo.from_json(json.dumps(old)).compute is None
    assert "compute" not in ModelInfo(encoder="mao3", board_size=5).to_json()


def test_a_mistyped_compute_is_one_line_naming_the_field():
    values = json.loads(RECORD.to_json())
    values["compute"]["train_flops"] = "lots"
    with pytest.raises(ValueError, match="model info: compute: train_flops"):
        ModelInfo.from_json(json.dumps(values))


# --- supervised training ----------------------------------------------------------------

SIZE, PLANES = 5, 3  # mao3's planes
# Conv 3x3, 3 -> 4 channels on 25 points; dense 100 -> 26 (policy) and 100 -> 1 (value).
FORWARD_FLOPS = 2 * (3 * 3 * 3 * 4 * 25 + 100 * 26 + 100 * 1)


def _described_model():
    import keras

    from harness.nets import model_info

    keras.utils.set_random_seed(1)
    inp = keras.Input((SIZE, SIZE, PLANES))
    h = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
    h = keras.layers.Flatten()(h)
    policy = keras.layers.Dense(SIZE * SIZE + 1, name="policy")(h)
    value = keras.layers.Dense(1, activation="tanh", name="value")(h)
    model = keras.Model(inp, {"policy": policy, "value": value})
    model.model_info = model_info(model, encoder="mao3")
    return model


def _split(n: int, seed: int):
    import numpy as np

    from harness.train.sources import ArraySource

    rng = np.random.default_rng(seed)
    moves = rng.integers(0, SIZE * SIZE, n)
    x = np.zeros((n, SIZE, SIZE, PLANES), np.float32)
    x[np.arange(n), moves // SIZE, moves % SIZE, 0] = 1
    return ArraySource(x, {"policy": moves, "value": rng.choice([-1.0, 1.0], n)})


def test_a_supervised_run_counts_three_forward_passes_per_sample_trained_on(tmp_path):
    pytest.importorskip("keras")
    from harness.devices import device
    from harness.nets import flops_per_position
    from harness.train.checkpoints import load_checkpoint
    from harness.train.config import TrainConfig
    from harness.train.trainer import TrainingPlan, train

    assert flops_per_position(_described_model()) == FORWARD_FLOPS
    config = TrainConfig(model="tiny", data="memory", run="r", runs_dir=str(tmp_path), epochs=2,
                         epoch_samples=64, batch_size=16, lr=0.05, tensorboard=False)
    plan = TrainingPlan(config, _split(96, 0), _split(32, 1), _described_model, load_checkpoint)
    assert train(plan, progress=False, log=lambda _: None).exit_code == 0

    run = tmp_path / "r"
    rows = _rows(run / "metrics.csv")
    assert [int(r["samples_seen"]) for r in rows] == [64, 128]
    assert [int(r["forward_flops"]) for r in rows] == [FORWARD_FLOPS] * 2
    assert [int(r["train_flops"]) for r in rows] == [3 * FORWARD_FLOPS * 64,
                                                     3 * FORWARD_FLOPS * 128]
    assert {r["device"] for r in rows} == {device().describe()}
    for epoch, row in enumerate(rows, start=1):
        compute = read_model_info(run / f"epoch-{epoch:03d}.keras").compute
        assert compute.train_flops == int(row["train_flops"])
        assert compute.samples == int(row["samples_seen"])
        assert compute.selfplay_flops == 0 and compute.evaluations == 0
        assert compute.wall_s == pytest.approx(float(row["wall_time_s"]), rel=1e-5)
        assert compute.cpu_s == pytest.approx(float(row["cpu_time_s"]), rel=1e-5)
        assert compute.device == device().describe()
    assert read_model_info(run / "best.keras").compute.samples in (64, 128)


# --- self-play -------------------------------------------------------------------------

def test_self_play_counts_its_evaluations_and_training_and_a_resume_continues_them(tmp_path):
    pytest.importorskip("keras")
    from harness.config_io import from_mapping, read_saved_config
    from harness.files import read_json
    from harness.nets import flops_per_position, load_model
    from harness.rl.config import RLConfig
    from harness.rl.run import RLRun

    config = from_mapping(RLConfig, {
        "run": "r", "runs_dir": str(tmp_path), "board_size": 5, "komi": 2.0,
        "encoder": "agz17", "model": "a0.tiny", "generations": 2, "seed": 3,
        "mcts": {"playouts": 6, "add_noise": True, "temperature_moves": 6},
        "evaluator": {"batch_size": 8}, "selfplay": {"games": 2, "parallel": 2},
        "train": {"steps": 1, "batch_size": 8}, "window": {"initial": 8},
    }, "test")
    RLRun(config, log=lambda _: None).run(generations=1)
    run = tmp_path / "r"
    forward = flops_per_position(load_model(run / "models" / "gen-0000.keras"))
    assert read_model_info(run / "models" / "gen-0000.keras").compute.flops == 0

    # A second session (a new process, as after a kill) resumes from state.json.
    RLRun(read_saved_config(RLConfig, run / "config.json"), log=lambda _: None).run(resume=True)

    rows = _rows(run / "stats.csv")
    assert [int(r["generation"]) for r in rows] == [1, 2]
    evaluations = [read_json(run / "stats" / f"gen-{g:04d}.selfplay.json")["evaluations"]
                   for g in (1, 2)]
    assert all(e > 0 for e in evaluations)
    assert [int(r["evaluations"]) for r in rows] == evaluations
    assert [int(r["train_samples"]) for r in rows] == [8, 8]  # one step of 8 per generation
    totals = [(evaluations[0], 8), (sum(evaluations), 16)]
    for row, (evals, samples) in zip(rows, totals, strict=True):
        assert int(row["evaluations_total"]) == evals
        assert int(row["selfplay_flops"]) == evals * forward
        assert int(row["train_samples_total"]) == samples
        assert int(row["train_flops"]) == 3 * forward * samples
        assert float(row["cpu_time_s"]) > 0
    for g, row in enumerate(rows, start=1):
        compute = read_model_info(run / "models" / f"gen-{g:04d}.keras").compute
        assert (compute.selfplay_flops, compute.train_flops) == (
            int(row["selfplay_flops"]), int(row["train_flops"]))
        assert (compute.evaluations, compute.samples) == (
            int(row["evaluations_total"]), int(row["train_samples_total"]))
        assert 0 < compute.wall_s <= float(row["wall_time_s"])  # saved before gating's end
        assert compute.device == row["device"]


# --- the display -------------------------------------------------------------------------

def test_harness_models_shows_what_a_model_file_records(tmp_path, capsys):
    pytest.importorskip("keras")
    from harness.commands.models import describe_file
    from harness.nets import save_model

    model = _described_model()
    path = save_model(model, tmp_path / "m.keras",
                      ModelInfo(encoder="mao3", board_size=5, compute=RECORD.compute))
    lines = describe_file(str(path))
    assert "encoder mao3" in lines[0]
    assert lines[1] == ("  compute: 4.15e+06 training FLOPs (128 samples), 7.56e+04 self-play "
                        "FLOPs (7 evaluations), 1.5 s wall, 2.5 s CPU, on tensorflow on CPU")
    (tmp_path / "bad.keras").write_text("not a zip")
    with pytest.raises(ModelFileError):
        describe_file(str(tmp_path / "bad.keras"))
