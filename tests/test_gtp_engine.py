"""``harness gtp``: exact GTP transcripts, bad input survived, and the real subprocess."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness import __version__
from harness.game.geometry import gtp_to_point
from harness.gtp.engine import GTPEngine, TimeControl
from harness.players.gtp_client import GTPClient, GTPError
from harness.players.scripted import ScriptedPlayer


def run_transcript(engine: GTPEngine, commands: str) -> str:
    out = []
    for line in commands.split("\n"):
        response = engine.handle(line)
        if response is not None:
            out.append(response)
    return "".join(out)


def scripted_engine(*vertices: str, size: int = 5) -> GTPEngine:
    moves = [gtp_to_point(v, size) for v in vertices]
    return GTPEngine(ScriptedPlayer(moves, name="script"), size=size, komi=0.5)


def test_transcript_of_a_short_session_with_bad_input():
    engine = scripted_engine("C3", "C3", "B2")
    commands = "\n".join(
        [
            "1 protocol_version",
            "name",
            "version",
            "boardsize 5",
            "boardsize 30",
            "boardsize five",
            "komi 6.5",
            "komi six",
            "play b d4",
            "play w d4",
            "play x d4",
            "play b z99",
            "play b",
            "frobnicate",
            "7 frobnicate",
            "   # a comment line",
            "",
            "\t  ",
            "genmove w\r",
            "genmove b",
            "12 play\tb\tb2  # tabs and a trailing comment",
            "known_command genmove",
            "known_command frobnicate",
            "showboard",
            "undo",
            "final_score",
            "20 quit",
        ]
    )
    expected = "".join(
        [
            "=1 2\n\n",
            "= harness\n\n",
            f"= {__version__} (script)\n\n",
            "= \n\n",
            "? unacceptable size\n\n",
            "? syntax error: board size not an integer\n\n",
            "= \n\n",
            "? syntax error: komi not a float\n\n",
            "= \n\n",
            "? illegal move\n\n",
            "? syntax error: invalid color\n\n",
            "? syntax error: invalid vertex\n\n",
            "? syntax error: expected 2 arguments\n\n",
            "? unknown command\n\n",
            "?7 unknown command\n\n",
            "= C3\n\n",
            # The script's second move is C3 again: refused, the engine lives on.
            "? player script chose an illegal move C3 (occupied point)\n\n",
            "=12 \n\n",
            "= true\n\n",
            "= false\n\n",
            "= \n"
            "   A B C D E\n"
            " 5 . . . . . 5\n"
            " 4 . . . X . 4\n"
            " 3 . . O . . 3\n"
            " 2 . X . . . 2\n"
            " 1 . . . . . 1\n"
            "   A B C D E\n"
            "Black (X) captured 0, White (O) captured 0\n\n",
            "= \n\n",
            # D4 (Black) and C3 (White) on an otherwise open 5x5 board: every
            # empty region touches both colours, so 1 - 1 - 6.5.
            "= W+6.5\n\n",
            "=20 \n\n",
        ]
    )
    assert run_transcript(engine, commands) == expected
    assert engine.finished


def test_play_after_two_passes_continues_the_game_for_cleanup():
    engine = scripted_engine()
    transcript = run_transcript(
        engine, "play b pass\nplay w pass\nplay b c3\nfinal_score\nundo\nundo\nundo\nundo"
    )
    assert transcript == "= \n\n= \n\n= \n\n= B+24.5\n\n= \n\n= \n\n= \n\n? cannot undo\n\n"


def test_genmove_after_two_passes_asks_the_player_and_plays_on():
    engine = scripted_engine("C3")
    assert run_transcript(engine, "play b pass\nplay w pass\ngenmove b") == "= \n\n= \n\n= C3\n\n"
    assert engine.game.moves[-1] == (1, gtp_to_point("C3", 5))


def test_resign_and_cleanup_never_resigns():
    engine = scripted_engine()
    engine.player.moves = [-1, -1]
    assert run_transcript(engine, "genmove b") == "= resign\n\n"
    assert run_transcript(engine, "kgs-genmove_cleanup b") == "= pass\n\n"


def test_reg_genmove_does_not_change_the_board():
    engine = scripted_engine("C3")
    assert run_transcript(engine, "reg_genmove b\nshowboard").count("X") == 1  # only the legend


def test_final_status_list_treats_every_stone_as_alive():
    engine = scripted_engine()
    out = run_transcript(
        engine, "play b a1\nplay w e5\nfinal_status_list dead\nfinal_status_list alive"
    )
    assert out == "= \n\n= \n\n= \n\n= E5 A1\n\n"


def test_list_commands_names_every_required_command():
    engine = scripted_engine()
    listed = engine.handle("list_commands")[2:].split()
    required = [
        "protocol_version", "name", "version", "known_command", "list_commands", "quit",
        "boardsize", "clear_board", "komi", "play", "genmove", "undo", "showboard",
        "final_score", "time_settings", "time_left", "kgs-genmove_cleanup",
    ]
    assert set(required) <= set(listed)


class Budgeted(ScriptedPlayer):
    def __init__(self):
        super().__init__([], name="budget")
        self.move_time = None

    def set_limits(self, *, move_time=None, playouts=None):
        self.move_time = move_time


def test_time_settings_give_the_player_a_per_move_budget():
    player = Budgeted()
    engine = GTPEngine(player, size=9)
    run_transcript(engine, "time_settings 0 10 5\ntime_left b 10 5\ngenmove b")
    assert player.move_time == pytest.approx(0.8 * 10 / 5)
    assert run_transcript(engine, "time_settings 0 1 0\ntime_left w x 0") == (
        "= \n\n? syntax error: time not a number\n\n"
    )


def test_time_budget_in_main_time_and_without_limits():
    clock = TimeControl(main_time=100, byo_yomi_time=0, byo_yomi_stones=0)
    assert clock.move_budget(1, 0, 81) == pytest.approx(0.8 * 100 / 40)
    assert TimeControl(0, 5, 0).move_budget(1, 0, 81) is None  # GTP: no time limit
    assert TimeControl().move_budget(1, 0, 81) is None


def test_a_failing_player_gets_an_error_reply_and_the_engine_lives_on():
    class Broken(ScriptedPlayer):
        def select_move(self, game):
            raise RuntimeError("network file\nis corrupt")

    engine = GTPEngine(Broken([], name="broken"), size=9)
    assert engine.handle("genmove b") == "? internal error: network file is corrupt\n\n"
    assert engine.handle("play b e5") == "= \n\n"


# --- the real subprocess -------------------------------------------------------------


def harness_gtp(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", "gtp", *args]


def test_subprocess_answers_exact_bytes_with_crlf_input():
    commands = b"1 boardsize 9\r\nclear_board\r\nplay b e5\r\nplay w e5\r\nfoo\r\n2 quit\r\n"
    done = subprocess.run(
        harness_gtp("--player", "random", "--seed", "1"),
        input=commands, capture_output=True, timeout=120, check=True,
    )
    assert done.stdout == b"=1 \n\n= \n\n= \n\n? illegal move\n\n? unknown command\n\n=2 \n\n"


def test_subprocess_plays_through_the_gtp_client():
    with GTPClient(harness_gtp("--player", "random", "--seed", "2"), timeout=120) as engine:
        assert engine.send("protocol_version") == "2"
        engine.send("boardsize 9")
        engine.send("clear_board")
        engine.send("play b e5")
        move = engine.send("genmove w")
        assert move.lower() != "e5" and gtp_to_point(move, 9) < 81
        with pytest.raises(GTPError):
            engine.send("play b " + move)  # occupied now
        assert "X" in engine.send("showboard")  # still alive after the error


def test_subprocess_reports_a_bad_player_spec_in_one_line():
    done = subprocess.run(
        harness_gtp("--player", "uct:lots"), capture_output=True, timeout=120, text=True
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "harness gtp: bad player spec 'uct:lots': playouts must be a positive integer, got 'lots'"
    ]


@pytest.mark.parametrize(("args", "label"), [
    (["--player", "uct:50"], "uct:50"),
    (["--player", "uct:50", "--playouts", "7"], "uct:7"),
    (["--player", "random", "--playouts", "7"], "random"),
    (["--model", "m.keras"], "mcts:m.keras@200"),
    (["--model", "m.keras", "--playouts", "64"], "mcts:m.keras@64"),
])
def test_the_playouts_flag_wins_over_a_player_own_count_and_shows_in_its_name(args, label):
    import argparse

    from harness.commands.gtp import add_arguments, player_spec

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert player_spec(parser.parse_args(args)).label == label


def test_a_player_tied_to_one_board_size_refuses_the_others():
    player = ScriptedPlayer([], name="net9")
    player.board_size = 9  # what network players carry
    engine = GTPEngine(player)  # starts on the player's size, not the default 19
    assert engine.game.size == 9
    assert run_transcript(engine, "boardsize 19\nboardsize 9") == "? unacceptable size\n\n= \n\n"
