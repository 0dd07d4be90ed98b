"""``harness compare``: models and the trivial baseline on the same positions."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from test_train_targets import two_games  # noqa: F401  (a 9x9 positions file, fixture)

from harness.commands import compare as compare_command
from harness.stats import Estimate, GroupedMetric
from harness.train.compare import (
    BASELINE,
    ModelResult,
    checkpoint_of,
    compare,
    compare_checkpoints,
    difference_matrix,
    frequent_move_baseline,
)


def test_frequent_move_baseline_knows_the_shared_opening(two_games):  # noqa: F811
    """Both games open ee, cc, gc, cg; only one plays gg: the mode at each move number."""
    from harness.train.dataset_source import open_split

    source = open_split(two_games, "train", "agz17")
    rows, groups = source.rows(4), source.groups(4)
    source.close()
    assert sorted(np.bincount(groups).tolist()) == [4, 5]  # positions of each game
    result = frequent_move_baseline(two_games, "train", rows, groups)
    assert result.grouped["policy_top1"].value == pytest.approx(1.0)
    assert result.grouped["policy_top1"].games == 2
    # Constant value: the training mean of +1/-1 outcomes from the side to move.
    assert 0 < result.grouped["value_mse"].value <= 2.0


def _metric(per_game_hits, per_game_n):
    return GroupedMetric(np.asarray(per_game_hits, float), np.asarray(per_game_n, float))


def test_identical_models_differ_nowhere_and_a_better_one_is_named():
    hits = [5, 7, 3, 9, 4, 6, 8, 2, 5, 6] * 5
    n = [10] * 50
    same = ModelResult("a", {"policy_top1": _metric(hits, n)})
    twin = ModelResult("b", {"policy_top1": _metric(hits, n)})
    better = ModelResult("c", {"policy_top1": _metric([h + 2 for h in hits], n)})
    pairs = compare([same, twin, better], metrics=["policy_top1"], reps=500)
    by_pair = {(p.a, p.b): p for p in pairs}
    assert not by_pair["a", "b"].significant and by_pair["a", "b"].better is None
    assert by_pair["a", "c"].better == "c" and by_pair["b", "c"].better == "c"
    assert by_pair["a", "c"].difference.value == pytest.approx(-0.2)
    assert all(p.p_holm >= p.p_value for p in pairs)
    matrix = difference_matrix(pairs, ["a", "b", "c"], "policy_top1")
    assert matrix[2][1].startswith("20.0") and matrix[2][1].endswith("*")
    assert matrix[0][3].startswith("-20.0")


def test_lower_value_mse_is_better():
    n = [10] * 40
    low = ModelResult("low", {"value_mse": _metric([3 + (i % 3) for i in range(40)], n)})
    high = ModelResult("high", {"value_mse": _metric([6 + (i % 3) for i in range(40)], n)})
    (pair,) = compare([low, high], metrics=["value_mse"], reps=500)
    assert pair.better == "low"


def test_compare_command_prints_estimates_and_pairs(two_games, tmp_path, capsys):  # noqa: F811
    from harness.nets import build_model, save_model

    model = save_model(build_model("a0.tiny", 9, 21, seed=3), tmp_path / "m.keras")
    parser = argparse.ArgumentParser()
    compare_command.add_arguments(parser)
    args = parser.parse_args([str(model), f"{tmp_path}", "--data", str(two_games),
                              "--split", "train", "--reps", "200", "-o", str(tmp_path / "out"),
                              "--quiet"])
    (tmp_path / "best.keras").write_bytes(model.read_bytes())  # the folder form: best.keras
    assert compare_command.run(args) == 0
    out = capsys.readouterr().out
    assert BASELINE in out and "top-1 % [95% CI]" in out
    text = (tmp_path / "out" / "pairs.csv").read_text()
    assert "m," in text and tmp_path.name in text
    # the same network under two names: never a significant difference
    assert "m better" not in text and f"{tmp_path.name} better" not in text


def test_estimate_with_no_interval_prints_the_value_only():
    from harness.stats import fmt_with_interval

    assert fmt_with_interval(Estimate(0.5, float("nan"), float("nan")), percent=True) == "50.0"


def test_max_samples_compares_every_model_and_the_baseline_on_the_same_first_positions(
        two_games, tmp_path):  # noqa: F811
    from harness.nets import build_model, save_model

    model = save_model(build_model("a0.tiny", 9, 21, seed=3), tmp_path / "m.keras")
    whole, _ = compare_checkpoints([("m", model)], two_games, "train",
                                                   batch_size=4, reps=50)
    first, _ = compare_checkpoints([("m", model)], two_games, "train",
                                                   batch_size=4, reps=50, max_samples=3)
    assert [r.grouped["policy_top1"].counts.sum() for r in whole] == [9, 9]
    # a whole first batch of 4 positions, for the baseline as for the model
    assert [r.grouped["policy_top1"].counts.sum() for r in first] == [4, 4]


def test_recalibrated_evaluation_uses_the_training_split_statistics(two_games, tmp_path):  # noqa: F811
    from harness.nets import build_model, save_model
    from harness.train.checkpoint_eval import evaluate_checkpoint

    # A fresh net's moving statistics (mean 0, variance 1) are not its inputs'.
    model = save_model(build_model("a0.tiny", 9, 21, seed=3), tmp_path / "m.keras")
    as_saved = evaluate_checkpoint(model, two_games, "train", batch_size=4)
    again = evaluate_checkpoint(model, two_games, "train", batch_size=4)
    recalibrated = evaluate_checkpoint(model, two_games, "train", batch_size=4,
                                       recalibrate_bn=2)
    assert as_saved["loss"] == again["loss"] and as_saved["recalibrate_bn"] == 0
    assert recalibrated["recalibrate_bn"] == 2
    assert recalibrated["loss"] != pytest.approx(as_saved["loss"], rel=1e-4)


def test_slices_of_two_runs_are_named_by_their_run_and_clashes_fail_before_evaluating(
        tmp_path):
    from harness.config_io import ConfigError

    for run in ("run-a", "run-b"):
        (tmp_path / run).mkdir()
        (tmp_path / run / "config.json").write_text("{}")
    assert checkpoint_of(tmp_path / "run-a" / "epoch-001.keras")[0] == \
        "run-a/epoch-001"
    assert checkpoint_of(tmp_path / "loose.keras")[0] == "loose"
    # Neither file exists: the name clash is reported before any model is loaded.
    clash = [("epoch-001", tmp_path / "x.keras"), ("epoch-001", tmp_path / "y.keras")]
    with pytest.raises(ConfigError, match="same name"):
        compare_checkpoints(clash, tmp_path / "none.h5")
