"""The GTP player's bookkeeping, against a recording stand-in for the engine process."""

from __future__ import annotations

import pytest

from harness.game.geometry import gtp_to_point
from harness.game.position import Game
from harness.players.base import RESIGN
from harness.players.gtp_client import GTPEngineDied
from harness.players.gtp_player import GTPPlayer


class FakeEngine:
    """Answers like a GTP engine would and remembers every command."""

    def __init__(self, replies=(), commands=("genmove", "kgs-genmove_cleanup", "final_score")):
        self.sent: list[str] = []
        self.replies = list(replies)  # answers to genmove-like commands, in order
        self.commands = set(commands)
        self.name = "fake"
        self.crash_next = False
        self.restarted = 0

    def known_command(self, command):
        return command in self.commands

    def send_many(self, commands, timeout=None):
        return [self.send(c, timeout) for c in commands]

    def send(self, command, timeout=None):
        if self.crash_next:
            self.crash_next = False
            raise GTPEngineDied("engine exited", command, "", "fake")
        self.sent.append(command)
        if command.split()[0] in ("genmove", "kgs-genmove_cleanup", "final_score"):
            return self.replies.pop(0)
        return ""

    def restart(self):
        self.restarted += 1

    def close(self):
        pass


def player_with(engine: FakeEngine) -> GTPPlayer:
    player = GTPPlayer([], name="fake", client=engine)
    player.reset(9, 7.5, "superko")
    return player


def test_first_question_sets_up_the_board_then_only_new_moves_are_sent():
    engine = FakeEngine(["D5", "C3"])
    player = player_with(engine)
    game = Game(9, 6.5)
    game.play(gtp_to_point("E5", 9))
    game.play(player.select_move(game))  # White D5
    game.play(gtp_to_point("E4", 9))
    assert player.select_move(game) == gtp_to_point("C3", 9)
    assert engine.sent == [
        "boardsize 9", "clear_board", "komi 6.5", "play b E5", "genmove w",
        "play b E4", "genmove w",
    ]


def test_a_game_that_went_elsewhere_is_replayed_from_a_clear_board():
    engine = FakeEngine(["D5", "C3"])
    player = player_with(engine)
    game = Game(9, 7.5)
    game.play(gtp_to_point("E5", 9))
    player.select_move(game)
    other = Game(9, 7.5)  # not the game the engine has: D5 was never played
    other.play(gtp_to_point("E5", 9))
    other.play(gtp_to_point("G5", 9))
    other.play(gtp_to_point("E4", 9))
    engine.sent.clear()
    player.select_move(other)
    assert engine.sent == [
        "boardsize 9", "clear_board", "komi 7.5", "play b E5", "play w G5", "play b E4",
        "genmove w",
    ]


def test_after_the_opponents_pass_the_engine_is_asked_to_clean_up():
    engine = FakeEngine(["pass"])
    player = player_with(engine)
    game = Game(9, 7.5)
    game.play(game.pass_move)
    assert player.select_move(game) == game.pass_move
    assert engine.sent[-2:] == ["play b pass", "kgs-genmove_cleanup w"]


def test_without_cleanup_support_plain_genmove_is_used():
    engine = FakeEngine(["pass"], commands=("genmove",))
    player = player_with(engine)
    game = Game(9, 7.5)
    game.play(game.pass_move)
    player.select_move(game)
    assert engine.sent[-1] == "genmove w"


def test_resign_and_unreadable_replies():
    engine = FakeEngine(["resign", "Z42"])
    player = player_with(engine)
    game = Game(9, 7.5)
    assert player.select_move(game) == RESIGN
    with pytest.raises(ValueError, match="answered 'genmove b' with 'z42'"):
        player.select_move(game)


def test_a_crash_restarts_the_engine_once_and_replays_the_game():
    engine = FakeEngine(["C3"])
    player = player_with(engine)
    game = Game(9, 7.5)
    game.play(gtp_to_point("E5", 9))
    engine.crash_next = True
    assert player.select_move(game) == gtp_to_point("C3", 9)
    assert engine.restarted == 1 and player.restarts == 1
    assert engine.sent == ["boardsize 9", "clear_board", "komi 7.5", "play b E5", "genmove w"]


def test_a_time_budget_becomes_byo_yomi_for_every_move():
    engine = FakeEngine(["C3"])
    player = player_with(engine)
    player.set_limits(move_time=2.4)
    player.select_move(Game(9, 7.5))
    assert "time_settings 0 2 1" in engine.sent


def test_final_score_is_asked_on_the_synced_board():
    engine = FakeEngine(["B+3.5"])
    player = player_with(engine)
    game = Game(9, 7.5)
    game.play(gtp_to_point("E5", 9))
    assert player.final_score(game) == "B+3.5"
    assert engine.sent[-2:] == ["play b E5", "final_score"]
