"""A self-play frontier's pieces, each a known input and its known answer: which
generation stands for a savepoint, the pooled rating with its fixed anchor,
which pairs the next round plays and when play stops, the exchange rate of
training compute for search, and the configs it refuses."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from harness.arena.ratings import Outcome, Ratings
from harness.config_io import ConfigError
from harness.frontier.config import FrontierConfig, RatingSettings, load_frontier_config
from harness.frontier.rating import PoolRating, next_round, pool_rating
from harness.frontier.selfplay_runs import select_generations
from harness.report.search_table import PlayoutCell, exchange_sentence, playouts_table
from harness.stats.exchange import Observation, exchange_rate, within_slope

# --- savepoints from a run's per-generation compute ------------------------------------


def test_a_savepoint_is_the_first_generation_at_or_past_it():
    # cumulative training + self-play FLOPs of generations 0..4
    flops = [0, 100, 250, 600, 1200]
    assert select_generations(flops, [100, 200, 1000]) == [1, 2, 4]
    # two savepoints inside one generation's step share its checkpoint
    assert select_generations(flops, [300, 500, 600]) == [3, 3, 3]
    assert select_generations(flops, [1]) == [1]  # generation 0 (no compute) never stands


def test_a_savepoint_past_the_run_or_a_falling_compute_is_refused():
    with pytest.raises(ValueError, match="past the run's last generation"):
        select_generations([0, 100, 250], [300])
    with pytest.raises(ValueError, match="cannot fall"):
        select_generations([0, 100, 90], [50])


# --- the pooled rating ------------------------------------------------------------------


def games(a: str, b: str, a_wins: int, b_wins: int) -> list[Outcome]:
    """``a_wins`` + ``b_wins`` games, colours alternating."""
    out = []
    for k in range(a_wins + b_wins):
        a_won = k < a_wins
        black, white = (a, b) if k % 2 == 0 else (b, a)
        out.append(Outcome(black, white, 1.0 if (black == a) == a_won else 0.0))
    return out


def test_the_fixed_anchor_is_at_its_elo_and_a_75_percent_score_is_191_elo_above_it():
    outcomes = games("A", "random", 300, 100)
    rating = pool_rating(outcomes, ["random", "A"], "random")
    elo, low, high = rating.of("random")
    assert (elo, low, high) == (0.0, 0.0, 0.0)  # fixed: no width of its own
    elo, low, high = rating.of("A")
    assert elo == pytest.approx(400 * math.log10(3), abs=3)  # 190.8; the prior barely moves it
    # Fisher information of 400 games at p = 0.75: se = 1 / sqrt(400 * 0.75 * 0.25) nats
    half = 1.96 * 400 / math.log(10) / math.sqrt(400 * 0.75 * 0.25)
    assert (high - low) / 2 == pytest.approx(half, rel=0.02)
    # another anchor Elo shifts every rating by as much and changes no width
    shifted = pool_rating(outcomes, ["random", "A"], "random", anchor_elo=-500.0)
    assert shifted.of("A") == pytest.approx((elo - 500, low - 500, high - 500))


def test_games_of_players_the_study_no_longer_has_are_left_out():
    outcomes = games("A", "random", 3, 1) + games("gone", "A", 4, 0)
    assert pool_rating(outcomes, ["random", "A"], "random").of("A") == \
        pool_rating(games("A", "random", 3, 1), ["random", "A"], "random").of("A")


def rating_of(elo: dict[str, float], half: dict[str, float]) -> PoolRating:
    """A rating with the given Elos and 95% half-widths (independent errors)."""
    names = list(elo)
    se = np.array([half[n] for n in names]) / 1.959963984540054
    return PoolRating(Ratings(names, np.array([elo[n] for n in names]), np.diag(se ** 2), None))


RATING = rating_of({"random": 0, "a": 100, "b": 300, "c": 310},
                   {"random": 0, "a": 39, "b": 157, "c": 20})


def test_a_round_pairs_neighbours_of_the_rating_order_whose_intervals_are_too_wide():
    # order c, b, a, random: c-b and b-a have b's 157 Elo; a-random only a's 39
    plan = next_round(RATING, target=50, played=0, max_games=100, pair_games=2)
    assert plan.status == "playing"
    assert plan.pairs == (("c", "b"), ("b", "a"))
    # a stricter target reaches a-random too; pairs are never far apart in the order
    plan = next_round(RATING, target=30, played=0, max_games=100, pair_games=2)
    assert set(plan.pairs) == {("c", "b"), ("b", "a"), ("a", "random")}


def test_play_stops_at_the_target_or_the_games_cap_and_a_cut_round_keeps_the_widest():
    assert next_round(RATING, target=200, played=0, max_games=100, pair_games=2).status == \
        "target"
    assert next_round(RATING, target=50, played=100, max_games=100, pair_games=2).status == \
        "game cap"
    plan = next_round(RATING, target=30, played=97, max_games=100, pair_games=2)
    assert plan.pairs == (("c", "b"),)  # room for one pair: a widest one, b's


# --- the exchange rate of training compute for search ------------------------------------


def test_the_within_model_slope_ignores_each_models_level():
    obs = [Observation(0, "A", 0.0), Observation(1, "A", 1.0),
           Observation(2, "B", 0.0), Observation(3, "B", 1.0)]
    assert within_slope(obs, np.array([0.0, 10.0, 100.0, 110.0])) == pytest.approx([10.0])


def test_200_elo_per_decade_of_compute_and_100_per_decade_of_playouts_trade_10x_for_100x():
    # players: A at 1e9 and 1e10 FLOPs (100, 300 Elo), A's last at 1, 10 and 100 playouts
    elo = np.array([100.0, 300.0, 200.0, 300.0, 400.0])
    train = [Observation(0, "A", 9.0), Observation(1, "A", 10.0)]
    search = [Observation(i, "A", math.log10(p)) for i, p in zip((2, 3, 4), (1, 10, 100),
                                                                  strict=True)]
    rate = exchange_rate(elo, np.eye(5), train, search)
    assert rate.reason == ""
    assert rate.train_slope.value == pytest.approx(200) and rate.search_slope.value == \
        pytest.approx(100)
    assert rate.factor.value == pytest.approx(100)
    assert rate.factor.low < 100 < rate.factor.high < 110
    assert "10x training compute is worth about 100x playouts" in exchange_sentence(rate)


def test_a_slope_not_separated_from_zero_leaves_the_rate_not_estimable():
    elo = np.array([100.0, 110.0, 200.0, 300.0, 400.0])  # 10 Elo per decade, se 100
    train = [Observation(0, "A", 9.0), Observation(1, "A", 10.0)]
    search = [Observation(i, "A", float(i - 2)) for i in (2, 3, 4)]
    rate = exchange_rate(elo, np.eye(5) * 100.0 ** 2, train, search)
    assert rate.factor is None and "training compute is not separated from zero" in rate.reason
    one_budget = exchange_rate(elo, np.eye(5), train, [Observation(2, "A", 0.0)])
    assert one_budget.factor is None and "fewer than two playouts" in one_budget.reason
    assert "not estimable" in exchange_sentence(one_budget)


def test_the_test_time_table_is_networks_by_playouts():
    cells = [PlayoutCell("a0.tiny gen 4", 1.3e9, p, e, e - 50, e + 50)
             for p, e in ((1, 60.0), (4, 205.6))]
    header, _, row = ([c.strip() for c in line.split("|")[1:-1]]
                      for line in playouts_table(cells).splitlines())
    assert header == ["network", "FLOPs", "1 playouts", "4 playouts"]
    assert row == ["a0.tiny gen 4", "1.3e9", "60 [10, 110]", "206 [156, 256]"]


# --- configs -----------------------------------------------------------------------------


def selfplay(**changes) -> FrontierConfig:
    return FrontierConfig(**{"kind": "selfplay", "models": ["a0.tiny"], "min_flops": 1e8,
                             "max_flops": 1e9, **changes})


@pytest.mark.parametrize(("changes", "message"), [
    ({"lr": 0.01}, "lr is a supervised study's setting; a self-play study trains as its [rl]"),
    ({"data": "d.h5"}, "data is a supervised study's setting"),
    ({"savepoints": "cooldown"}, "savepoints: a self-play study's savepoints are its runs' "
                                 "generation checkpoints"),
    ({"metrics": ("policy_top1",)}, "a self-play study rates its savepoints in 'elo'"),
])
def test_a_self_play_study_refuses_what_only_supervised_studies_have(changes, message):
    with pytest.raises(ConfigError, match=None) as e:
        selfplay(**changes)
    assert message in str(e.value)


def test_a_self_play_study_has_no_data_and_rates_in_elo():
    c = selfplay()
    assert c.study_metrics == ("elo",) and c.rating.anchors == ["random", "gnugo:1"]
    assert selfplay(metrics=("elo",)).study_metrics == ("elo",)


@pytest.mark.parametrize(("values", "message"), [
    ({"anchors": []}, "anchors is empty"),
    ({"anchors": ["random", "random"]}, "anchors must be distinct"),
    ({"anchors": ["policy:net.keras"]}, "is a network; anchors are fixed players"),
    ({"anchors": ["nosuch:3"]}, "rating: anchor"),
    ({"eval_playouts": 0}, "eval_playouts and every test_playouts must be at least 1"),
    ({"test_playouts": [4, 4]}, "test_playouts must be distinct"),
    ({"target_halfwidth": 0.0}, "target_halfwidth must be a positive number"),
    ({"max_rating_games": 0}, "round_pair_games and max_rating_games must be at least 1"),
])
def test_bad_rating_settings_are_one_line(values, message):
    with pytest.raises(ConfigError) as e:
        RatingSettings(**values)
    assert message in str(e.value)


def write(folder: Path, text: str) -> Path:
    path = folder / "study.toml"
    path.write_text(text)
    return path


STUDY = """[frontier]
kind = "selfplay"
models = ["a0.tiny"]
min_flops = 1e8
max_flops = 1e9
"""


def test_the_runs_settings_are_the_frontier_rl_table(tmp_path):
    c = load_frontier_config(write(tmp_path, STUDY + "[frontier.rl]\nboard_size = 5\n"
                                   "[frontier.rl.selfplay]\ngames = 4\n"
                                   "[frontier.rating]\neval_playouts = 8\n"))
    assert (c.rl.board_size, c.rl.selfplay.games, c.rating.eval_playouts) == (5, 4, 8)


@pytest.mark.parametrize(("text", "message"), [
    (STUDY + "[rl]\nboard_size = 5\n", "[rl] is a study's table: write it as [frontier.rl]"),
    (STUDY + "[rating]\neval_playouts = 8\n", "write it as [frontier.rating]"),
    (STUDY + "[frontier.rl]\nmodel = 'a0.tiny'\n", "unknown key 'model'"),  # the study's
    (STUDY + "[frontier.rl]\ngenerations = 3\n", "unknown key 'generations'"),
    (STUDY + "[frontier.rl.curriculum]\nenabled = true\nmodel = 'a0.small'\n",
     "one network per model"),
    (STUDY + "[frontier.rl]\nalgorithm = 'policy-gradient'\n", "runs the AlphaZero loop"),
    (STUDY.replace("selfplay", "supervised") + "data = 'd.h5'\n[frontier.rl]\nboard_size = 5\n",
     "[rl] is a self-play study's table"),
])
def test_a_misplaced_or_wrong_table_is_one_line(tmp_path, text, message):
    with pytest.raises(ConfigError) as e:
        load_frontier_config(write(tmp_path, text))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_bundled_quick_config_loads():
    c = load_frontier_config(Path(__file__).parents[1] / "configs" /
                             "frontier-selfplay-quick.toml")
    assert c.kind == "selfplay" and len(c.models) >= 2
    assert math.log10(c.max_flops / c.min_flops) >= 1.5
    assert json.loads(json.dumps(c.rating.test_playouts)) == c.rating.test_playouts
