"""GNU Go through the referee: a sanity check of the referee, the GTP player and scoring.

GNU Go level 10 must beat a random player in every game, and because it is
started with ``--capture-all-dead`` its own ``final_score`` must agree with the
referee's Tromp-Taylor count (SPEC section 11).
"""

from __future__ import annotations

import os

import pytest

from harness.arena.referee import play_game
from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.players.gtp_client import find_gnugo
from harness.players.gtp_player import gnugo_player
from harness.players.random_player import RandomPlayer
from harness.players.spec import make_player

pytestmark = [
    pytest.mark.gnugo,
    pytest.mark.skipif(find_gnugo() is None, reason="GNU Go not installed (/usr/games/gnugo)"),
]


def _gnugo_against_random(games: int, tmp_path) -> None:
    gnugo = gnugo_player(10, seed=1)
    try:
        for i in range(games):
            rnd = RandomPlayer(seed=i)
            black, white = (gnugo, rnd) if i % 2 == 0 else (rnd, gnugo)
            played = play_game(black, white, size=9, komi=7.5, sgf_path=tmp_path / f"{i}.sgf")
            assert played.winner == (BLACK if i % 2 == 0 else WHITE), played.summary()
            assert played.reason == "two passes"
            assert "gnugo:10" in played.engine_scores
            assert not played.scores_disagree, (played.summary(), played.engine_scores)
        assert gnugo.restarts == 0
    finally:
        gnugo.close()


def test_gnugo_beats_random_in_every_game(tmp_path):
    _gnugo_against_random(2, tmp_path)


@pytest.mark.slow
def test_gnugo_beats_random_in_twenty_games(tmp_path):
    _gnugo_against_random(20, tmp_path)


def test_a_crashed_engine_is_restarted_and_the_game_replayed():
    gnugo = make_player("gnugo:10")
    try:
        game = Game(9, 7.5)
        for _ in range(3):
            game.play(gnugo.select_move(game))
            game.play(RandomPlayer(seed=0).select_move(game))
        os.kill(gnugo.client.pid, 9)  # the engine we started dies under us
        move = gnugo.select_move(game)
        assert gnugo.restarts == 1
        game.play(move)
        # The restarted engine has the whole game, its new move included.
        board = gnugo.client.send("showboard")
        assert board.count("X") - board.count("X)") == sum(1 for v in game.stones if v == BLACK)
    finally:
        gnugo.close()
