"""The smallest real policy-gradient run on 9x9: ``harness rl`` with
``algorithm = "policy-gradient"`` on a zoo tiny preset, then ``harness
rl-report`` rating its steps, as a user would run them."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import harness
from harness.files import read_json

# The checkout under test, whichever one an installed package points at.
ROOT = str(Path(harness.__file__).resolve().parents[1])

CONFIG = """
run = "pg9"
board_size = 9
algorithm = "policy-gradient"
model = "mobile.tiny"
generations = 2
seed = 2
[pg]
games = 4
pool_every = 1
kl_start = 0.1
opening_moves = 2
entropy_floor = 5.0
"""


def _harness(args: list[str], cwd) -> str:
    path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "",
           "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_policy_gradient_run_trains_and_is_rated(tmp_path):
    (tmp_path / "pg.toml").write_text(CONFIG)
    out = _harness(["rl", "--config", "pg.toml", "--runs-dir", "runs"], tmp_path)
    assert "step 2: won" in out and "done: 2 generations, 8 games" in out
    run = tmp_path / "runs" / "pg9"
    rows = list(csv.DictReader((run / "stats.csv").open()))
    assert [r["generation"] for r in rows] == ["1", "2"]
    assert float(rows[1]["kl_start"]) > 0  # the learner moved away from the start
    assert float(rows[0]["entropy"]) < 5.0 and float(rows[1]["entropy_weight"]) > 0
    assert int(rows[1]["evaluations_total"]) > int(rows[0]["evaluations_total"]) > 0
    assert float(rows[1]["train_flops"]) > 0 and float(rows[1]["selfplay_flops"]) > 0
    state = read_json(run / "state.json")
    assert state["pool"] == [f"models/gen-{g:04d}.keras" for g in range(3)]
    games = np.load(run / "games" / "gen-0002.npz")
    assert games["moves"].shape[0] == 4 and (games["length"] > 2).all()
    _harness(["rl-report", str(run), "--games-per-pair", "2", "--playouts", "4",
              "--parallel", "1", "--no-progress"], tmp_path)
    rated = list(csv.DictReader((run / "report" / "elo.csv").open()))
    assert [r["player"] for r in rated] == ["gen0", "gen1", "gen2"]
    # the run's own curves: step 1 drew generation 0, the only past self then
    against = list(csv.DictReader((run / "report" / "pg.csv").open()))
    assert against[0]["first_step"] == "1" and int(against[0]["games"]) >= 4
    assert (run / "report" / "pg.png").stat().st_size > 0
    # AlphaGo's value network from the run: its tables and calibration plot
    out = _harness(["rl-value", str(run), "--sample-games", "24", "--games-in-flight", "12",
                    "--value-epochs", "1", "--held-out-share", "0.25"], tmp_path)
    assert "  12/24 games" in out and "  24/24 games" in out
    mse = list(csv.DictReader((run / "value" / "mse.csv").open()))
    assert mse[0]["network"] == "value network (held out)" and int(mse[0]["positions"]) > 0
    bins = list(csv.DictReader((run / "value" / "calibration.csv").open()))
    assert {b["network"] for b in bins} == {"value network", "gen-0000.keras value head",
                                            "gen-0002.keras value head"}
    assert sum(int(b["positions"]) for b in bins) == 3 * int(mse[0]["positions"])
    assert (run / "value" / "calibration.png").stat().st_size > 0
    assert (run / "value" / "value.keras").is_file()
    # its saved waves were played with seed 0: another seed is refused, not mixed in
    env = {**os.environ, "PYTHONPATH": ROOT, "CUDA_VISIBLE_DEVICES": ""}
    refused = subprocess.run([sys.executable, "-m", "harness", "rl-value", str(run), "--seed",
                              "1", "--sample-games", "24"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "other settings" in refused.stderr
