"""The whole study on tiny settings: generate -> ingest -> train -> play -> tables -> report.

This is the default-run end-to-end test: every stage for real (UCT self-play
data, HDF5 ingest, Keras training, a round robin with the trained networks,
Bradley-Terry tables, the HTML report), only small.
"""

import json

import pandas as pd

from harness.suite.config import load_suite_config
from harness.suite.runner import run_suite

TINY = """
name = "tiny"
board_size = 7
komi = 7.0
results_dir = "{root}/results"
models_dir = "{root}/models"
datasets_dir = "{root}/datasets"

[data]
player = "uct:20"
games = 10
opening_moves = 2
encoder = "agz17"
val_games = 2
min_moves = 5
workers = 1

[train]
models = ["a0.tiny", "mobile.tiny"]
epochs = 1
epoch_samples = 256
batch_size = 32

[tournament]
baselines = ["random"]
games_per_pair = 2
opening_moves = 1
parallel = 1

[bench]
batch_sizes = [1, 8]
seconds = 0.05
diagrams = 1
"""


def test_tiny_study_runs_end_to_end_and_reruns_as_a_no_op(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY.format(root=tmp_path))
    config = load_suite_config(path)
    report = run_suite(config, progress=False, log=lambda _: None)

    out = tmp_path / "results" / "tiny"
    assert report == out / "report.html"
    dataset = json.loads((tmp_path / "datasets" / "tiny.report.json").read_text())
    assert dataset["games"] >= 8
    for model in ("a0.tiny", "mobile.tiny"):
        metrics = pd.read_csv(tmp_path / "models" / f"tiny-{model}" / "metrics.csv")
        assert len(metrics) == 1 and metrics["val_policy_top1"].notna().all()
    ranking = pd.read_csv(out / "tournament" / "ranking.csv")
    assert sorted(ranking["player"]) == ["a0.tiny", "mobile.tiny", "random"]
    assert ranking["games"].sum() == 2 * 3 * 2  # 3 pairs x 2 games, counted for both players
    html = report.read_text()
    for section in (
        "Dataset",
        "Model zoo",
        "Supervised training",
        "Tournament",
        "Policies on sample positions",
        "Environment",
    ):
        assert f"<h2>{section}</h2>" in html
    assert html.count("data:image/png;base64,") >= 4

    # A second run finds every step complete and changes no result.
    before = (out / "tournament" / "results.jsonl").read_text()
    run_suite(config, progress=False, log=lambda _: None)
    assert (out / "tournament" / "results.jsonl").read_text() == before
