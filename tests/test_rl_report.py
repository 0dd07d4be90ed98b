"""``harness rl-report`` pieces: which generations play, under which names, and the figure."""

from __future__ import annotations

import pytest

from harness.commands.rl_report import parse_generations, parse_hours
from harness.files import atomic_json
from harness.rl.strength import (
    generation_points,
    players_for,
    plot_elo_progress,
    rl_report,
    select,
    select_at_hours,
)


@pytest.fixture
def run_dir(tmp_path):
    # Five generations; gating kept gen 2's network through generation 3.
    best = ["gen-0001", "gen-0002", "gen-0002", "gen-0004", "gen-0005"]
    for g, name in enumerate(best, start=1):
        atomic_json(tmp_path / "stats" / f"gen-{g:04d}.json",
                    {"best": f"models/{name}.keras", "games_total": 10 * g,
                     "wall_time_s": 60.0 * g})
    return tmp_path


def test_points_follow_the_finished_generations(run_dir):
    points = generation_points(run_dir)
    assert [p.generation for p in points] == [0, 1, 2, 3, 4, 5]
    assert points[0].checkpoint == "models/gen-0000.keras" and points[0].games == 0
    assert points[3].checkpoint == "models/gen-0002.keras"
    assert points[5].games == 50 and points[5].wall_time_s == 300.0


def test_points_are_read_from_the_json_lines_and_old_runs_stats(run_dir):
    from harness.metrics import MetricsLog
    from harness.rl.strength import held_out_rows

    # Generations 2 and 3 also have JSON lines (a run that resumed under this
    # version), saying otherwise than the stats files: the lines win.
    log = MetricsLog(run_dir, tensorboard=False)
    for g in (2, 3):
        log.write(g, {"generation": g, "best": f"models/line-{g}.keras", "games_total": 7 * g,
                      "wall_time_s": 1.0 * g, "heldout_top1": 0.25 * g,
                      "gate_win_rate": float("nan")})
    points = generation_points(run_dir)
    assert [p.generation for p in points] == [0, 1, 2, 3, 4, 5]
    assert [p.checkpoint for p in points[1:4]] == [
        "models/gen-0001.keras", "models/line-2.keras", "models/line-3.keras"]
    assert [p.games for p in points] == [0, 10, 14, 21, 40, 50]
    rows = held_out_rows(run_dir)
    assert [(r["generation"], r["heldout_top1"]) for r in rows] == [(2, 0.5), (3, 0.75)]
    assert all(r["gate_win_rate"] != r["gate_win_rate"] for r in rows)  # null is NaN again


def test_select_spreads_evenly_or_takes_the_asked_generations(run_dir):
    points = generation_points(run_dir)
    assert [p.generation for p in select(points, None, 3)] == [0, 2, 5]
    assert [p.generation for p in select(points, None, 10)] == [0, 1, 2, 3, 4, 5]
    assert [p.generation for p in select(points, [4, 1], 3)] == [1, 4]
    assert [p.generation for p in select(points, parse_generations("0, last"), 3)] == [0, 5]
    with pytest.raises(ValueError, match="'x' is neither"):
        parse_generations("0,x")
    with pytest.raises(ValueError, match="generation 9"):
        select(points, [9], 3)


def test_at_hours_takes_each_budgets_last_finished_generation(run_dir):
    # Generation g finished at g minutes: 0.05 h = 3 min, 0.07 h = 4.2 min.
    points = generation_points(run_dir)
    chosen = select_at_hours(points, parse_hours("0.07, 0.05, 1"))
    assert [p.generation for p in chosen] == [0, 3, 4, 5]
    assert [p.generation for p in select_at_hours(points, [0.0])] == [0]
    with pytest.raises(ValueError, match="not a list of hours"):
        parse_hours("1,soon")


def test_runs_of_different_games_are_not_rated_on_one_scale(tmp_path):
    from harness.config_io import save_config
    from harness.rl.config import RLConfig

    save_config(RLConfig(run="a", board_size=9), tmp_path / "a" / "config.json")
    save_config(RLConfig(run="b", board_size=7), tmp_path / "b" / "config.json")
    with pytest.raises(ValueError, match="must play the same game"):
        rl_report([tmp_path / "a", tmp_path / "b"], progress=False)
    with pytest.raises(ValueError, match="distinct directory names"):
        rl_report([tmp_path / "a", tmp_path / "x" / "a"], progress=False)


def test_generations_with_the_same_network_share_a_player(run_dir):
    points = generation_points(run_dir)
    entries = players_for(points, run_dir, 16, "agz17")
    assert len(entries) == 5  # gen 3 kept gen 2's network
    assert points[3].player == points[2].player == "gen2"
    assert entries[0].name == "gen0" and entries[0].spec.kind == "mcts"
    assert entries[0].spec.label.endswith("@16,randomize=1,encoder=agz17")


def test_no_playouts_rate_the_raw_policies_sampled(run_dir):
    entries = players_for(generation_points(run_dir), run_dir, 0, "agz17")
    assert {e.spec.kind for e in entries} == {"policy"}
    assert entries[0].spec.label.endswith("gen-0000.keras@1,encoder=agz17")


def test_the_figure_is_written(run_dir):
    points = generation_points(run_dir)
    players_for(points, run_dir, 16, "agz17")
    elo = {p.player: (10.0 * p.generation, 10.0 * p.generation - 50, 10.0 * p.generation + 50)
           for p in points}
    elo["random"] = (-300.0, -400.0, -200.0)
    path = plot_elo_progress(points, elo, ["random"], run_dir / "report" / "elo.png")
    assert path.exists() and path.stat().st_size > 1000


def test_two_runs_get_their_own_names_and_lines(run_dir):
    points = generation_points(run_dir)
    entries = players_for(points, run_dir, 16, "agz17", prefix="puct.")
    assert entries[0].name == "puct.gen0" and entries[0].spec.kind == "mcts"
    other = generation_points(run_dir)
    for p in other:
        p.run = "gumbel"
    players_for(other, run_dir, 16, "agz17", prefix="gumbel.")
    both = points + other
    elo = {p.player: (float(p.generation), p.generation - 1.0, p.generation + 1.0) for p in both}
    path = plot_elo_progress(both, elo, [], run_dir / "report" / "both.png", anchor="puct.gen0")
    assert path.exists() and path.stat().st_size > 1000


def test_two_real_runs_are_rated_in_one_tournament_at_the_same_hours(tmp_path):
    import json

    from harness.config_io import from_mapping
    from harness.rl.config import RLConfig
    from harness.rl.run import RLRun

    for name, seed in (("puct", 1), ("other", 2)):
        values = {
            "run": name, "runs_dir": str(tmp_path), "board_size": 5, "komi": 2.0,
            "model": "a0.tiny", "generations": 2, "seed": seed,
            "mcts": {"playouts": 3}, "evaluator": {"batch_size": 4},
            "selfplay": {"games": 2, "parallel": 2, "max_moves": 12},
            "train": {"steps": 1, "batch_size": 4}, "window": {"initial": 2},
        }
        RLRun(from_mapping(RLConfig, values, "test"), log=lambda _: None).run()
    out, table = rl_report([tmp_path / "puct", tmp_path / "other"], hours=[1.0],
                           games_per_pair=2, opening_moves=1, playouts=3, progress=False)
    assert out == tmp_path / "report-puct-vs-other"
    players = {row[1]: row for row in table}
    assert set(players) == {"puct.gen0", "puct.gen2", "other.gen0", "other.gen2"}
    assert players["puct.gen0"][6] == 0.0  # the anchor
    assert all(row[0] == row[1].split(".")[0] for row in table)
    text = (out / "tournament" / "results.jsonl").read_text()
    games = [json.loads(line) for line in text.splitlines()]
    assert len(games) == 6 * 2  # every pair of the four players, both colours
    assert any({g["black"].split(".")[0], g["white"].split(".")[0]} == {"puct", "other"}
               for g in games)
    assert (out / "elo.png").exists() and (out / "elo.csv").exists()
