"""The search on the device (``[selfplay] path = "device"``) against the host's.

Its move limits must be the harness search's own (the numba
``leaves.root_moves`` is the reference, on random positions with passes in
them), its Gumbel root must spend simulations on the harness's sequential
halving schedule, with one network and no noise it must choose the host
search's moves, and its games, played by a real network on Keras's JAX
backend, must be legal and complete and train through ``harness rl``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
mctx = pytest.importorskip("mctx")

from harness.config_io import from_mapping  # noqa: E402 (after the skips)
from harness.game import board as K  # noqa: E402
from harness.game.geometry import geometry  # noqa: E402
from harness.game.position import Game  # noqa: E402
from harness.jaxgo import rules as R  # noqa: E402
from harness.jaxgo.moves import search_moves  # noqa: E402
from harness.rl.config import RLConfig  # noqa: E402
from harness.search.gumbel import considered_visits  # noqa: E402
from harness.search.leaves import PASS_RULES, root_moves  # noqa: E402

CHECK = Path(__file__).with_name("device_selfplay_check.py")


def test_mctx_spends_gumbel_simulations_on_the_harness_halving_schedule():
    from mctx._src.seq_halving import get_table_of_considered_visits

    for simulations in range(1, 65):
        table = get_table_of_considered_visits(16, simulations)
        for considered in range(1, 17):
            ours = [considered_visits(considered, simulations, i) for i in range(simulations)]
            assert list(table[considered]) == ours, (considered, simulations)


def random_positions(games: int, size: int, seed: int, rules: str = "superko") -> list[Game]:
    """Positions along random games that pass now and then, so that a side
    to move often faces a pass it could answer by ending the game."""
    rng = np.random.default_rng(seed)
    positions = []
    for _ in range(games):
        game = Game(size, 7.5, rules)
        while not game.is_over and len(game.moves) < 3 * size * size:
            legal = game.legal_moves()
            points = np.flatnonzero(legal[:-1])
            passing = legal[-1] and (not len(points) or rng.random() < 0.2)
            game.play(size * size if passing else int(rng.choice(points)))
            if rng.random() < 0.3 and not game.is_over:
                positions.append(game.copy())
    return positions


def harness_moves(game: Game, pass_rule: str, fill_eyes: bool) -> np.ndarray:
    geo = geometry(game.size)
    legal = np.zeros(game.size * game.size + 1, bool)
    root_moves(game.boards, K.new_boards(1, game.size), 0, game.komi, geo.neighbours,
               geo.diagonals, geo.zobrist, legal, K.new_work(game.size * game.size),
               PASS_RULES[pass_rule], fill_eyes)
    return legal


@pytest.mark.parametrize("pass_rule", sorted(PASS_RULES))
@pytest.mark.parametrize("fill_eyes", [False, True])
def test_the_device_search_limits_moves_as_the_harness_search_does(pass_rule, fill_eyes):
    positions = random_positions(12, 7, seed=11)
    assert any(g.boards.meta[0, K.PASSES] == 1 for g in positions)
    device = np.asarray(search_moves(R.from_games(positions), pass_rule, fill_eyes))
    for i, game in enumerate(positions):
        np.testing.assert_array_equal(device[i], harness_moves(game, pass_rule, fill_eyes),
                                      err_msg=f"position {i}")


def test_nogo_moves_are_the_rules_own():
    positions = random_positions(4, 7, seed=2, rules="nogo")
    state = R.from_games(positions)
    np.testing.assert_array_equal(np.asarray(search_moves(state)), np.asarray(state.legal))


def device_config(**changes) -> RLConfig:
    table = {"run": "device", "model": "a0.tiny", "encoder": "agz17",
             "selfplay": {"path": "device"}}
    table.update(changes)
    return from_mapping(RLConfig, table, "test")


def test_the_device_path_refuses_what_it_does_not_do():
    assert device_config().selfplay.path == "device"
    for changes, words in [({"encoder": "cazenave21"}, "encodes agz17 only"),
                           ({"mcts": {"resign_threshold": -0.9}}, "resign_threshold"),
                           ({"selfplay": {"path": "gpu"}}, "path must be one of")]:
        with pytest.raises(Exception, match=words):
            device_config(**changes)


def test_auto_takes_the_device_path_only_on_jax_with_a_gpu():
    from harness.devices import Device
    from harness.rl.selfplay import selfplay_path, with_path_resolved

    card = Device("jax", "0.10", gpus=("NVIDIA H200",), capability=(9, 0))
    auto = device_config(selfplay={"path": "auto"})
    assert selfplay_path(auto, card) == ("device", "JAX on NVIDIA H200")
    assert with_path_resolved(auto, card).selfplay.path == "device"
    assert auto.selfplay.path == "auto"  # the saved config decides again on resume
    for dev, why in [(Device("jax", "0.10"), "no GPU"),
                     (Device("tensorflow", "2.21", gpus=("NVIDIA H200",)), "needs JAX")]:
        path, reason = selfplay_path(auto, dev)
        assert path == "host" and why in reason
    # what the device path would refuse sends auto to the host, not to an error
    resigning = device_config(selfplay={"path": "auto"}, mcts={"resign_threshold": -0.9})
    path, reason = selfplay_path(resigning, card)
    assert path == "host" and "resign_threshold" in reason
    assert selfplay_path(device_config(), Device("jax", "0.10")) == ("device", "configured")


@pytest.mark.parametrize("root", [
    "gumbel", pytest.param("puct", marks=pytest.mark.slow)])
def test_device_selfplay_plays_legal_complete_games_and_trains(root, tmp_path):
    env = {**os.environ, "KERAS_BACKEND": "jax"}
    done = subprocess.run([sys.executable, str(CHECK), str(tmp_path), root], env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["backend"] == "jax"
    games = report[root]
    assert games["games"] == games["known_results"] == 4
    assert games["ended"] + games["truncated"] == 4
    assert games["targets"] > 0 and games["fast_moves"] > 0  # playout cap randomisation
    assert games["target_sums"] == [1.0, 1.0, 1.0]
    assert games["stray_mass"] == 0.0  # no target mass on a move the position forbids
    assert games["evaluations"] >= games["moves"]
    # Today's host search and the device search, same network, noise off:
    # the same move at every position, and the same target (Gumbel's to
    # float rounding; PUCT's visits may differ by one where two children
    # tie, which the host breaks by the larger prior and mctx by the first).
    same = report[f"{root}_equivalence"]
    assert same["positions"] >= 40
    assert same["same_moves"] == same["positions"]
    assert same["target_l1_max"] <= (1e-5 if root == "gumbel" else 2.0 / 16)
    if root == "gumbel":
        assert report["run_games"] == report["run_sgfs"] == 4
    else:
        # Two Ray actors, each on its own device path, commit the local run's games.
        assert report["ray_games"] == report["local_games"] == report["ray_sgfs"] == 4
        assert report["ray_sgfs_equal"]
        assert report["bench_status"] == 0
        assert report["bench_rows"] == 3  # host, device, bare network
