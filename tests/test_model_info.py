"""Model files describe themselves: the encoder, board, rules, heads and value
convention a ``.keras`` file was trained with travel inside it.

The case that matters: ``cazenave21`` and ``nogo`` both take 21 planes, so a
21-plane network copied out of its run directory used to be fed whatever the
width suggested (``cazenave21`` in a Go game). A network recorded as ``nogo``
must be fed ``nogo`` planes by every reader, wherever the file is.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_train_targets import two_games  # noqa: F401  (a 9x9 positions file, fixture)

from harness.game.geometry import BLACK, gtp_to_point
from harness.game.position import Game
from harness.nets.info import MEMBER, ModelFileError, ModelInfo, read_model_info

NOGO_INFO = ModelInfo(encoder="nogo", board_size=9, heads=("policy", "value"), value="tanh",
                      rules="nogo", architecture="a0.2.16")

POSITION = """
. . . . . . . . .
. . . . . . . . .
. . X O . . . . .
. . X O . . . . .
. . . X O . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""


def tiny_network():
    """a0.tiny on 9x9 with 21 input planes: as wide as both cazenave21 and nogo."""
    from harness.nets import build_model

    return build_model("a0.tiny", 9, 21, seed=5)


@pytest.fixture(scope="module")
def moved_nogo_checkpoint(tmp_path_factory) -> Path:
    """A nogo network saved in its run directory, then copied somewhere with
    no ``config.json`` beside it."""
    from harness.nets import save_model

    run = tmp_path_factory.mktemp("run")
    save_model(tiny_network(), run / "best.keras", NOGO_INFO)
    moved = tmp_path_factory.mktemp("elsewhere") / "best.keras"
    shutil.copyfile(run / "best.keras", moved)
    return moved


@pytest.fixture(scope="module")
def old_checkpoint(tmp_path_factory) -> Path:
    """A 21-plane network saved as every file was before models described themselves."""
    from harness.nets import save_model

    return save_model(tiny_network(), tmp_path_factory.mktemp("old") / "old.keras")


# --- the record ---------------------------------------------------------------------------

def test_a_record_reads_back_equal_from_its_json():
    assert ModelInfo.from_json(NOGO_INFO.to_json()) == NOGO_INFO


def test_a_record_from_a_later_version_keeps_what_this_one_knows():
    values = {**json.loads(NOGO_INFO.to_json()), "komi": 7.5}
    assert ModelInfo.from_json(json.dumps(values)) == NOGO_INFO


@pytest.mark.parametrize(("change", "needle"), [
    ({"encoder": None}, "encoder must be a str"),
    ({"board_size": "9"}, "board_size must be a int"),
    ({"value": "linear"}, "value must be one of"),
    ({"heads": ["policy"]}, "no 'value' head"),
    ({"version": 99}, "newer than this harness reads"),
    ({"format": "something-else"}, "not a harness.model-info record"),
])
def test_a_broken_record_is_a_value_error_naming_the_problem(change, needle):
    values = {**json.loads(NOGO_INFO.to_json()), **change}
    with pytest.raises(ValueError, match=re.escape(needle)):
        ModelInfo.from_json(json.dumps(values))


def test_the_record_is_read_without_tensorflow(moved_nogo_checkpoint):
    code = ("import sys; from harness.nets import read_model_info; "
            f"info = read_model_info({str(moved_nogo_checkpoint)!r}); "
            "print(info.encoder, info.board_size, 'tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.split() == ["nogo", "9", "False"]


def test_a_file_that_is_not_a_zip_is_a_model_file_error(tmp_path):
    junk = tmp_path / "junk.keras"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ModelFileError, match=r"junk\.keras"):
        read_model_info(junk)


# --- writing and loading --------------------------------------------------------------

def test_a_saved_model_reads_back_its_record_and_still_loads_in_safe_mode(moved_nogo_checkpoint):
    import keras

    from harness.nets import load_model

    assert read_model_info(moved_nogo_checkpoint) == NOGO_INFO
    assert keras.saving.load_model(moved_nogo_checkpoint, safe_mode=True).name == "a0.2.16"
    assert load_model(moved_nogo_checkpoint).model_info == NOGO_INFO


def test_loading_and_saving_again_keeps_the_record(moved_nogo_checkpoint, tmp_path):
    from harness.nets import load_model, save_model

    again = save_model(load_model(moved_nogo_checkpoint), tmp_path / "again.keras")
    assert read_model_info(again) == NOGO_INFO


def test_half_weights_halve_the_file_and_load_back_as_the_float32_network_rounded(
        moved_nogo_checkpoint, tmp_path):
    import io
    import zipfile

    import h5py

    from harness.nets import load_model, save_model

    model = load_model(moved_nogo_checkpoint)
    full = save_model(model, tmp_path / "full.keras")
    half = save_model(model, tmp_path / "half.keras", half_weights=True)

    def stored(path):
        """(dtype, bytes) of every dataset in the archive's weights file."""
        with zipfile.ZipFile(path) as archive:
            data = archive.read("model.weights.h5")
        found = []
        with h5py.File(io.BytesIO(data), "r") as weights:
            weights.visititems(lambda _, node: found.append((node.dtype, node.nbytes))
                               if isinstance(node, h5py.Dataset) else None)
        return found

    assert {dtype for dtype, _ in stored(full)} == {np.dtype(np.float32)}
    assert {dtype for dtype, _ in stored(half)} == {np.dtype(np.float16)}
    assert sum(n for _, n in stored(half)) * 2 == sum(n for _, n in stored(full))
    again = load_model(half)
    assert read_model_info(half) == NOGO_INFO
    assert {w.dtype for w in again.weights} == {"float32"}
    for mine, rounded in zip(model.get_weights(), again.get_weights(), strict=True):
        np.testing.assert_array_equal(rounded, mine.astype(np.float16).astype(np.float32))
    planes = np.random.default_rng(3).integers(0, 2, (4, 9, 9, 21)).astype(np.float32)
    np.testing.assert_allclose(again(planes)["value"], model(planes)["value"], atol=1e-2)


def test_the_record_is_taken_from_the_network_but_the_encoder_and_rules(tmp_path):
    from harness.nets import build_model, model_info

    sigmoid = build_model("mobile.tiny", 9, 17, value_loss="bce", heads=("policy", "value",
                                                                          "ownership"))
    info = model_info(sigmoid, encoder="agz17", rules="superko")
    assert info == ModelInfo(encoder="agz17", board_size=9,
                             heads=("policy", "value", "ownership"), value="sigmoid",
                             rules="superko", architecture=sigmoid.name)


@pytest.mark.parametrize(("wrong", "needle"), [
    ({"board_size": 7}, "board_size 7"),
    ({"encoder": "agz17"}, "encoder agz17 (17 planes), the network takes 21"),
    ({"value": "sigmoid"}, "value 'sigmoid'"),
])
def test_a_record_that_contradicts_the_network_is_refused(tmp_path, wrong, needle):
    from dataclasses import replace

    from harness.nets import save_model

    with pytest.raises(ValueError, match=re.escape(needle)):
        save_model(tiny_network(), tmp_path / "wrong.keras", replace(NOGO_INFO, **wrong))
    assert not (tmp_path / "wrong.keras").exists()


# --- every writer records it ----------------------------------------------------------

def test_a_supervised_run_records_its_encoder_and_rules_in_every_checkpoint(two_games,  # noqa: F811
                                                                           tmp_path):
    from harness.train.config import TrainConfig
    from harness.train.dataset_source import read_dataset_meta
    from harness.train.preflight import make_plan
    from harness.train.trainer import train

    config = TrainConfig(model="a0.tiny", data=str(two_games), run="r", runs_dir=str(tmp_path),
                         encoder="nogo", epochs=1, epoch_samples=8, batch_size=4,
                         tensorboard=False)
    plan = make_plan(config, resume=False)
    try:
        assert train(plan, progress=False, log=lambda line: None).exit_code == 0
    finally:
        plan.train.close()
    rules = read_dataset_meta(two_games).rules
    for name in ("epoch-001.keras", "best.keras"):
        info = read_model_info(tmp_path / "r" / name)
        assert dataclasses.replace(info, compute=None) == ModelInfo(
            encoder="nogo", board_size=9, heads=("policy", "value"), value="tanh",
            rules=rules, architecture="a0.2.16"), name
        assert info.compute.samples == 8, name  # and what it cost (test_compute_counted.py)


def test_an_rl_run_records_its_encoder_in_its_checkpoints_and_writes_no_fake_config(tmp_path):
    from harness.config_io import from_mapping
    from harness.rl.config import RLConfig
    from harness.rl.run import RLRun

    config = from_mapping(RLConfig, {
        "run": "nogo", "runs_dir": str(tmp_path), "board_size": 5, "rules": "nogo",
        "komi": 0.0, "encoder": "nogo", "model": "garb.tiny", "seed": 1}, "test")
    RLRun(config, log=lambda line: None).create()
    info = read_model_info(tmp_path / "nogo" / "models" / "gen-0000.keras")
    assert (info.encoder, info.board_size, info.rules) == ("nogo", 5, "nogo")
    assert info.heads == ("policy", "value", "ownership", "score")
    assert not (tmp_path / "nogo" / "models" / "config.json").exists()


# --- readers use it -------------------------------------------------------------------

def test_a_moved_checkpoint_is_fed_its_recorded_encoder_not_the_width_guess(
        moved_nogo_checkpoint):
    from harness.features import get_encoder
    from harness.nets import load_model
    from harness.players.network import load_network
    from harness.players.policy import PolicyPlayer

    network = load_network(moved_nogo_checkpoint)
    assert not (moved_nogo_checkpoint.parent / "config.json").exists()
    assert network.encoder_for("superko") == "nogo"  # the width alone says cazenave21

    game = Game.from_ascii(POSITION, to_play=BLACK)
    player = PolicyPlayer(network)
    player.select_move(game)
    model = load_model(moved_nogo_checkpoint)

    def policy_on(encoder: str) -> np.ndarray:
        logits = np.array(model(get_encoder(encoder).encode_game(game)[None],
                                training=False)["policy"])[0]
        logits[~game.legal_moves()] = -np.inf
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    assert np.allclose(player.last_policy, policy_on("nogo"), atol=1e-5)
    assert not np.allclose(player.last_policy, policy_on("cazenave21"), atol=1e-5)


def test_a_spec_that_names_another_encoder_than_the_file_is_refused(moved_nogo_checkpoint):
    from harness.players.network import load_network

    with pytest.raises(ValueError, match="trained on encoder nogo, the spec asks for cazenave21"):
        load_network(moved_nogo_checkpoint).encoder_for("superko", "cazenave21")


def test_gtp_with_a_moved_checkpoint_answers_genmove_with_a_legal_move(moved_nogo_checkpoint):
    harness = Path(sys.executable).with_name("harness")
    done = subprocess.run(
        [str(harness), "gtp", "--model", str(moved_nogo_checkpoint), "--size", "9",
         "--playouts", "8", "--seed", "1", "--inference", "keras"],
        input="boardsize 9\nclear_board\ngenmove b\nquit\n",
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    answers = [line.strip() for line in done.stdout.splitlines() if line.startswith(("=", "?"))]
    assert answers[:2] == ["=", "="], done.stdout
    move = answers[2].removeprefix("= ")
    assert Game(9, 7.5).is_legal(gtp_to_point(move, 9)), move
    assert "no model info" not in done.stderr


def test_evaluate_feeds_a_moved_checkpoint_its_recorded_encoder(moved_nogo_checkpoint,
                                                                two_games, capsys):  # noqa: F811
    from harness.cli import main
    from harness.data.dataset import open_dataset
    from harness.features import get_encoder
    from harness.nets import load_model
    from harness.train import checkpoint_eval

    result = checkpoint_eval.evaluate_checkpoint(moved_nogo_checkpoint, two_games, "train")
    assert result["encoder"] == "nogo"  # the dataset's own default is cazenave21
    encoder = get_encoder("nogo")
    with open_dataset(two_games) as ds:
        positions = ds.positions(ds.split_rows("train"), history=encoder.history)
    x = encoder.encode(positions["stones"], positions["to_play"], 9)
    values = load_model(moved_nogo_checkpoint).predict(x, verbose=0)["value"].ravel()
    assert result["value_mse"] == pytest.approx(np.mean((values - positions["value"]) ** 2),
                                                rel=1e-4)

    argv = [str(moved_nogo_checkpoint), "--data", str(two_games), "--split", "train",
            "--encoder", "cazenave21", "--quiet"]
    assert main(["evaluate", *argv]) == 2
    assert "model was trained on encoder nogo, not cazenave21" in capsys.readouterr().err


# --- files from before ------------------------------------------------------------------

def test_an_old_file_loads_with_one_warning_line_and_the_width_guess(old_checkpoint, caplog):
    from harness.players.network import load_network

    assert read_model_info(old_checkpoint) is None
    with caplog.at_level(logging.WARNING):
        first, second = load_network(old_checkpoint), load_network(old_checkpoint)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "\n" not in warnings[0], warnings
    assert str(old_checkpoint) in warnings[0] and "no model info" in warnings[0]
    assert first.encoder_for("superko") == second.encoder_for("superko") == "cazenave21"
    assert first.encoder_for("nogo") == "nogo"


def test_an_old_file_in_its_run_directory_takes_the_runs_encoder(old_checkpoint, tmp_path):
    from harness.players.network import load_network

    run = tmp_path / "run"
    run.mkdir()
    shutil.copyfile(old_checkpoint, run / "epoch-001.keras")
    (run / "config.json").write_text(json.dumps({"model": "a0.tiny", "encoder": "nogo"}))
    assert load_network(run / "epoch-001.keras").encoder_for("superko") == "nogo"


def test_the_record_member_sits_beside_keras_own_files(moved_nogo_checkpoint):
    import zipfile

    names = set(zipfile.ZipFile(moved_nogo_checkpoint).namelist())
    assert {"config.json", "metadata.json", "model.weights.h5", MEMBER} <= names
