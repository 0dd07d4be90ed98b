"""GTP analysis extensions: exact lines in the formats Leela Zero and KataGo
document, parsed back the way Sabaki parses them, streamed to a scripted
client over real pipes, and the GoGui heat maps.

Format reference: KataGo ``docs/GTP_Extensions.md`` (lz-analyze: integers
0..10000; kata-analyze: floats 0..1, ``scoreLead``, ``ownership`` row by row
from A19 to T1, side to move's view).
"""

from __future__ import annotations

import io
import os
import threading

import numpy as np
import pytest
from sabaki_lines import LZ_KEYS, VERTEX, sabaki_parse, sabaki_winrate

from harness.game.geometry import BLACK, WHITE, gtp_to_point
from harness.gtp.analysis import (
    AnalyzeError,
    AnalyzeRequest,
    MoveInfo,
    Snapshot,
    candidates,
    kata_line,
    lz_line,
    parse_analyze_args,
    winrate_lcb,
)
from harness.gtp.engine import GTPEngine, serve
from harness.gtp.gogui import analyze_commands, ownership_gfx, policy_gfx
from harness.players.mcts import MCTSPlayer
from harness.players.scripted import ScriptedPlayer
from harness.search.oracle import OracleEvaluator


def oracle_player(playouts: int = 64) -> MCTSPlayer:
    evaluator = OracleEvaluator(9, value="area", priors="pattern", komi=7.5)
    return MCTSPlayer(evaluator=evaluator, playouts=playouts, seed=1)


# --- the text formats ------------------------------------------------------


def snapshot_5x5() -> Snapshot:
    moves = (
        MoveInfo(gtp_to_point("C3", 5), 120, 0.61234, 0.40, winrate_lcb(0.61234, 120), 0,
                 (gtp_to_point("C3", 5), gtp_to_point("B2", 5), 25), score_lead=2.5),
        MoveInfo(gtp_to_point("D4", 5), 30, 0.5, 0.2, winrate_lcb(0.5, 30), 1,
                 (gtp_to_point("D4", 5),), score_lead=-0.75),
    )
    ownership = np.linspace(-1, 1, 25)
    return Snapshot(5, moves, ownership)


def test_lz_analyze_line_matches_the_documented_format_exactly():
    # lcb = 0.61234 - 1.96 * sqrt(0.61234 * 0.38766 / 120) = 0.525166...
    # and 0.5 - 1.96 * sqrt(0.25 / 30) = 0.321077...
    assert lz_line(snapshot_5x5()) == (
        "info move C3 visits 120 winrate 6123 prior 4000 lcb 5252 order 0 pv C3 B2 pass "
        "info move D4 visits 30 winrate 5000 prior 2000 lcb 3211 order 1 pv D4"
    )


def test_kata_analyze_line_has_floats_score_lead_and_ownership_from_a19_to_t1():
    line = kata_line(snapshot_5x5(), ownership=True)
    assert line.startswith(
        "info move C3 visits 120 winrate 0.61234 scoreMean 2.5 scoreLead 2.5 prior 0.4 "
        "lcb 0.525166 order 0 pv C3 B2 pass info move D4 visits 30 winrate 0.5 "
        "scoreMean -0.75 scoreLead -0.75 prior 0.2 lcb 0.321077 order 1 pv D4 ownership -1.0 "
    )
    variations, ownership = sabaki_parse(line)
    assert len(ownership) == 25
    assert ownership[0] == -1.0 and ownership[-1] == 1.0  # first A5 (top-left), last E1
    assert [v["move"] for v in variations] == ["C3", "D4"]
    assert kata_line(snapshot_5x5(), ownership=False).endswith("order 1 pv D4")


def test_kata_analyze_values_always_carry_a_decimal_point():
    """Issue 41: a certain win printed ``winrate 1``, which Sabaki reads as 0.01%."""
    certain = MoveInfo(gtp_to_point("C3", 5), 50, 1.0, 1.0, 1.0, 0, (gtp_to_point("C3", 5),),
                       score_lead=3.0)
    tiny = MoveInfo(gtp_to_point("D4", 5), 0, 0.0, 1e-7, 0.0, 1, (gtp_to_point("D4", 5),),
                    score_lead=-0.0)
    line = kata_line(Snapshot(5, (certain, tiny), np.array([1.0, -1.0, 0.0] + [0.5] * 22)),
                     ownership=True)
    assert line == (
        "info move C3 visits 50 winrate 1.0 scoreMean 3.0 scoreLead 3.0 prior 1.0 lcb 1.0 "
        "order 0 pv C3 info move D4 visits 0 winrate 0.0 scoreMean 0.0 scoreLead 0.0 "
        "prior 0.0 lcb 0.0 order 1 pv D4 ownership 1.0 -1.0 0.0" + " 0.5" * 22
    )
    variations, _ = sabaki_parse(line)
    assert sabaki_winrate(variations[0]["winrate"]) == 100.0


def test_lcb_is_zero_below_two_visits_and_below_the_winrate_above():
    assert winrate_lcb(0.7, 1) == 0.0
    assert winrate_lcb(0.5, 100) == pytest.approx(0.5 - 1.96 * 0.05)
    assert winrate_lcb(1.0, 10) == 1.0


def test_candidates_put_the_engines_choice_first_then_visits_then_priors():
    visits = np.array([5, 9, 0, 0, 2])
    q = np.array([0.2, -0.1, np.nan, np.nan, 0.9])
    prior = np.array([0.1, 0.3, 0.4, 0.05, 0.15])
    rows = candidates(visits, q, prior, root_value=0.0, best=0, minmoves=4)
    assert [r[0] for r in rows] == [0, 1, 4, 2]
    assert rows[0] == (0, 5, pytest.approx(0.6), pytest.approx(0.1))
    assert rows[3] == (2, 0, 0.5, pytest.approx(0.4))  # unvisited: the root's winrate
    assert [r[0] for r in candidates(visits, q, prior, 0.0, 0, maxmoves=2)] == [0, 1]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], AnalyzeRequest()),
        (["50"], AnalyzeRequest(interval=50)),
        (["B", "50"], AnalyzeRequest(color=BLACK, interval=50)),
        (["white", "interval", "25", "minmoves", "3"],
         AnalyzeRequest(color=WHITE, interval=25, minmoves=3)),
        (["10", "ownership", "true", "maxmoves", "4"],
         AnalyzeRequest(interval=10, ownership=True, maxmoves=4)),
        (["b", "50", "pvVisits", "true", "rootInfo", "true"],
         AnalyzeRequest(color=BLACK, interval=50)),  # fields we cannot give are left out
    ],
)
def test_analyze_arguments_are_read_as_katago_documents(args, expected):
    assert parse_analyze_args(args) == expected


@pytest.mark.parametrize(
    "args",
    [["50", "minmoves"], ["avoid", "b", "d4", "1"], ["10", "allow", "w", "q16,d4", "5"], ["-5"],
     ["nan"], ["10", "ownership", "x"], ["10", "frobnicate", "1"]],
)
def test_bad_analyze_arguments_are_refused(args):
    with pytest.raises(AnalyzeError):
        parse_analyze_args(args)


# --- the engine answers --------------------------------------------------------


def test_lz_analyze_without_a_live_client_answers_one_interval_in_the_documented_form():
    engine = GTPEngine(oracle_player(), size=9, komi=7.5)
    engine.handle("play b e5")
    answer = engine.handle("7 lz-analyze w 5")
    first, line, *rest = answer.split("\n")
    assert first == "=7" and rest == ["", ""]
    variations, ownership = sabaki_parse(line)
    assert ownership is None and variations
    assert [int(v["order"]) for v in variations] == list(range(len(variations)))
    for v in variations:
        assert set(v) == LZ_KEYS
        assert VERTEX.match(v["move"]) and v["pv"][0] == v["move"]
        assert all(VERTEX.match(m) for m in v["pv"])
        assert 0 <= int(v["winrate"]) <= 10000 and 0 <= int(v["prior"]) <= 10000
        assert 0 <= int(v["lcb"]) <= int(v["winrate"])
        assert int(v["visits"]) >= 1
        assert engine.game.is_legal(gtp_to_point(v["move"], 9))
    visits = [int(v["visits"]) for v in variations]
    assert visits[1:] == sorted(visits[1:], reverse=True)


def test_genmove_analyze_prints_info_lines_then_play_and_plays_the_move():
    engine = GTPEngine(oracle_player(playouts=48), size=9, komi=7.5)
    answer = engine.handle("lz-genmove_analyze b 1")
    lines = answer.split("\n")
    assert lines[0] == "=" and lines[-2:] == ["", ""]
    assert all(line.startswith("info move ") for line in lines[1:-3])
    assert len(lines) > 4
    played = lines[-3].removeprefix("play ")
    assert lines[-3].startswith("play ") and VERTEX.match(played)
    assert engine.game.moves == [(BLACK, gtp_to_point(played, 9))]


def test_analysis_commands_are_listed_only_for_players_with_a_search():
    searching = GTPEngine(oracle_player(), size=9).handle("list_commands")
    plain = GTPEngine(ScriptedPlayer([], name="s"), size=9).handle("list_commands")
    for command in ("lz-analyze", "kata-analyze", "lz-genmove_analyze", "gogui-analyze_commands"):
        assert command in searching.split() and command not in plain.split()
    assert "loadsgf" in plain.split() and "fixed_handicap" in plain.split()


def test_bad_analyze_arguments_are_a_gtp_error_and_nothing_is_streamed():
    engine = GTPEngine(oracle_player(), size=9)
    answer = engine.handle("3 lz-analyze 10 avoid b d4")
    assert answer == "?3 unsupported analysis option 'avoid'\n\n"


# --- streaming to a scripted client over real pipes ------------------------------


class PipeClient:
    """Drive :func:`serve` through OS pipes, as a GUI drives a subprocess."""

    def __init__(self, engine: GTPEngine):
        to_engine_r, self._to_engine_w = os.pipe()
        from_engine_r, from_engine_w = os.pipe()
        self._stdin = io.TextIOWrapper(io.FileIO(to_engine_r, "r"), encoding="utf-8")
        self._stdout = io.TextIOWrapper(io.FileIO(from_engine_w, "w"), encoding="utf-8")
        self._writer = io.TextIOWrapper(io.FileIO(self._to_engine_w, "w"), encoding="utf-8")
        self._reader = io.TextIOWrapper(io.FileIO(from_engine_r, "r"), encoding="utf-8")
        self.thread = threading.Thread(target=serve, args=(engine, self._stdin, self._stdout))
        self.thread.start()

    def send(self, command: str) -> None:
        self._writer.write(command + "\n")
        self._writer.flush()

    def readline(self) -> str:
        return self._reader.readline()

    def close(self) -> None:
        self.send("quit")
        self.thread.join(timeout=30)
        for f in (self._writer, self._reader, self._stdin, self._stdout):
            f.close()


def test_lz_analyze_streams_until_the_next_command_which_is_then_answered():
    client = PipeClient(GTPEngine(oracle_player(), size=9, komi=7.5))
    try:
        client.send("play b e5")
        assert client.readline() == "= \n" and client.readline() == "\n"
        client.send("lz-analyze 10")
        assert client.readline() == "=\n"
        infos = [client.readline() for _ in range(4)]
        for line in infos:
            variations, _ = sabaki_parse(line)
            assert variations and all(set(v) == LZ_KEYS for v in variations)
        client.send("2 name")
        # The analysis ends with its blank line (after any line already in
        # flight), then the next command is answered.
        line = client.readline()
        while line != "\n":
            assert line.startswith("info move ")
            line = client.readline()
        assert client.readline() == "=2 harness\n" and client.readline() == "\n"
        totals = [sum(int(v["visits"]) for v in sabaki_parse(x)[0]) for x in infos]
        assert totals == sorted(totals) and totals[-1] > totals[0]  # the search grew
    finally:
        client.close()
    assert not client.thread.is_alive()


# --- GoGui -------------------------------------------------------------------------


def test_gogui_menu_and_policy_heat_map_text():
    assert analyze_commands(ownership=False) == "gfx/Policy heat map/harness-policy_heatmap"
    assert analyze_commands(ownership=True).split("\n")[1] == (
        "gfx/Ownership heat map/harness-ownership_heatmap"
    )
    policy = np.zeros(26)
    policy[[0, 12, 24]] = [0.5, 0.3, 0.005]  # A5, C3, E1 on 5x5: levels 8, 4.8 and 0.08 of 8
    policy[25] = 0.195
    assert policy_gfx(policy, 5) == (
        "COLOR #fff5cc E1\nCOLOR #ff6619 C3\nCOLOR #a00000 A5\n"
        "LABEL A5 50 C3 30\nTEXT pass 19.5%"
    )


def test_gogui_ownership_is_shown_from_blacks_view():
    own = np.zeros(25)
    own[0], own[24] = 1.0, -0.5  # side to move owns A5, the opponent half of E1
    text = ownership_gfx(own, WHITE, 5)
    influence, status = text.split("\n")
    assert influence.startswith("INFLUENCE A5 -1.00 B5 0.00 ")
    assert influence.endswith(" E1 0.50")
    assert status == "TEXT black area margin -0.5 (before komi)"


def test_policy_heat_map_from_the_engine_labels_the_best_prior():
    engine = GTPEngine(oracle_player(), size=9)
    answer = engine.handle("harness-policy_heatmap")
    assert answer.startswith("= COLOR #") and answer.endswith("\n\n")
    labels = next(line for line in answer.split("\n") if line.startswith("LABEL "))
    assert VERTEX.match(labels.split()[1])


def test_genmove_analyze_honours_the_clock_like_genmove():
    player = oracle_player(playouts=10_000)
    engine = GTPEngine(player, size=9, komi=7.5)
    engine.handle("time_settings 0 1 1")
    engine.handle("time_left b 0.1 1")  # byo-yomi: 0.1 s for this move, 0.8 of it spent
    answer = engine.handle("kata-genmove_analyze b 2")
    assert answer.split("\n")[-3].startswith("play ")
    assert player.move_time == pytest.approx(0.08)
    assert len(engine.game.moves) == 1


def test_a_passed_out_game_is_still_analysed_for_dead_stone_cleanup():
    engine = GTPEngine(oracle_player(), size=9, komi=7.5)
    for command in ("play b e5", "play w pass", "play b pass"):
        engine.handle(command)
    first, line, *rest = engine.handle("lz-analyze w 5").split("\n")
    assert first == "=" and rest == ["", ""]
    assert sabaki_parse(line)[0]


def test_end_of_input_during_analysis_ends_the_answer_and_the_engine():
    client = PipeClient(GTPEngine(oracle_player(), size=9, komi=7.5))
    client.send("lz-analyze 5")
    assert client.readline() == "=\n"
    assert client.readline().startswith("info move ")
    client._writer.close()  # the GUI went away
    client.thread.join(timeout=30)
    assert not client.thread.is_alive()
    client._stdout.close()  # the engine's end of its output pipe: read() sees EOF
    rest = client._reader.read()
    assert rest.endswith("\n\n") and all(
        line.startswith("info move ") for line in rest.split("\n")[:-2]
    )
    for f in (client._reader, client._stdin):
        f.close()
