"""The GTP commands around analysis: handicap (checked against the GTP 2
specification's table and GNU Go), ``loadsgf``, KGS time settings, value
validation, and ``kata-analyze`` with a network that has ownership and score
heads."""

from __future__ import annotations

import numpy as np
import pytest
from sabaki_lines import KATA_KEYS, sabaki_parse

from harness.game.geometry import BLACK, EMPTY, WHITE, gtp_to_point
from harness.gtp.engine import GTPEngine
from harness.gtp.handicap import fixed_handicap_points, max_fixed_handicap
from harness.gtp.timecontrol import TimeControl, TimeSettingsError, parse_kgs_time_settings
from harness.players.mcts import MCTSPlayer
from harness.players.scripted import ScriptedPlayer

# GTP 2 specification, section 4.1.1: fixed handicap placement on 19x19.
SPEC_19 = {
    2: "D4 Q16",
    3: "D4 Q16 D16",
    4: "D4 Q16 D16 Q4",
    5: "D4 Q16 D16 Q4 K10",
    6: "D4 Q16 D16 Q4 D10 Q10",
    7: "D4 Q16 D16 Q4 D10 Q10 K10",
    8: "D4 Q16 D16 Q4 D10 Q10 K4 K16",
    9: "D4 Q16 D16 Q4 D10 Q10 K4 K16 K10",
}


def engine(size: int = 19) -> GTPEngine:
    return GTPEngine(ScriptedPlayer([], name="s"), size=size, komi=0.5)


@pytest.mark.parametrize("stones", sorted(SPEC_19))
def test_fixed_handicap_on_19x19_is_the_specifications_table(stones):
    e = engine()
    assert e.handle(f"fixed_handicap {stones}") == f"= {SPEC_19[stones]}\n\n"
    black = {gtp_to_point(v, 19) for v in SPEC_19[stones].split()}
    assert {int(p) for p in np.flatnonzero(e.game.stones == BLACK)} == black
    assert e.game.to_play == WHITE


@pytest.mark.parametrize("size", [7, 8, 9, 10, 13, 19])
def test_fixed_handicap_points_agree_with_gnu_go_on_every_size(gnugo, size):
    gnugo.send(f"boardsize {size}")
    for stones in range(2, max_fixed_handicap(size) + 1):
        gnugo.send("clear_board")
        theirs = set(gnugo.send(f"fixed_handicap {stones}").split())
        ours = engine(size).handle(f"fixed_handicap {stones}")[2:].split()
        assert set(ours) == theirs, (size, stones)
    gnugo.send("clear_board")
    too_many = max_fixed_handicap(size) + 1
    assert engine(size).handle(f"fixed_handicap {too_many}") == "? invalid number of stones\n\n"


def test_handicap_needs_an_empty_board_and_a_valid_vertex_list():
    e = engine(9)
    e.handle("play b e5")
    assert e.handle("fixed_handicap 2") == "? board not empty\n\n"
    assert e.handle("set_free_handicap c3 g7") == "? board not empty\n\n"
    e.handle("clear_board")
    assert e.handle("set_free_handicap c3 c3") == "? bad vertex list\n\n"
    assert e.handle("set_free_handicap c3 pass") == "? bad vertex list\n\n"
    assert e.handle("set_free_handicap c3") == "? bad vertex list\n\n"
    assert e.handle("set_free_handicap c3 g7 e5") == "= \n\n"
    assert e.game.to_play == WHITE and int((e.game.stones == BLACK).sum()) == 3
    expected = [gtp_to_point(v, 9) for v in ["C3", "G7", "C7", "G3", "E5"]]
    assert fixed_handicap_points(9, 5) == expected


def test_place_free_handicap_places_the_fixed_points_and_undo_keeps_them():
    e = engine(9)
    assert e.handle("place_free_handicap 4") == "= C3 G7 C7 G3\n\n"
    e.handle("play w e5")
    e.handle("undo")
    assert int((e.game.stones == BLACK).sum()) == 4 and e.game.stones[40] == EMPTY


SGF = "(;GM[1]FF[4]SZ[9]KM[6.5]AB[aa];W[ee];B[cc];W[gg];B[dd])"


def test_loadsgf_loads_the_whole_game_or_the_position_before_a_move(tmp_path):
    path = tmp_path / "game.sgf"
    path.write_text(SGF)
    e = engine(19)
    assert e.handle(f"loadsgf {path}") == "= \n\n"
    assert e.game.size == 9 and e.komi == 6.5
    assert [m for _, m in e.game.moves] == [40, 20, 60, 30]  # E5 C7 G3 D6
    assert e.game.stones[0] == BLACK  # the AB setup stone at A9
    assert e.handle(f"loadsgf {path} 3") == "= \n\n"
    assert e.game.moves == [(WHITE, 40), (BLACK, 20)] and e.game.to_play == WHITE
    assert e.handle(f"loadsgf {tmp_path / 'missing.sgf'}") == "? cannot load file\n\n"


def test_loadsgf_refuses_a_size_the_network_cannot_play(tmp_path):
    path = tmp_path / "game.sgf"
    path.write_text(SGF.replace("SZ[9]", "SZ[13]"))
    player = ScriptedPlayer([], name="net")
    player.board_size = 9
    e = GTPEngine(player, size=9)
    assert e.handle(f"loadsgf {path}") == "? unacceptable size\n\n"


def test_loadsgf_reads_only_regular_files_of_bounded_size(tmp_path, monkeypatch):
    """A FIFO with no writer and /dev/zero would block or never end; each is
    one refusal and the engine answers the next command."""
    import os

    fifo = tmp_path / "pipe.sgf"
    os.mkfifo(fifo)
    e = engine(9)
    assert e.handle(f"loadsgf {fifo}") == f"? cannot load file: {fifo}: not a regular file\n\n"
    assert e.handle("loadsgf /dev/zero") == "? cannot load file: /dev/zero: not a regular file\n\n"
    assert e.handle("name") == "= harness\n\n"
    big = tmp_path / "big.sgf"
    big.write_text(SGF + " " * 100)
    from harness.sgf import sources

    monkeypatch.setattr(sources, "DEFAULT_MAX_GAME_BYTES", len(SGF) + 50)
    assert e.handle(f"loadsgf {big}").startswith("? cannot load file: ")
    assert "more than" in e.handle(f"loadsgf {big}")
    assert e.handle(f"loadsgf {tmp_path / 'missing.sgf'}") == "? cannot load file\n\n"


@pytest.mark.parametrize(
    "command",
    ["komi nan", "komi inf", "komi -inf", "time_settings -1 0 0", "time_settings 0 -5 1",
     "time_settings 0 5 -1", "time_settings nan 0 0", "time_settings inf 0 0",
     "time_left b nan 0", "time_left b 10 -1", "kgs-time_settings canadian -1 10 5",
     "kgs-time_settings fischer 10 5", "kgs-time_settings byoyomi 10 5"],
)
def test_values_no_clock_or_komi_can_have_are_gtp_errors(command):
    answer = engine(9).handle(command)
    assert answer.startswith("? syntax error: ") and answer.endswith("\n\n")


def test_kgs_time_settings_give_the_per_move_budgets_of_each_system():
    assert parse_kgs_time_settings(["none"]).move_budget(BLACK, 0, 81) is None
    absolute = parse_kgs_time_settings(["absolute", "400"])
    assert absolute.move_budget(BLACK, 0, 81) == pytest.approx(0.8 * 400 / 40)
    canadian = parse_kgs_time_settings(["canadian", "0", "60", "20"])
    assert canadian.with_time_left(BLACK, 30, 10).move_budget(BLACK, 0, 81) == pytest.approx(2.4)
    # Japanese byo-yomi: time_left reports periods, and a period is one move's time.
    byoyomi = parse_kgs_time_settings(["byoyomi", "0", "10", "3"])
    assert byoyomi.with_time_left(BLACK, 10, 3).move_budget(BLACK, 0, 81) == pytest.approx(8.0)
    assert TimeControl(kind="byoyomi", main_time=0, byo_yomi_time=10).kind == "byoyomi"
    with pytest.raises(TimeSettingsError):
        parse_kgs_time_settings([])


def test_kgs_time_settings_reach_the_player_as_a_move_time():
    class Budgeted(ScriptedPlayer):
        move_time = None

        def set_limits(self, *, move_time=None, playouts=None):
            self.move_time = move_time

    player = Budgeted([], name="b")
    e = GTPEngine(player, size=9)
    assert e.handle("kgs-time_settings byoyomi 0 5 3") == "= \n\n"
    e.handle("time_left b 5 2")
    e.handle("genmove b")
    assert player.move_time == pytest.approx(4.0)


# --- kata-analyze with a network that predicts ownership and score ------------------


@pytest.fixture(scope="module")
def headed_model(tmp_path_factory):
    from harness.features import get_encoder
    from harness.nets import build_model, save_model

    model = build_model("a0.tiny.own.score", 9, get_encoder("agz17").planes, seed=5)
    path = tmp_path_factory.mktemp("nets") / "headed.keras"
    save_model(model, path)
    return path


def test_kata_analyze_reports_score_lead_and_81_ownership_values(headed_model):
    player = MCTSPlayer(headed_model, playouts=32, encoder="agz17", seed=0)
    e = GTPEngine(player, size=9, komi=7.5)
    e.handle("play b e5")
    answer = e.handle("kata-analyze 5 ownership true minmoves 2")
    first, line, *rest = answer.split("\n")
    assert first == "=" and rest == ["", ""]
    variations, ownership = sabaki_parse(line)
    assert len(ownership) == 81 and all(-1 <= x <= 1 for x in ownership)
    assert len(variations) >= 2
    for v in variations:
        assert set(v) == KATA_KEYS
        assert 0.0 <= float(v["winrate"]) <= 1.0 and 0.0 <= float(v["prior"]) <= 1.0
        assert float(v["scoreLead"]) == float(v["scoreMean"])
    # The ownership is the network's own head, from White's (the mover's) view.
    from harness.gtp.analyzer import NetworkHeads

    heads = NetworkHeads(player, "superko")([e.game])
    assert np.allclose(ownership, heads["ownership"][0], atol=1e-5)
    menu = e.handle("gogui-analyze_commands")
    assert "gfx/Ownership heat map/harness-ownership_heatmap" in menu
    assert e.handle("harness-ownership_heatmap").startswith("= INFLUENCE A9 ")
