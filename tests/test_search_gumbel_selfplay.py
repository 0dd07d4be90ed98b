"""Gumbel root end to end: 9x9 self-play with a real (untrained) network, the
policy targets it records, and the player spec and configs that select it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.config_io import load_config
from harness.game.position import Game
from harness.players.base import PlayerSpecError
from harness.players.spec import make_player
from harness.rl.config import RLConfig
from harness.rl.game_rows import game_rows
from harness.search import BatchedSearch, EvaluatorConfig, MCTSConfig, NetworkEvaluator
from harness.search.game_driver import play_games

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from harness.features import get_encoder
    from harness.nets import build_model, save_model

    model = build_model("a0.tiny", 9, get_encoder("agz17").planes, seed=3)
    path = tmp_path_factory.mktemp("nets") / "tiny.keras"
    save_model(model, path)
    return model, path


def test_a_9x9_gumbel_self_play_game_is_legal_and_records_improved_policies(tiny_model):
    model, _ = tiny_model
    evaluator = NetworkEvaluator(model, "agz17", 9, EvaluatorConfig(batch_size=16))
    config = MCTSConfig(playouts=16, fast_playouts=4, full_search_prob=0.5, root="gumbel",
                        gumbel_k=8, add_noise=True, leaves_per_game=2)
    search = BatchedSearch(evaluator, config, games=2, seed=4)
    records = play_games(search, 2, komi=7.5, max_moves=40, seed=4)
    assert len(records) == 2
    for record in records:
        replay = Game(9, 7.5)
        for colour, move in record.game.moves:  # every move legal for the side to move
            assert colour == replay.to_play and replay.is_legal(move)
            replay.play(move)
        rows = game_rows(record)
        targets = np.flatnonzero(rows.target)
        assert 0 < targets.size < len(rows)  # full searches only (playout cap)
        for i in targets:
            policy = rows.policy[i].astype(np.float64)
            assert abs(policy.sum() - 1.0) < 1e-2  # float16 storage
            assert policy[rows.move[i]] > 0
            # The completed-Q improved policy covers every legal move, where
            # 16 visits under sequential halving reach at most 8 of them.
            assert np.count_nonzero(record.policies[i]) > 8
            assert abs(record.policies[i].sum() - 1.0) < 1e-5
    assert not search.tree.inflight.any()


def test_the_mcts_spec_selects_the_gumbel_root(tiny_model):
    _, path = tiny_model
    player = make_player(f"mcts:{path}@16,root=gumbel,gumbel_k=8")
    assert player.config.root == "gumbel" and player.config.gumbel_k == 8
    game = Game(9, 7.5)
    move = player.select_move(game)
    assert game.is_legal(move)
    assert player.last_result.improved_policy is not None
    assert player.last_result.visits.sum() == 16
    assert make_player(f"mcts:{path}@16").config.root == "puct"


@pytest.mark.parametrize(("option", "message"), [
    ("root=gumble", "root must be one of puct, gumbel"),
    ("gumbel_k=0", "gumbel_k must be a positive integer"),
])
def test_bad_gumbel_options_are_one_line_spec_errors(tiny_model, option, message):
    _, path = tiny_model
    with pytest.raises(PlayerSpecError, match=message):
        make_player(f"mcts:{path}@16,{option}")


def test_the_gumbel_recipe_is_the_puct_recipe_with_the_gumbel_root():
    gumbel = load_config(RLConfig, CONFIGS / "rl-9x9-gumbel.toml")
    puct = load_config(RLConfig, CONFIGS / "rl-9x9.toml")
    assert gumbel.mcts.root == "gumbel" and gumbel.mcts.gumbel_k == 16
    assert gumbel.model == puct.model and gumbel.train == puct.train
    assert gumbel.selfplay == puct.selfplay and gumbel.evaluator == puct.evaluator
