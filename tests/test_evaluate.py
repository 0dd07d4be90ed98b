"""``harness evaluate``: the same metrics for any checkpoint, checked against a direct count."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from test_train_targets import two_games  # noqa: F401  (a 9x9 positions file, fixture)

from harness.cli import main


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from harness.nets import build_model, save_model

    folder = tmp_path_factory.mktemp("eval")
    return save_model(build_model("a0.tiny", 9, 21, seed=3), folder / "tiny.keras")


def run_evaluate(argv, capsys) -> tuple[int, str, str]:
    """``harness evaluate``: exit code, stdout and stderr without the closing summary line."""
    code = main(["evaluate", *argv, "--quiet"])
    captured = capsys.readouterr()
    err = "".join(line for line in captured.err.splitlines(keepends=True)
                  if not line.startswith("harness evaluate: finished in")
                  and not line.startswith("harness evaluate: stopped with exit code"))
    return code, captured.out, err


def direct_metrics(model_path, data_path) -> dict[str, float]:
    """Top-1 and signed value MSE computed without the harness pipeline or metrics code."""
    from harness.data.dataset import open_dataset
    from harness.features import get_encoder
    from harness.nets import load_model

    encoder = get_encoder("cazenave21")
    with open_dataset(data_path) as ds:
        rows = ds.split_rows("train")
        pos = ds.positions(rows, history=encoder.history)
    x = encoder.encode(pos["stones"], pos["to_play"], 9)
    out = load_model(model_path).predict(x, verbose=0)
    top1 = float(np.mean(np.argmax(out["policy"], axis=1) == pos["move"]))
    mse = float(np.mean((out["value"].ravel() - pos["value"]) ** 2))
    return {"policy_top1": top1, "value_mse": mse, "samples": len(rows)}


def test_evaluate_prints_and_saves_metrics_matching_a_direct_count(two_games, checkpoint,  # noqa: F811
                                                                   capsys):
    code, out, err = run_evaluate([str(checkpoint), "--data", str(two_games), "--split", "train",
                                   "--batch-size", "4"], capsys)
    assert code == 0, err
    assert "policy_top1" in out and "value_mse" in out
    stem = checkpoint.with_name(f"tiny.eval.{two_games.stem}.train")
    result = json.loads(stem.with_name(stem.name + ".json").read_text())
    with open(stem.with_name(stem.name + ".csv"), newline="") as f:
        row = next(csv.DictReader(f))
    assert float(row["policy_top1"]) == pytest.approx(result["policy_top1"])
    want = direct_metrics(checkpoint, two_games)
    assert result["samples"] == want["samples"] == 9
    assert result["policy_top1"] == pytest.approx(want["policy_top1"])
    assert result["value_mse"] == pytest.approx(want["value_mse"], rel=1e-4)
    for key in ("policy_top5", "policy_loss", "value_loss", "loss"):
        assert np.isfinite(result[key])


def test_evaluate_out_option_and_bad_inputs(two_games, checkpoint, tmp_path, capsys):  # noqa: F811
    code, _, _ = run_evaluate([str(checkpoint), "--data", str(two_games), "--split", "train",
                               "--out", str(tmp_path / "res" / "m")], capsys)
    assert code == 0 and (tmp_path / "res" / "m.json").exists()
    for argv, needle in (
        ([str(checkpoint), "--data", str(two_games), "--split", "val"], "split 'val' has no"),
        ([str(checkpoint), "--data", str(tmp_path / "no.h5")], "dataset not found"),
        ([str(tmp_path / "no.keras"), "--data", str(two_games)], "no.keras"),
        ([str(checkpoint), "--data", str(two_games), "--split", "train", "--encoder", "agz17"],
         "model takes 21 input planes, encoder agz17 gives 17"),
    ):
        code, _, err = run_evaluate(argv, capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err, err


def test_a_saved_recalibrated_checkpoint_scores_as_it_was_scored(two_games, checkpoint,  # noqa: F811
                                                                tmp_path, capsys):
    from harness.nets import load_model

    saved = tmp_path / "precise.keras"
    code, out, err = run_evaluate([str(checkpoint), "--data", str(two_games), "--split", "train",
                                   "--batch-size", "4", "--recalibrate-bn", "2",
                                   "--save-model", str(saved), "--out", str(tmp_path / "r")],
                                  capsys)
    assert code == 0, err
    assert f"wrote {saved}" in out
    recalibrated = json.loads((tmp_path / "r.json").read_text())
    code, _, err = run_evaluate([str(saved), "--data", str(two_games), "--split", "train",
                                 "--batch-size", "4", "--out", str(tmp_path / "s")], capsys)
    assert code == 0, err
    as_saved = json.loads((tmp_path / "s.json").read_text())
    assert as_saved["recalibrate_bn"] == 0
    assert as_saved["loss"] == pytest.approx(recalibrated["loss"], rel=1e-5)
    assert load_model(saved).model_info == load_model(checkpoint).model_info


def test_save_model_needs_a_recalibration_and_a_keras_name(two_games, checkpoint,  # noqa: F811
                                                          tmp_path, capsys):
    code, _, err = run_evaluate([str(checkpoint), "--data", str(two_games), "--split", "train",
                                 "--save-model", str(tmp_path / "x.keras")], capsys)
    assert code == 2 and "--recalibrate-bn" in err
    code, _, err = run_evaluate([str(checkpoint), "--data", str(two_games), "--split", "train",
                                 "--recalibrate-bn", "1", "--save-model", str(tmp_path / "x.h5")],
                                capsys)
    assert code == 2 and ".keras" in err
    assert not list(tmp_path.iterdir())
