"""One generation of a 5x5 self-play run with a tiny network: the smallest real
RL run, for tests of what a generation commits."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from harness.config_io import from_mapping
from harness.rl.config import RLConfig
from harness.rl.run import RLRun


def one_generation(runs_dir: Path, name: str, **tables) -> Path:
    """The run directory after one generation; ``tables`` replace whole config tables."""
    values = {
        "run": name, "runs_dir": str(runs_dir),
        "board_size": 5, "komi": 2.0, "encoder": "agz17", "model": "a0.tiny",
        "generations": 1, "seed": 3,
        "mcts": {"playouts": 6, "add_noise": True, "temperature_moves": 6},
        "evaluator": {"batch_size": 8},
        "selfplay": {"games": 4, "parallel": 2},
        "train": {"steps": 1, "batch_size": 8},
        "window": {"initial": 8},
    }
    values.update(tables)
    RLRun(from_mapping(RLConfig, values, "test"), log=lambda _: None).run()
    return runs_dir / name


def first_chunk(run_dir: Path, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Datasets of generation 1's replay-buffer chunk."""
    with h5py.File(run_dir / "buffer" / "gen-0001.h5", "r") as f:
        return {name: f[name][...] for name in names}
