"""Network players: the raw policy and MCTS, on a tiny untrained zoo model.

The policy player's choice is checked against a forward pass done here by
hand (encoder, model, legal mask, argmax), independently of the evaluator.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from harness.arena.referee import play_game
from harness.game.geometry import BLACK, WHITE, gtp_to_point
from harness.game.position import Game
from harness.players.base import PlayerSpecError
from harness.players.mcts import MCTSPlayer
from harness.players.policy import PolicyPlayer
from harness.players.random_player import RandomPlayer
from harness.players.spec import make_player

POSITION = """
. . . . . . . . .
. . . . . . . . .
. . X O . . . . .
. . X O . . . . .
. . . X O . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from harness.features import get_encoder
    from harness.nets import build_model, save_model

    model = build_model("a0.tiny", 9, get_encoder("agz17").planes, seed=3)
    path = tmp_path_factory.mktemp("nets") / "tiny.keras"
    save_model(model, path)
    return path


def test_policy_player_plays_the_networks_best_legal_move(tiny_model):
    from harness.features import get_encoder
    from harness.nets import load_model

    game = Game.from_ascii(POSITION, to_play=BLACK)
    player = make_player(f"policy:{tiny_model}")  # encoder inferred: only agz17 has 17 planes
    move = player.select_move(game)

    planes = get_encoder("agz17").encode_game(game)[None]
    logits = np.array(load_model(tiny_model)(planes, training=False)["policy"])[0]
    logits[~game.legal_moves()] = -np.inf
    assert move == int(np.argmax(logits))
    assert game.is_legal(move)


def test_policy_player_with_temperature_varies_its_moves(tiny_model):
    game = Game(9, 7.5)
    player = PolicyPlayer(tiny_model, temperature=1.0, seed=0)
    moves = {player.select_move(game) for _ in range(30)}
    assert len(moves) > 3
    assert all(game.is_legal(m) for m in moves)


def test_mcts_player_with_a_network_searches_the_requested_playouts(tiny_model):
    player = make_player(f"mcts:{tiny_model}@24")
    game = Game.from_ascii(POSITION, to_play=WHITE)
    move = player.select_move(game)
    assert game.is_legal(move)
    assert player.last_result.playouts == 24


# Black's two eyes in the corner, A9 and C9.
TWO_EYES = """
. X . X . . . . .
X X X X . . . . .
""" + ". . . . . . . . .\n" * 7


def test_an_mcts_player_never_searches_its_own_eyes_unless_told(tiny_model):
    game = Game.from_ascii(TWO_EYES, to_play=BLACK)
    eyes = [gtp_to_point("A9", 9), gtp_to_point("C9", 9)]
    keeping = make_player(f"mcts:{tiny_model}@24")
    filling = make_player(f"mcts:{tiny_model}@24,fill_eyes=1")
    assert not keeping.config.fill_eyes and filling.config.fill_eyes
    keeping.select_move(game)
    filling.select_move(game)
    assert not keeping.last_result.prior[eyes].any() and not keeping.last_result.visits[eyes].any()
    assert filling.last_result.prior[eyes].all()


def test_network_players_finish_a_game_against_random(tiny_model):
    for player in (PolicyPlayer(tiny_model), MCTSPlayer(tiny_model, playouts=8)):
        played = play_game(player, RandomPlayer(seed=0), size=9, komi=7.5, max_moves=30)
        assert played.result.kind != "forfeit", played.reason


def test_a_network_on_the_wrong_board_size_loses_by_forfeit_with_a_clear_reason(tiny_model):
    played = play_game(PolicyPlayer(tiny_model), RandomPlayer(seed=0), size=7, komi=7.5)
    assert played.result.to_sgf() == "W+F"
    assert "the network plays 9x9, the game is 7x7" in played.reason


def test_a_model_file_that_is_not_a_model_is_a_one_line_spec_error(tmp_path):
    bad = tmp_path / "junk.keras"
    bad.write_bytes(b"not a zip archive")
    for spec in (f"policy:{bad}", f"mcts:{bad}@10"):
        with pytest.raises(PlayerSpecError) as info:
            make_player(spec)
        assert "junk.keras" in str(info.value) and "\n" not in str(info.value)


# --- MCTS player on a rules oracle (no network) ------------------------------------------

WHITE_IN_ATARI = """
. . . . .
. X X X .
X O O O .
. X X X .
. . . . .
"""


def test_mcts_player_captures_with_a_material_oracle():
    from harness.search.oracle import OracleEvaluator

    game = Game.from_ascii(WHITE_IN_ATARI, to_play=BLACK, komi=0.5)
    player = MCTSPlayer(evaluator=OracleEvaluator(5, value="material"), playouts=200, seed=0)
    assert player.select_move(game) == gtp_to_point("E3", 5)


def test_randomized_mcts_varies_between_near_equal_moves_and_greedy_does_not():
    from harness.search.oracle import OracleEvaluator

    game = Game(5, 0.5)  # every opening move is worth the same to a zero-value oracle

    def first_moves(randomize: bool) -> set[int]:
        moves = set()
        for seed in range(12):
            player = MCTSPlayer(
                evaluator=OracleEvaluator(5, value="zero"), playouts=64,
                randomize=randomize, seed=seed,
            )
            moves.add(player.select_move(game))
        return moves

    assert len(first_moves(False)) == 1
    assert len(first_moves(True)) > 1


def test_harness_gtp_with_a_model_answers_genmove(tiny_model):
    commands = "boardsize 9\nclear_board\nplay b e5\ngenmove w\nquit\n"
    done = subprocess.run(
        [sys.executable, "-m", "harness", "gtp", "--model", str(tiny_model), "--playouts", "16"],
        input=commands, capture_output=True, text=True, timeout=300, check=True,
    )
    answers = [a for a in done.stdout.split("\n\n") if a]
    assert answers[:3] == ["= ", "= ", "= "]
    move = answers[3].removeprefix("= ")
    assert move != "E5" and gtp_to_point(move, 9) < 81
