"""A bad ``harness train`` config stops with one line naming the problem, before any work.

"Before any work" is checked as: exit status 2, exactly one line on stderr,
and no run directory created.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_train_targets import two_games  # noqa: F401  (a 9x9 positions file, fixture)

from harness.cli import main


def run_train(argv: list[str], capsys) -> tuple[int, str]:
    """``harness train``: exit code and stderr without the closing summary line."""
    code = main(["train", *argv])
    err = capsys.readouterr().err if capsys is not None else ""
    return code, "".join(line for line in err.splitlines(keepends=True)
                         if not line.startswith(("harness train: finished in",
                                                 "harness train: stopped with exit code")))


def assert_stops(argv, capsys, runs: Path, needle: str) -> None:
    code, err = run_train([*argv, "--runs-dir", str(runs), "--quiet"], capsys)
    lines = err.strip().splitlines()
    assert code == 2
    assert len(lines) == 1, err
    assert needle in lines[0]
    assert not runs.exists(), "a run directory was created before the config was checked"


def test_unknown_key(tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text('[train]\nmodel = "a0.tiny"\ndata = "x.h5"\nepoch_sample = 5\n')
    assert_stops(["--config", str(config)], capsys, tmp_path / "models",
                 f"{config}: unknown key 'epoch_sample'")


def test_unknown_model_name(two_games, tmp_path, capsys):  # noqa: F811
    assert_stops(["--model", "a0.huge.wings", "--data", str(two_games)], capsys,
                 tmp_path / "models", "a0.huge.wings")
    assert_stops(["--model", "alexnet", "--data", str(two_games)], capsys,
                 tmp_path / "models", "unknown family 'alexnet'")


def test_missing_dataset(tmp_path, capsys):
    missing = tmp_path / "nowhere.h5"
    assert_stops(["--model", "a0.tiny", "--data", str(missing)], capsys, tmp_path / "models",
                 f"{missing}: dataset not found")


def test_unknown_split_and_encoder(two_games, tmp_path, capsys):  # noqa: F811
    assert_stops(["--model", "a0.tiny", "--data", str(two_games), "--val-split", "dev"],
                 capsys, tmp_path / "models", "unknown split 'dev'")
    assert_stops(["--model", "a0.tiny", "--data", str(two_games), "--encoder", "agz99"],
                 capsys, tmp_path / "models", "unknown encoder 'agz99'")


@pytest.fixture(scope="module")
def agz17_checkpoints(tmp_path_factory) -> dict[str, Path]:
    """Zoo checkpoints taking AlphaGo Zero planes (17), for 9x9 and 19x19 boards."""
    from harness.nets import build_model, save_model

    folder = tmp_path_factory.mktemp("ckpt")
    return {size: save_model(build_model("a0.tiny", size, 17, seed=0),
                             folder / f"agz17-{size}.keras") for size in (9, 19)}


def test_encoder_mismatch_between_model_and_dataset(two_games, agz17_checkpoints, tmp_path,  # noqa: F811
                                                    capsys):
    # The file's default encoder is cazenave21 (21 planes); the checkpoint takes 17.
    assert_stops(["--model", "a0.tiny", "--data", str(two_games),
                  "--init", str(agz17_checkpoints[9])], capsys, tmp_path / "models",
                 "model takes 17 input planes, encoder cazenave21 gives 21")


def test_board_size_mismatch_between_model_and_dataset(two_games, agz17_checkpoints,  # noqa: F811
                                                       tmp_path, capsys):
    assert_stops(["--model", "a0.tiny", "--data", str(two_games), "--encoder", "agz17",
                  "--init", str(agz17_checkpoints[19])], capsys, tmp_path / "models",
                 "model is for a 19x19 board, dataset is 9x9")


def test_matching_checkpoint_passes_the_checks(two_games, agz17_checkpoints, tmp_path):  # noqa: F811
    from harness.train.config import TrainConfig
    from harness.train.preflight import resolve_against_world

    config = TrainConfig(model="a0.tiny", data=str(two_games), encoder="agz17",
                         init=str(agz17_checkpoints[9]), run="ok", runs_dir=str(tmp_path))
    resolved, meta = resolve_against_world(config)
    assert (meta.board_size, resolved.encoder, resolved.value_loss) == (9, "agz17", "mse")
    assert resolved.loss_weights == {"policy": 1.0, "value": 1.0}


def test_resume_takes_the_saved_config_and_refuses_changes(tmp_path):
    from harness.train.config import ConfigError, TrainConfig
    from harness.train.preflight import resolve_config
    from harness.train.run_dir import RunDir

    saved = TrainConfig(model="a0.tiny", data="d.h5", run="r", runs_dir=str(tmp_path),
                        encoder="agz17", value_loss="mse", epochs=3)
    RunDir(saved.run_dir).create(saved)
    same = {"run": "r", "runs_dir": str(tmp_path), "model": "a0.tiny", "epochs": 3}
    assert resolve_config(None, same, resume=True) == saved
    config = tmp_path / "run.toml"
    config.write_text('model = "a0.tiny"\ndata = "d.h5"\nrun = "r"\nvalue_loss = "auto"\n'
                      f'runs_dir = "{tmp_path}"\n')
    assert resolve_config(config, {}, resume=True) == saved  # "auto" was resolved to mse
    with pytest.raises(ConfigError, match="epochs was 3 for this run, cannot change it to 5"):
        resolve_config(None, {**same, "epochs": 5}, resume=True)
    with pytest.raises(ConfigError, match=r"no training run to resume|no saved config"):
        resolve_config(None, {"run": "other", "runs_dir": str(tmp_path)}, resume=True)


def test_unknown_precision(two_games, tmp_path, capsys):  # noqa: F811
    assert_stops(["--model", "a0.tiny", "--data", str(two_games), "--precision", "fp8"],
                 capsys, tmp_path / "models", "unknown precision 'fp8'")


def test_a_split_smaller_than_one_batch(two_games, tmp_path, capsys):  # noqa: F811
    assert_stops(["--model", "a0.tiny", "--data", str(two_games), "--batch-size", "4096"],
                 capsys, tmp_path / "models", "fewer than one batch of 4096")


def test_mixed_precision_run_computes_in_bfloat16_and_reloads_so(two_games, tmp_path,  # noqa: F811
                                                                  monkeypatch):
    """Where bfloat16 is native; elsewhere it reloads in float32
    (tests/test_nets_precision.py)."""
    import keras

    import harness.devices
    from harness.train.checkpoints import load_checkpoint

    code, _ = run_train(["--model", "a0.tiny", "--data", str(two_games), "--epochs", "1",
                         "--epoch-samples", "16", "--batch-size", "8",
                         "--precision", "mixed_bfloat16", "--runs-dir", str(tmp_path),
                         "--no-tensorboard", "--quiet"], None)
    assert code == 0
    assert keras.config.dtype_policy().name == "float32"  # the global policy is restored
    monkeypatch.setattr(harness.devices, "resolve_precision",
                        lambda name: "mixed_bfloat16" if name == "auto" else name)
    model = load_checkpoint(tmp_path / "a0.tiny" / "best.keras")
    convs = [layer for layer in model.layers if isinstance(layer, keras.layers.Conv2D)]
    assert convs and all(layer.compute_dtype == "bfloat16" for layer in convs)
    assert all(w.dtype == "float32" for w in model.trainable_weights)
