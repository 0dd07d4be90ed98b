"""RL self-play on Ray actors: a generation played by two workers commits the
same games, in the same order, as the local backend with the same units."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tiny_rl import first_chunk, one_generation

from harness.config_io import from_mapping
from harness.files import read_json
from harness.rl.config import RLConfig
from harness.rl.remote import SelfPlayActors

pytestmark = pytest.mark.usefixtures("ray_cluster")

GAMES = 6
NAMES = ("positions/move", "positions/policy", "positions/target", "games/first",
         "games/positions", "games/winner")


def run(runs_dir: Path, backend: str) -> Path:
    # Units of two games: three units spread over the two workers.
    return one_generation(runs_dir, backend, backend=backend,
                          selfplay={"games": GAMES, "parallel": 2, "unit_games": 2})


def chunk(path: Path) -> dict[str, np.ndarray]:
    return first_chunk(path, NAMES)


def test_a_ray_generation_commits_the_same_games_as_the_local_backend(tmp_path):
    local, ray = run(tmp_path, "local"), run(tmp_path, "ray")

    a, b = chunk(local), chunk(ray)
    assert len(b["games/first"]) == len(a["games/first"]) == GAMES
    assert len(b["positions/move"]) == len(a["positions/move"])
    for name in a:  # the search is deterministic: move for move, visit for visit
        assert np.array_equal(a[name], b[name]), name
    sgfs = sorted(p.name for p in (ray / "games" / "gen-0001").glob("*.sgf"))
    assert sgfs == [f"game-{n:06d}.sgf" for n in range(GAMES)]
    for name in sgfs:
        assert (ray / "games" / "gen-0001" / name).read_text() == \
            (local / "games" / "gen-0001" / name).read_text()
    stats = read_json(ray / "stats" / "gen-0001.json")
    assert stats["games"] == GAMES and stats["evals_per_s"] > 0


@pytest.mark.slow
def test_the_distributed_bench_prints_games_per_hour_for_both_backends(capsys):
    from harness.cli import main

    code = main(["bench", "distributed", "--board-size", "5", "--games", "4", "--playouts", "4",
                 "--parallel", "2", "--workers", "2"])
    table = capsys.readouterr().out
    assert code == 0
    rows = [line for line in table.splitlines() if line.startswith("| local") or
            line.startswith("| ray")]
    assert len(rows) == 3 and "games/hour vs local" in table


def test_a_generation_cut_short_locally_is_finished_on_ray_as_locally(tmp_path):
    """The resume contract across backends: the committed games stay, the rest
    is numbered on from them, and Ray plays the same rest as the local backend."""
    import dataclasses

    from harness.features import get_encoder
    from harness.nets import build_model, save_model
    from harness.rl.buffer import ReplayBuffer
    from harness.rl.selfplay import play_generation
    from harness.search import NetworkEvaluator

    full = from_mapping(RLConfig, {
        "run": "r", "board_size": 5, "komi": 2.0, "model": "a0.tiny", "seed": 5,
        "mcts": {"playouts": 4, "add_noise": True, "temperature_moves": 4},
        "evaluator": {"batch_size": 4},
        "selfplay": {"games": 5, "parallel": 2, "unit_games": 2},
    }, "test")
    cut = dataclasses.replace(full, selfplay=dataclasses.replace(full.selfplay, games=3))
    model = build_model("a0.tiny", 5, get_encoder("agz17").planes, seed=1)
    checkpoint = save_model(model, tmp_path / "net.keras")
    evaluator = NetworkEvaluator(model, "agz17", 5, full.evaluator)

    buffers = {}
    for backend in ("local", "ray"):
        run_dir = tmp_path / backend
        buffer = ReplayBuffer(run_dir / "buffer", 5)
        play_generation(evaluator, cut, 1, buffer, run_dir, log=lambda _: None)  # "killed"
        first = [p.read_bytes() for p in buffer.committed_parts(1)]
        resumed = dataclasses.replace(full, backend=backend)
        actors = SelfPlayActors(resumed) if backend == "ray" else None
        try:
            play_generation(evaluator, resumed, 1, buffer, run_dir, log=lambda _: None,
                            checkpoint=checkpoint, actors=actors)
        finally:
            if actors is not None:
                actors.close()
        parts = buffer.committed_parts(1)
        assert [p.name for p in parts] == [f"game-{n:06d}.h5" for n in range(5)]
        assert [p.read_bytes() for p in parts[:3]] == first  # kept as they were
        buffer.merge(1)
        buffers[backend] = chunk(run_dir)
        assert read_json(run_dir / "stats" / "gen-0001.selfplay.json")["games"] == 5
    for name, values in buffers["local"].items():
        assert np.array_equal(values, buffers["ray"][name]), name
