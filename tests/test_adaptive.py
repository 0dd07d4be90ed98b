"""Adaptive tournaments: which pairs play the next round, why play stops, and a
killed tournament that resumes to the same games and the same decisions."""

import json
import random
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from harness.arena.adaptive import next_round
from harness.arena.games import RESULTS_FILE, TIMING_FIELDS, latest_rows, read_results
from harness.arena.ratings import Outcome
from harness.arena.tournament import TournamentConfig, pair_counts, run_tournament


def config(tmp_path, players=("a=random", "b=random", "c=random"), **kw) -> TournamentConfig:
    values = dict(players=list(players), out=str(tmp_path / "t"), board_size=7, komi=7.5,
                  opening_moves=2, seed=3, until_separated=True)
    values.update(kw)
    return TournamentConfig(**values)


def games(x: str, y: str, x_points: int, total: int) -> list[Outcome]:
    """``total`` games of x against y, colours alternating, x winning the first ``x_points``."""
    out = []
    for k in range(total):
        score = 1.0 if k < x_points else 0.0
        out.append(Outcome(x, y, score) if k % 2 == 0 else Outcome(y, x, 1 - score))
    return out


def counts(outcomes, names=("a", "b", "c")):
    found = {}
    for g in outcomes:
        pair = tuple(sorted((names.index(g.black), names.index(g.white))))
        found[pair] = found.get(pair, 0) + 1
    return found


# a beat b and c 8-0; b and c split 3-3: only the b-c boundary is open.
OPEN_BC = games("a", "b", 8, 8) + games("a", "c", 8, 8) + games("b", "c", 3, 6)


def test_the_next_round_plays_only_the_unresolved_neighbours(tmp_path):
    decision = next_round(config(tmp_path), OPEN_BC, counts(OPEN_BC))
    assert decision.status == "playing"
    assert decision.pairs == ((1, 2),)  # b-c
    (open_pair,) = decision.unresolved
    assert {open_pair.higher, open_pair.lower} == {"b", "c"}
    assert open_pair.los == pytest.approx(0.5, abs=0.01) and open_pair.games == 6


def test_a_pair_at_its_cap_or_a_full_tournament_stops_play(tmp_path):
    at_cap = next_round(config(tmp_path, max_games_per_pair=6), OPEN_BC, counts(OPEN_BC))
    assert (at_cap.pairs, at_cap.status) == ((), "pair cap")
    assert len(at_cap.unresolved) == 1  # still listed, with its LOS
    full = next_round(config(tmp_path, max_games=23), OPEN_BC, counts(OPEN_BC))  # 22 played
    assert (full.pairs, full.status) == ((), "game cap")
    room = next_round(config(tmp_path, max_games=24), OPEN_BC, counts(OPEN_BC))
    assert room.pairs == ((1, 2),)


def test_a_separated_ranking_stops_play(tmp_path):
    # a > b > c, every pair 8-0 (LOS of 8-0 against one opponent is 0.98 alone).
    separated = games("a", "b", 8, 8) + games("b", "c", 8, 8) + games("a", "c", 8, 8)
    decision = next_round(config(tmp_path), separated, counts(separated))
    assert (decision.pairs, decision.status, decision.unresolved) == ((), "separated", ())


def test_a_fixed_tournament_reports_its_open_pairs_but_plays_no_more(tmp_path):
    decision = next_round(config(tmp_path, until_separated=False), OPEN_BC, counts(OPEN_BC))
    assert (decision.pairs, decision.status) == ((), "round robin")
    assert len(decision.unresolved) == 1


def test_sprt_match_stops_at_its_bounds(tmp_path):
    def match(first_points, total):
        c = config(tmp_path, players=("a=random", "b=random"), until_separated=False,
                   sprt={"elo0": 0, "elo1": 200})
        outcomes = games("a", "b", first_points, total)
        return next_round(c, outcomes, counts(outcomes, ("a", "b")))

    passed = match(9, 10)  # LLR 3.03 >= log(19) = 2.94
    assert (passed.pairs, passed.status) == ((), "sprt H1")
    assert (passed.sprt.wins, passed.sprt.draws, passed.sprt.losses) == (9, 0, 1)
    assert match(1, 10).status == "sprt H0"
    going_on = match(8, 10)  # LLR 1.88
    assert going_on.pairs == ((0, 1),) and going_on.sprt.decision is None


def test_bad_adaptive_settings_are_refused(tmp_path):
    with pytest.raises(ValueError, match="los"):
        config(tmp_path, los=0.4)
    with pytest.raises(ValueError, match="two players"):
        config(tmp_path, until_separated=False, sprt={"elo0": 0, "elo1": 35})
    with pytest.raises(ValueError, match="elo1 > elo0"):
        config(tmp_path, players=("a=random", "b=random"), until_separated=False,
               sprt={"elo0": 35, "elo1": 0})
    with pytest.raises(ValueError, match="max_games_per_pair"):
        config(tmp_path, games_per_pair=4, max_games_per_pair=2)


def test_command_line_flags_make_an_adaptive_config(tmp_path):
    import argparse

    from harness.commands.tournament import add_arguments, config_from_args

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["random", "uct:10", "--until-separated", "--los", "0.9",
                              "--round-games", "4", "--max-games-per-pair", "40",
                              "--max-games", "200", "-o", str(tmp_path / "t")])
    c = config_from_args(args)
    assert (c.until_separated, c.los, c.round_games, c.max_games_per_pair, c.max_games) == (
        True, 0.9, 4, 40, 200)
    sprt = config_from_args(parser.parse_args(["random", "uct:10", "--sprt", "elo0=0,elo1=35",
                                               "-o", str(tmp_path / "s")]))
    assert sprt.sprt == {"elo0": 0.0, "elo1": 35.0} and sprt.adaptive


def rows_without_timing(out):
    """The game rows on disk by id, without their timing (a torn line is skipped)."""
    rows = latest_rows(read_results(out))
    return {row.game_id: {k: v for k, v in asdict(row).items() if k not in TIMING_FIELDS}
            for row in rows}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """Three random players: every pair stays a coin flip, so play goes on to the cap.

    (A pool of worker processes kept across rounds is exercised, against Ray,
    by the slow test in test_adaptive_ray.py.)
    """
    tmp = tmp_path_factory.mktemp("adaptive")
    c = config(tmp, max_games_per_pair=8, round_games=2, games_per_pair=2)
    rows = run_tournament(c, progress=False)
    return c, rows


def test_an_adaptive_tournament_plays_rounds_until_its_caps(finished):
    c, rows = finished
    summary = json.loads((Path(c.out) / "summary.json").read_text())
    assert summary["stopped"] in ("pair cap", "separated")
    per_pair = pair_counts(c, rows)
    assert all(2 <= n <= 8 for n in per_pair.values()) and sum(per_pair.values()) == len(rows)
    # Every pair left unresolved has used its whole cap; the others were separated.
    for _higher, _lower, los, played in summary["unresolved"]:
        assert los < 0.95 and played == 8
    assert sum(per_pair.values()) > 6  # more than the first round was played
    ranking = (Path(c.out) / "ranking.md").read_text()
    assert "| Elo " in ranking and "win rate (%)" in ranking and "e-" not in ranking
    assert (Path(c.out) / "unresolved.md").exists()


def test_a_killed_adaptive_tournament_resumes_to_the_same_games(finished, tmp_path):
    c, rows = finished
    out = Path(c.out)
    lines = (out / RESULTS_FILE).read_text().splitlines()
    # Killed in a later round: keep the first round and part of the next, shuffled
    # (results arrive in any order), and a torn last line.
    kept = lines[: len(lines) - 3]
    random.Random(0).shuffle(kept)
    again = tmp_path / "t"
    again.mkdir()
    (again / RESULTS_FILE).write_text("\n".join(kept) + "\n" + lines[-3][:25])
    resumed = TournamentConfig(**{**c.__dict__, "out": str(again)})
    run_tournament(resumed, progress=False)
    assert rows_without_timing(again) == rows_without_timing(out)
    assert len(read_results(again)) == len(rows)
    assert (again / "summary.json").read_text() == (out / "summary.json").read_text()
    assert (again / "ranking.csv").read_text() == (out / "ranking.csv").read_text()


def test_an_sprt_match_between_equals_accepts_h0(tmp_path):
    c = config(tmp_path, players=("a=random", "b=random"), until_separated=False,
               sprt={"elo0": 0, "elo1": 200}, max_games_per_pair=60)
    rows = run_tournament(c, progress=False)
    summary = json.loads((tmp_path / "t" / "summary.json").read_text())
    sprt = summary["sprt"]
    assert summary["stopped"] == "sprt H0" and sprt["decision"] == "H0"
    a_points = [r.score if r.black == "a" else 1 - r.score for r in rows]
    wins, losses = a_points.count(1.0), a_points.count(0.0)
    assert (sprt["wins"], sprt["draws"], sprt["losses"]) == (wins, 0, losses)
    # Binomial SPRT by hand: each win adds ln(0.759747 / 0.5), each loss ln(0.240253 / 0.5).
    by_hand = wins * 0.418377 + losses * -0.732916
    assert sprt["llr"] == pytest.approx(by_hand, abs=0.01) and by_hand <= -2.9
    # It stopped at the first round that crossed: two games earlier it had not.
    last_two = a_points[-2:]
    before = by_hand - last_two.count(1.0) * 0.418377 + last_two.count(0.0) * 0.732916
    assert before > -2.95


def test_gating_by_sprt_stops_when_the_test_decides():
    from harness.rl.config import GatingConfig
    from harness.rl.gating import MatchResult, gate_sprt, passes, play_match
    from harness.search.oracle import OracleEvaluator

    gating = GatingConfig(enabled=True, games=40, sprt=True, elo0=0, elo1=200)
    assert passes(MatchResult(games=10, wins=9, moves=0), gating)  # LLR 3.03: H1
    assert not passes(MatchResult(games=10, wins=8, moves=0), gating)  # 1.88: no decision
    assert passes(MatchResult(games=10, wins=8, moves=0), GatingConfig(threshold=0.55))

    def strong():
        return OracleEvaluator(5, value="area", komi=0.5)

    def weak():
        return OracleEvaluator(5, value="zero")

    kw = {"size": 5, "komi": 0.5, "rules": "superko", "playouts": 24, "parallel": 4,
          "sprt": gate_sprt(gating)}
    ahead = play_match(strong(), weak(), 40, seed=1, **kw)
    assert ahead.games < 40 and passes(ahead, gating)
    assert gate_sprt(gating).decide(*ahead.record) == "H1"
    behind = play_match(weak(), strong(), 40, seed=1, **kw)
    assert behind.games < 40 and gate_sprt(gating).decide(*behind.record) == "H0"
    assert not passes(behind, gating)


def test_gating_sprt_options_in_an_rl_config():
    from harness.config_io import ConfigError, from_mapping
    from harness.rl.config import RLConfig

    rl = from_mapping(RLConfig, {"run": "x", "gating": {"enabled": True, "sprt": True, "elo1": 50,
                                                     "games": 400}}, "t.toml")
    assert (rl.gating.sprt, rl.gating.elo0, rl.gating.elo1, rl.gating.alpha) == (
        True, 0.0, 50.0, 0.05)
    with pytest.raises(ConfigError, match="elo1 > elo0"):
        from_mapping(RLConfig, {"run": "x", "gating": {"sprt": True, "elo0": 10, "elo1": 5}}, "t")


def simulated_adaptive_tournament(rng, elo, c):
    """Drive :func:`next_round` with games drawn from the logistic model at known
    ratings, as :func:`run_tournament` drives it with real games."""
    names = [name for name, _ in c.named_players()]
    outcomes, played = [], {}
    todo = {(i, j): (0, c.games_per_pair) for i in range(len(names))
            for j in range(i + 1, len(names))}
    while todo:
        for (i, j), (start, stop) in todo.items():
            p_i = 1 / (1 + 10 ** ((elo[j] - elo[i]) / 400))
            for k in range(start, stop):
                i_won = float(rng.random() < p_i)
                outcomes.append(Outcome(names[i], names[j], i_won) if k % 2 == 0
                                else Outcome(names[j], names[i], 1 - i_won))
            played[i, j] = stop
        decision = next_round(c, outcomes, played)
        todo = {pair: (played[pair], min(played[pair] + c.round_games, c.max_games_per_pair))
                for pair in decision.pairs}
    return decision, outcomes


def test_on_players_100_elo_apart_the_rounds_find_the_true_order():
    """Four players at 0, 100, 200, 300 Elo, 100 simulated tournaments. Measured
    at seed 7: all but one separated, the true order every time, 129 games on
    average (a fixed round robin of 20 games per pair, 120 games, separates
    every neighbour in 4% of runs; of 40 per pair, 240 games, in 44%)."""
    from harness.arena.ratings import bradley_terry

    c = TournamentConfig(players=[f"p{i}=random" for i in range(4)], until_separated=True,
                         games_per_pair=2, round_games=2, max_games_per_pair=200)
    rng = np.random.default_rng(7)
    separated = true_order = games_played = 0
    for _ in range(100):
        decision, outcomes = simulated_adaptive_tournament(rng, [0, 100, 200, 300], c)
        ratings = bradley_terry(outcomes, ["p0", "p1", "p2", "p3"])
        separated += decision.status == "separated"
        true_order += ratings.ranking() == [3, 2, 1, 0]
        games_played += len(outcomes)
    assert separated >= 95 and true_order >= 93
    assert games_played / 100 < 180
