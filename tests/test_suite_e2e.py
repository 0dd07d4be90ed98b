"""The whole study on tiny settings: generate -> ingest -> train -> play -> tables -> report.

This is the default-run end-to-end test: every stage for real (UCT self-play
data, HDF5 ingest, Keras training, a round robin with the trained networks,
Bradley-Terry tables, the HTML report), only small.
"""

import json

import pandas as pd
from tiny_study import tiny_suite

from harness.suite.config import load_suite_config
from harness.suite.runner import run_suite

TRAIN_AND_RL = """
[train]
models = ["a0.tiny", "mobile.tiny"]
epochs = 2
budget = 256
budget_unit = "samples"
seeds = [0, 1]
batch_size = 32

[frontier]
enabled = true
min_flops = 1e9
max_flops = 1e10
points_per_decade = 1
savepoints = "cooldown"

[rl]
enabled = true
config = "{root}/rl-pg.toml"
warm_start = ["a0.tiny"]
scratch = "{root}/rl.toml"
max_hours = 0.0001
"""


RL = """
generations = 3
[mcts]
playouts = 4
[selfplay]
games = 2
parallel = 2
max_moves = 30
[train]
steps = 2
batch_size = 16
[window]
initial = 2
"""


# The warm starts continue by AlphaGo's policy gradient, the scratch run is AlphaZero's.
RL_PG = """
algorithm = "policy-gradient"
generations = 2
[pg]
games = 4
max_moves = 30
"""


def test_tiny_study_runs_end_to_end_and_reruns_as_a_no_op(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(tiny_suite(tmp_path, "tiny", TRAIN_AND_RL.format(root=tmp_path)))
    (tmp_path / "rl.toml").write_text(RL)
    (tmp_path / "rl-pg.toml").write_text(RL_PG)
    config = load_suite_config(path)
    report = run_suite(config, progress=False, log=lambda _: None)

    out = tmp_path / "results" / "tiny"
    assert report == out / "report.html"
    dataset = json.loads((tmp_path / "datasets" / "tiny.report.json").read_text())
    assert dataset["games"] >= 8
    for model in ("a0.tiny", "mobile.tiny"):
        for seed in (0, 1):  # equal budgets: 256 samples in two slices, for every seed
            metrics = pd.read_csv(tmp_path / "models" / f"tiny-{model}-seed{seed}" /
                                  "metrics.csv")
            assert len(metrics) == 2 and metrics["val_policy_top1"].notna().all()
            assert metrics["samples_seen"].tolist() == [128, 256]
            assert (metrics["val_policy_top1_low"] <= metrics["val_policy_top1"]).all()
    comparison = json.loads((out / "compare" / "comparison.json").read_text())
    assert [m["name"] for m in comparison["models"]] == [
        "baseline: frequent move", "a0.tiny", "mobile.tiny"]
    assert len(comparison["pairs"]) == 3 * 3  # 3 pairs x top-1, top-5, value MSE
    assert [row["seeds"] for row in comparison["seeds"]] == [2, 2]
    # The frontier: both models at both savepoints (1e9 and 1e10 FLOPs), in the report.
    points = pd.read_csv(out / "frontier" / "points.csv")
    assert sorted(set(points["model"])) == ["a0.tiny", "mobile.tiny"]
    assert sorted(set(points["savepoint_flops"])) == [1e9, 1e10]
    assert (out / "frontier" / "frontier-policy_top1.png").exists()
    assert (tmp_path / "models" / "tiny-rl-a0.tiny" / "models" / "gen-0001.keras").exists()
    warm = json.loads((tmp_path / "models" / "tiny-rl-a0.tiny" / "config.json").read_text())
    assert warm["algorithm"] == "policy-gradient"
    ranking = pd.read_csv(out / "tournament" / "ranking.csv")
    assert sorted(ranking["player"]) == ["a0.tiny", "a0.tiny+rl", "mobile.tiny", "random",
                                         "selfplay-gen0", "selfplay-last"]
    assert ranking["games"].sum() == 2 * 15 * 2  # 15 pairs x 2 games, counted for both players
    html = report.read_text()
    assert "<h2>Findings</h2>" in html and "most-frequent-move baseline" in html
    assert "Self-play" in html and "a0.tiny+rl" in html and "selfplay-last" in html
    for section in (
        "Dataset",
        "Model zoo",
        "Supervised training",
        "Compute frontier",
        "Tournament",
        "Policies on sample positions",
        "Environment",
    ):
        assert f"<h2>{section}</h2>" in html
    assert html.count("data:image/png;base64,") >= 4

    # A second run finds every step complete and changes no result; the step
    # times add up over both runs.
    before = (out / "tournament" / "results.jsonl").read_text()
    first_times = json.loads((out / "timings.json").read_text())
    assert list(first_times) == ["data", "train", "compare", "frontier", "bench", "rl",
                                 "tournament", "report"]
    run_suite(config, progress=False, log=lambda _: None)
    assert (out / "tournament" / "results.jsonl").read_text() == before
    times = json.loads((out / "timings.json").read_text())
    assert all(times[step] >= first_times[step] for step in first_times)
