"""Every long stage writes its live metrics (harness.metrics): tiny self-play
runs of both algorithms, a tournament and a training run write
``metrics.jsonl`` and TensorBoard events, a resumed run adds no step twice,
and the switches turn them off."""

from __future__ import annotations

import math

from harness.config_io import from_mapping
from harness.files import read_json
from harness.metrics import JSONL_NAME, event_files, read_event_scalars, read_jsonl
from harness.rl.config import RLConfig


def _rl_config(tmp_path, name: str, **changes) -> RLConfig:
    values = {
        "run": name, "runs_dir": str(tmp_path), "board_size": 5, "komi": 0.5,
        "encoder": "agz17", "model": "a0.tiny", "generations": 2, "seed": 3,
        "mcts": {"playouts": 4}, "evaluator": {"batch_size": 8},
        "selfplay": {"games": 2, "parallel": 2},
        "train": {"steps": 2, "batch_size": 8},
        "gating": {"enabled": True, "games": 2, "gate_playouts": 2, "parallel": 2},
        **changes,
    }
    return from_mapping(RLConfig, values, "test")


def _by_tag(scalars) -> dict[str, list[tuple[int, float]]]:
    out: dict[str, list[tuple[int, float]]] = {}
    for s in scalars:
        out.setdefault(s.tag, []).append((s.step, s.value))
    return out


def test_a_selfplay_run_writes_a_line_and_a_tensorboard_step_per_generation(tmp_path):
    from harness.rl.run import RLRun

    config = _rl_config(tmp_path, "az")
    RLRun(config, log=lambda _: None).run(generations=1)
    RLRun(config, log=lambda _: None).run(resume=True)  # a second session continues it
    run = tmp_path / "az"
    lines = read_jsonl(run / JSONL_NAME)
    assert [(r["step"], r["generation"]) for r in lines] == [(1, 1), (2, 2)]
    for g, line in enumerate(lines, start=1):  # the same figures as the stats file
        stats = read_json(run / "stats" / f"gen-{g:04d}.json")
        for key in ("games", "games_total", "games_per_hour", "evals_per_s", "loss",
                    "policy_loss", "gate_games", "promoted", "best", "train_flops"):
            assert line[key] == stats[key], key
    assert lines[1]["gate_games"] == 2 and 0.0 <= lines[1]["gate_win_rate"] <= 1.0
    assert len(event_files(run)) == 2  # one file per session
    tags = _by_tag(read_event_scalars(run))
    assert [step for step, _ in tags["selfplay/games_per_hour"]] == [1, 2]
    assert all(math.isclose(v, line["loss"], rel_tol=1e-6)  # TensorBoard's float32
               for (_, v), line in zip(tags["train/loss"], lines, strict=True))
    assert [step for step, _ in tags["gate/gate_win_rate"]] == [1, 2]
    assert [step for step, _ in tags["gate/promoted"]] == [1, 2]
    assert "compute/train_flops" in tags and "best" not in str(list(tags))

    # A generation recorded again (a kill between its figures and the commit) adds nothing.
    rl = RLRun(config, log=lambda _: None)
    rl._record(2, read_json(run / "stats" / "gen-0002.json"))
    assert [r["step"] for r in read_jsonl(run / JSONL_NAME)] == [1, 2]
    assert [step for step, _ in _by_tag(read_event_scalars(run))["selfplay/games"]] == [1, 2]


def test_the_switches_turn_a_selfplay_runs_metrics_off(tmp_path):
    from harness.rl.run import RLRun

    config = _rl_config(tmp_path, "quiet", generations=1, tensorboard=False,
                        metrics_jsonl=False, gating={"enabled": False})
    RLRun(config, log=lambda _: None).run()
    run = tmp_path / "quiet"
    assert (run / "stats.csv").exists()
    assert not (run / JSONL_NAME).exists() and event_files(run) == []


def test_a_policy_gradient_run_writes_its_steps(tmp_path):
    from harness.rl.runs import make_run

    config = from_mapping(RLConfig, {
        "run": "pg", "runs_dir": str(tmp_path), "board_size": 5, "komi": 0.5,
        "encoder": "agz17", "model": "a0.tiny", "algorithm": "policy-gradient",
        "generations": 2, "seed": 5, "train": {"lr": 0.01}, "metrics_jsonl": False,
        "pg": {"games": 4, "pool_every": 1, "opening_moves": 1}}, "test")
    make_run(config, log=lambda _: None).run()
    run = tmp_path / "pg"
    assert not (run / JSONL_NAME).exists()  # switched off; TensorBoard stays on
    tags = _by_tag(read_event_scalars(run))
    assert [step for step, _ in tags["pg/win_rate"]] == [1, 2]
    for (step, value) in tags["pg/entropy"]:
        assert math.isclose(value, read_json(run / "stats" / f"gen-{step:04d}.json")["entropy"],
                            rel_tol=1e-6)
    assert [step for step, _ in tags["selfplay/games"]] == [1, 2]


def test_a_tournament_writes_the_standings_after_every_game(tmp_path):
    import pandas as pd

    from harness.arena.games import RESULTS_FILE, read_results
    from harness.arena.tournament import TournamentConfig, run_tournament

    out = tmp_path / "t"
    config = TournamentConfig(players=["a=random", "b=random", "uct=uct:20"], out=str(out),
                              board_size=5, komi=0.5, games_per_pair=2, seed=4, anchor="a")
    run_tournament(config, progress=False)
    lines = read_jsonl(out / JSONL_NAME)
    assert [r["step"] for r in lines] == [1, 2, 3, 4, 5, 6]
    assert [r["games/played"] for r in lines] == [1, 2, 3, 4, 5, 6]
    last = lines[-1]
    ranking = pd.read_csv(out / "ranking.csv").set_index("player")
    for name in ("a", "b", "uct"):  # the last step's Elo is the ranking's
        assert math.isclose(last[f"elo/{name}"], ranking.loc[name, "elo"], abs_tol=1e-6)
    assert last["elo/a"] == 0.0  # the anchor
    played = read_results(out)  # in the order the games ended
    for line, row in zip(lines, played, strict=True):  # the pair score after each game
        first, second = sorted((row.black, row.white), key=["a", "b", "uct"].index)
        pair = [r for r in played[:line["step"]] if {r.black, r.white} == {first, second}]
        points = sum(r.score if r.black == first else 1 - r.score for r in pair)
        assert line[f"score/{first} vs {second}"] == points / len(pair)
    tags = _by_tag(read_event_scalars(out))
    assert [step for step, _ in tags["games/played"]] == [1, 2, 3, 4, 5, 6]
    assert sorted(t for t in tags if t.startswith("elo/")) == ["elo/a", "elo/b", "elo/uct"]

    # A killed tournament that lost its last two results plays them again: no step twice.
    results = (out / RESULTS_FILE).read_text().splitlines(keepends=True)
    (out / RESULTS_FILE).write_text("".join(results[:4]))
    run_tournament(config, progress=False)
    assert [r["step"] for r in read_jsonl(out / JSONL_NAME)] == [1, 2, 3, 4, 5, 6]
    assert [s for s, _ in _by_tag(read_event_scalars(out))["games/played"]] == [1, 2, 3, 4, 5, 6]


def test_a_tournament_with_both_switches_off_writes_no_metrics(tmp_path):
    from harness.arena.tournament import TournamentConfig, run_tournament

    out = tmp_path / "t"
    run_tournament(TournamentConfig(players=["random", "b=random"], out=str(out), board_size=5,
                                    games_per_pair=2, tensorboard=False, metrics_jsonl=False),
                   progress=False)
    assert (out / "ranking.csv").exists()
    assert not (out / JSONL_NAME).exists() and event_files(out) == []
