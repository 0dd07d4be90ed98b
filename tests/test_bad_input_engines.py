"""Misbehaving external engines: deadlines from the time settings, one rule for illegal answers.

The regression tests of issue 23 items 4 and 5; each failed on commit
2e81a61. The engines are real processes: a few lines of Python speaking GTP,
told how to misbehave by their first argument.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from harness.arena.referee import play_game
from harness.cli import main as harness_main
from harness.players.gtp_client import GTPTimeout
from harness.players.gtp_player import GTPPlayer
from harness.players.random_player import RandomPlayer

ENGINE = textwrap.dedent(
    """
    import sys
    mode = sys.argv[1]
    for line in sys.stdin:
        words = line.split()
        if not words or mode == "silent":
            continue  # "silent" reads every command and never answers
        if words[0] == "quit":
            print("=\\n", flush=True)
            break
        if words[0] == "list_commands":
            answer = "genmove\\nplay\\nboardsize\\nclear_board\\nkomi\\nquit"
        elif words[0] == "genmove":
            answer = "Z99" if mode == "z99" else "E5"  # "e5": E5 every time
        else:
            answer = ""
        print("= " + answer + "\\n", flush=True)
    """
)


@pytest.fixture
def engine(tmp_path):
    script = tmp_path / "engine.py"
    script.write_text(ENGINE)
    return lambda mode: [sys.executable, str(script), mode]


# --- item 4: time limits honoured ----------------------------------------------------------


def test_the_answer_deadline_follows_the_move_time_above_a_floor():
    from harness.players.gtp_player import DEADLINE_FLOOR, answer_deadline

    assert DEADLINE_FLOOR == 10.0
    assert answer_deadline(0.1) == 10.0  # byo-yomi of 1 s: the floor
    assert answer_deadline(4.6) == 11.0  # 5 s of byo-yomi: 2 x 5 + 1
    assert answer_deadline(30.0) == 61.0


def test_an_engine_that_never_answers_costs_one_deadline_from_the_move_time(engine):
    player = GTPPlayer(engine("silent"), name="silent")  # default timeout 30 s
    black = RandomPlayer(seed=1)
    try:
        played = play_game(black, player, size=9, komi=7.0, move_time=1.0, max_moves=4)
    finally:
        player.close()
    assert played.crashed  # no answer is an error game, never rated
    assert "no answer within 10 s" in played.reason  # not 30 s
    assert player.restarts == 0  # a timeout is not retried on a restarted engine


def test_a_timeout_is_raised_at_once_from_select_move(engine):
    from harness.game.position import Game

    player = GTPPlayer(engine("silent"), name="silent")
    player.reset(9, 7.0, "superko")
    player.set_limits(move_time=0.5)
    try:
        with pytest.raises(GTPTimeout, match="no answer within 10 s"):
            player.select_move(Game(9, 7.0))
    finally:
        player.close()


# --- item 5: one rule for illegal answers -----------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "why"),
    [("z99", "answered 'genmove b' with 'z99'"), ("e5", "E5 (occupied")],
)
def test_an_unreadable_vertex_and_an_occupied_point_are_the_same_rated_forfeit(engine, mode, why):
    player = GTPPlayer(engine(mode), name=mode)
    try:
        played = play_game(player, RandomPlayer(seed=3), size=9, komi=7.0, seed=1)
    finally:
        player.close()
    assert not played.crashed
    assert played.result.kind == "forfeit" and played.result.winner == 2  # White wins
    assert played.reason.startswith(f"Black ({mode}) played an illegal move: ")
    assert why in played.reason


def test_a_tournament_rates_both_illegal_answers_alike(engine, tmp_path):
    out = tmp_path / "t"
    z99 = " ".join(engine("z99"))
    e5 = " ".join(engine("e5"))
    code = harness_main(["tournament", f"z99=gtp:{z99}", f"e5=gtp:{e5}", "random",
                         "-o", str(out), "--board-size", "9", "--games-per-pair", "2",
                         "--no-progress"])
    rows = [json.loads(line) for line in Path(out, "results.jsonl").read_text().splitlines()]
    assert code == 0 and len(rows) == 6
    assert all(row["error"] is None for row in rows)  # every game rated
    illegal = [row for row in rows if "played an illegal move" in row["reason"]]
    assert {row["winner"] for row in rows if "random" in (row["black"], row["white"])} == {
        "random"
    } and len(illegal) == 6
