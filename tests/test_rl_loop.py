"""The generation loop end to end on tiny NoGo: multi-head targets, gating, curriculum."""

from __future__ import annotations

import math

import h5py
import numpy as np
import pytest

from harness.config_io import from_mapping
from harness.files import read_json
from harness.rl.config import RLConfig
from harness.rl.run import LARGE, MAIN, RLRun


def test_nogo_run_gates_switches_networks_and_trains_every_head(tmp_path):
    config = from_mapping(RLConfig, {
        "run": "nogo", "runs_dir": str(tmp_path), "board_size": 5, "rules": "nogo",
        "komi": 0.0, "encoder": "nogo", "model": "garb.tiny", "generations": 2, "seed": 1,
        "mcts": {"playouts": 4, "add_noise": True, "temperature_moves": 4},
        "evaluator": {"batch_size": 8},
        "selfplay": {"games": 3, "parallel": 3},
        "train": {"steps": 2, "batch_size": 8, "value_mix": 0.5},
        "gating": {"enabled": True, "games": 2, "gate_playouts": 2, "parallel": 2},
        "curriculum": {"enabled": True, "model": "garb.tiny", "criterion": "generation",
                       "switch_generation": 1},
    }, "test")
    lines: list[str] = []
    rl = RLRun(config, log=lines.append)
    state = rl.run()
    run = tmp_path / "nogo"

    assert state.generation == 3 and state.switched_at == 1 and state.active == LARGE
    # Generation 1 trained both networks; after the switch only the large one trains.
    assert (run / "models" / "gen-0001.keras").exists()
    assert not (run / "models" / "gen-0002.keras").exists()
    assert (run / "models" / "large-gen-0002.keras").exists()
    assert len(state.nets[MAIN].policy_losses) == 1
    assert len(state.nets[LARGE].policy_losses) == 2
    # garb has ownership and score heads: NoGo trains ownership, never score.
    logs = state.last_train[LARGE]
    assert math.isfinite(logs["ownership_loss"]) and logs["score_loss"] == 0.0
    gen2 = read_json(run / "stats" / "gen-0002.json")
    assert gen2["gate_games"] == 2 and 0.0 <= gen2["gate_win_rate"] <= 1.0
    assert gen2["active"] == LARGE
    assert any("stalled" in line for line in lines)
    with h5py.File(run / "buffer" / "gen-0002.h5", "r") as f:
        assert f["games/first"].shape == (3,)
        assert np.all(f["games/score_known"][...] == 0)
        assert np.all(f["games/ownership_known"][...] == 1)
        stones, policy = f["positions/stones"][...], f["positions/policy"][...]
        target, move = f["positions/target"][...], f["positions/move"][...]
    # Every policy target sits on empty points of its own position (NoGo never passes),
    # and the move played was one the search visited.
    rows = np.flatnonzero(target)
    assert rows.size > 0
    for r in rows:
        mass = policy[r].astype(np.float64)
        assert mass.sum() == pytest.approx(1.0, abs=2e-3)
        assert mass[-1] == 0 and np.all(mass[:-1][stones[r] != 0] == 0)
        assert mass[move[r]] > 0
    csv_rows = (run / "stats.csv").read_text().splitlines()
    assert len(csv_rows) == 3 and csv_rows[0].startswith("generation,")

    # Augmented batches keep the policy on the empty points of the encoded position.
    from harness.features import get_encoder
    from harness.rl.samples import Sampler, window_columns

    window = rl.buffer.window(100, "games", window_columns(("policy", "value", "ownership")))
    sampler = Sampler(window, get_encoder("nogo"), 5, heads=("policy", "value", "ownership"))
    x, targets, _ = sampler.batch(np.random.default_rng(0), 64)
    occupied = (x[..., 0] + x[..., 1]).reshape(64, -1) > 0  # own and opponent stones now
    assert np.all(targets["policy"][:, :25][occupied] == 0)
    assert np.all(np.abs(targets["ownership"]) <= 1)


def test_a_spent_time_budget_ends_the_run_on_a_finished_generation(tmp_path):
    values = {
        "run": "budget", "runs_dir": str(tmp_path), "board_size": 5, "komi": 2.0,
        "model": "a0.tiny", "generations": 3, "seed": 2, "max_hours": 1e-9,
        "mcts": {"playouts": 3}, "evaluator": {"batch_size": 4},
        "selfplay": {"games": 2, "parallel": 2, "max_moves": 12},
        "train": {"steps": 1, "batch_size": 4}, "window": {"initial": 2},
    }
    lines: list[str] = []
    state = RLRun(from_mapping(RLConfig, values, "test"), log=lines.append).run()
    # Generation 1 starts with an unspent clock and finishes; then the budget stops the run.
    assert state.generation == 2 and state.phase == "selfplay"
    assert read_json(tmp_path / "budget" / "stats" / "gen-0001.json") is not None
    assert any("time budget" in line for line in lines)
    # Lifting the budget on resume finishes the run.
    values["max_hours"] = 0.0
    state = RLRun(from_mapping(RLConfig, values, "test"), log=lines.append).run(resume=True)
    assert state.generation == 4


def test_a_run_trains_katagos_auxiliary_policies_with_its_weights(tmp_path):
    from harness.nets import load_model
    from harness.rl.learner import loss_weights

    values = {
        "run": "aux", "runs_dir": str(tmp_path), "board_size": 5, "komi": 2.0,
        "model": "a0.tiny", "heads": ["reply", "soft_policy"], "generations": 1, "seed": 3,
        "mcts": {"root": "gumbel", "playouts": 4, "gumbel_k": 4},
        "evaluator": {"batch_size": 4}, "selfplay": {"games": 2, "parallel": 2, "max_moves": 12},
        "train": {"steps": 2, "batch_size": 8}, "window": {"initial": 2},
    }
    config = from_mapping(RLConfig, values, "test")
    state = RLRun(config, log=lambda line: None).run()
    logs = state.last_train[MAIN]
    # Every Gumbel search is a target, so most rows have a reply: both losses are
    # cross-entropies of real distributions, above zero.
    assert logs["reply_loss"] > 0 and logs["soft_policy_loss"] > 0
    model = load_model(tmp_path / "aux" / "models" / "gen-0001.keras")
    assert model.name == "a0.reply.soft.2.16"
    assert loss_weights(config, model) == {"policy": 1.0, "value": 1.0, "reply": 0.15,
                                           "soft_policy": 8.0}
