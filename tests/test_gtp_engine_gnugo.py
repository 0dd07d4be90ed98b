"""``harness gtp`` as a subprocess playing full 9x9 games against GNU Go through the referee.

Both sides are external GTP programs here, so every move crosses the protocol
twice; a game that ends any other way than by passes or resignation, or an
engine restart, is a protocol error.
"""

from __future__ import annotations

import sys

import pytest

from harness.arena.referee import play_game
from harness.players.gtp_client import find_gnugo
from harness.players.gtp_player import GTPPlayer, gnugo_player

pytestmark = [
    pytest.mark.gnugo,
    pytest.mark.skipif(find_gnugo() is None, reason="GNU Go not installed (/usr/games/gnugo)"),
]


def _harness_against_gnugo(games: int, tmp_path) -> None:
    argv = [sys.executable, "-m", "harness", "gtp", "--player", "uct:200", "--seed", "3"]
    harness = GTPPlayer(argv, name="harness-uct200", timeout=120)
    gnugo = gnugo_player(10, seed=2)
    try:
        for i in range(games):
            black, white = (harness, gnugo) if i % 2 == 0 else (gnugo, harness)
            played = play_game(black, white, size=9, komi=7.5, sgf_path=tmp_path / f"{i}.sgf")
            assert played.reason in ("two passes", "Black resigned", "White resigned"), (
                played.summary()
            )
            if played.reason == "two passes":
                # Our engine counts Tromp-Taylor too: it must agree with the referee.
                assert played.engine_scores["harness-uct200"] == played.result.to_sgf()
                assert not played.scores_disagree, played.engine_scores
        assert harness.restarts == 0 and gnugo.restarts == 0
        assert not harness.client.stray_lines and not gnugo.client.stray_lines
    finally:
        harness.close()
        gnugo.close()


def test_harness_gtp_plays_full_games_against_gnugo(tmp_path):
    _harness_against_gnugo(2, tmp_path)


@pytest.mark.slow
def test_harness_gtp_plays_ten_games_against_gnugo(tmp_path):
    _harness_against_gnugo(10, tmp_path)
