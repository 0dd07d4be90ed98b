"""``harness frontier`` with kind = "selfplay", end to end on 5x5: one tiny
network's self-play run to the largest savepoint, its savepoints' generations
and its test-time players in one pooled rating with `random` at 0 Elo, the
report; then run again (no generation and no game), and a larger games cap
(only the missing games)."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("keras")

from harness.frontier.config import load_frontier_config
from harness.frontier.selfplay_runs import generations
from harness.frontier.study import run_frontier

STUDY = """[frontier]
kind = "selfplay"
models = ["a0.tiny"]
min_flops = 1e8
max_flops = 4e8
points_per_decade = 2
seed = 0

[frontier.rl]
board_size = 5
komi = 2.0
[frontier.rl.mcts]
playouts = 6
add_noise = true
temperature_moves = 6
[frontier.rl.evaluator]
batch_size = 8
[frontier.rl.selfplay]
games = 4
parallel = 4
[frontier.rl.train]
steps = 2
batch_size = 8
[frontier.rl.window]
initial = 8

[frontier.rating]
anchors = ["random"]
anchor_elo = 0.0
eval_playouts = 2
test_playouts = [1, 2]
target_halfwidth = 50.0
round_pair_games = 2
max_rating_games = 8
"""


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("selfplay-frontier")
    (folder / "study.toml").write_text(STUDY)
    config = load_frontier_config(folder / "study.toml")
    out = folder / "out"
    lines: list[str] = []
    result = run_frontier(config, out, progress=False, log=lines.append)
    return config, out, result, lines


def test_the_pooled_rating_is_a_live_metrics_step_between_rounds(study):
    from harness.metrics import JSONL_NAME, read_event_scalars, read_jsonl

    _, out, _, _ = study
    lines = [line for line in read_jsonl(out / JSONL_NAME) if "rating/games" in line]
    steps = [line["step"] for line in lines]
    assert steps == sorted(set(steps)) and steps[0] == 0  # the first rating: no games yet
    last = lines[-1]
    assert last["rating/pairs"] == 0  # play stopped
    ratings = {r["player"]: r for r in read_csv(out / "ratings.csv")}
    for player, row in ratings.items():  # the last step is the rating the study reports
        assert last[f"elo/{player.replace('/', '|')}"] == pytest.approx(float(row["elo"]))
    assert last["elo/random"] == 0.0
    assert any(s.tag == "rating/games" for s in read_event_scalars(out))
    assert (out / "runs" / "a0.tiny" / JSONL_NAME).exists()  # the run's own generations


def test_each_savepoint_is_the_first_generation_at_or_past_its_compute(study):
    _, out, _, _ = study
    run = generations(out / "runs" / "a0.tiny")
    assert run[-1].flops >= 4e8 > run[-2].flops  # the run stopped at the largest savepoint
    rows = read_csv(out / "points.csv")
    # three log-spaced savepoints, both ends included
    assert [float(r["savepoint_flops"]) for r in rows] == pytest.approx([1e8, 2e8, 4e8])
    for row in rows:
        first = next(g for g in run if g.flops >= float(row["savepoint_flops"]))
        assert int(row["generation"]) == first.generation
        assert int(row["flops"]) == first.flops  # the checkpoint's own record
        assert row["player"] == f"a0.tiny-g{first.generation:04d}-p2"
        assert row["metric"] == "elo" and float(row["low"]) <= float(row["value"]) <= \
            float(row["high"])


def test_one_pooled_rating_with_random_fixed_at_zero_and_the_test_time_players(study):
    _, out, result, _ = study
    ratings = {r["player"]: r for r in read_csv(out / "ratings.csv")}
    assert [float(ratings["random"][k]) for k in ("elo", "low", "high")] == [0.0, 0.0, 0.0]
    last = generations(out / "runs" / "a0.tiny")[-1].generation
    test_time = read_csv(out / "test_time.csv")
    assert [(int(r["generation"]), int(r["playouts"])) for r in test_time] == \
        [(last, 1), (last, 2)]
    for r in test_time:
        assert r["player"] in ratings and ratings[r["player"]]["elo"] == r["elo"]
    results = (out / "rating" / "results.jsonl").read_text().splitlines()
    assert len(results) == 8  # the cap: intervals of 50 Elo need far more games
    for game in map(json.loads, results):
        assert game["black"] in ratings and game["white"] in ratings
    report = (out / "report.md").read_text()
    assert "`mcts:CHECKPOINT@2` (PUCT, 2 playouts per move" in report
    assert "`random` fixed at 0 Elo" in report and "## Test-time compute" in report
    assert "stopped because the games cap was reached" in report
    assert "exchange rate" in report or "training compute is worth" in report
    for name in ("frontier.csv", "fits.csv", "frontier-elo.png"):
        assert (out / name).exists(), name
    assert result.report == out / "report.md" and result.findings


def test_a_second_invocation_plays_nothing_and_a_larger_cap_only_the_missing_games(study):
    config, out, _, _ = study
    results = out / "rating" / "results.jsonl"
    before = results.read_text()
    checkpoints = sorted((out / "runs" / "a0.tiny" / "models").glob("gen-*.keras"))
    stamps = [p.stat().st_mtime_ns for p in checkpoints]
    lines: list[str] = []
    run_frontier(config, out, progress=False, log=lines.append)
    assert any("finished" in line and "skipping" in line for line in lines)
    assert not [line for line in lines if line.startswith(("generation ", "rating round"))]
    assert results.read_text() == before
    assert [p.stat().st_mtime_ns for p in checkpoints] == stamps
    wider = dataclasses.replace(config, rating=dataclasses.replace(config.rating,
                                                                   max_rating_games=12))
    run_frontier(wider, out, progress=False, log=lambda _: None)
    after = results.read_text()
    assert after.startswith(before) and len(after.splitlines()) == 12
