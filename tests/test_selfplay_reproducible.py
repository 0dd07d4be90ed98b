"""A self-play run's games are a function of its seed: two runs of one config,
with the evaluator drawing a random board symmetry for every evaluation,
commit the same games move for move."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from harness.config_io import from_mapping
from harness.rl.config import RLConfig
from harness.rl.run import RLRun


def run(runs_dir: Path, name: str) -> Path:
    config = from_mapping(RLConfig, {
        "run": name, "runs_dir": str(runs_dir),
        "board_size": 5, "komi": 2.0, "encoder": "agz17", "model": "a0.tiny",
        "generations": 1, "seed": 3,
        "mcts": {"playouts": 6, "add_noise": True, "temperature_moves": 6},
        # No seed of its own: the symmetries must come from the run's seed.
        "evaluator": {"batch_size": 8, "symmetry": "random"},
        "selfplay": {"games": 4, "parallel": 2},
        "train": {"steps": 1, "batch_size": 8},
        "window": {"initial": 8},
    }, "test")
    RLRun(config, log=lambda _: None).run()
    return runs_dir / name


def moves(path: Path) -> dict[str, np.ndarray]:
    with h5py.File(path / "buffer" / "gen-0001.h5", "r") as f:
        return {name: f[name][...] for name in ("positions/move", "positions/policy")}


def test_two_runs_with_one_seed_and_random_symmetries_play_the_same_games(tmp_path):
    a, b = moves(run(tmp_path, "first")), moves(run(tmp_path, "second"))
    assert len(a["positions/move"]) > 0
    for name in a:
        assert np.array_equal(a[name], b[name]), name
