"""The Findings: sentences that claim only what the statistics support, with intervals."""

from __future__ import annotations

import numpy as np

from harness.arena.ratings import Outcome, bradley_terry
from harness.report.findings import (
    family_order_findings,
    tournament_findings,
    validation_findings,
)

BASE = "baseline: frequent move"


def comparison(pairs):
    return {
        "games": 150, "positions": 9000, "baseline": BASE,
        "models": [
            {"name": BASE, "policy_top1": [0.117, 0.110, 0.126],
             "value_mse": [1.0, 1.0, 1.0]},
            {"name": "a", "policy_top1": [0.331, 0.323, 0.339], "value_mse": [0.52, 0.45, 0.59]},
            {"name": "b", "policy_top1": [0.335, 0.327, 0.343], "value_mse": [0.72, 0.67, 0.77]},
        ],
        "pairs": pairs,
        "seeds": [{"model": "a", "seeds": 2, "policy_top1": [0.33, 0.30, 0.36]}],
    }


def pair(a, b, metric, diff, p_holm, better):
    return {"a": a, "b": b, "metric": metric, "difference": diff, "p": p_holm / 3,
            "p_holm": p_holm, "better": better}


PAIRS = [
    pair(BASE, "a", "policy_top1", [-0.214, -0.223, -0.204], 0.001, "a"),
    pair(BASE, "b", "policy_top1", [-0.218, -0.227, -0.208], 0.001, "b"),
    pair("a", "b", "policy_top1", [-0.004, -0.012, 0.005], 0.41, None),
    pair("a", "b", "value_mse", [-0.2, -0.25, -0.14], 0.001, "a"),
]


def test_every_network_above_the_baseline_is_one_sentence_with_intervals():
    text = validation_findings(comparison(PAIRS))
    assert text[0].startswith("All validation numbers are on the same 150 held-out games")
    assert text[1] == ("Every network predicts the played move far more often than the "
                       "most-frequent-move baseline (11.7 [11.0, 12.6] % top-1): "
                       "`a` 33.1 [32.3, 33.9] %; `b` 33.5 [32.7, 34.3] %.")


def test_an_insignificant_difference_is_said_to_be_none():
    text = validation_findings(comparison(PAIRS))
    assert ("`a` and `b`: no significant difference in top-1 accuracy "
            "(difference -0.4 [-1.2, 0.5] points, Holm p 0.410).") in text


def test_a_significant_difference_names_the_better_model_with_its_interval():
    text = validation_findings(comparison(PAIRS))
    assert ("`a` has a lower value MSE than `b`: 0.520 [0.450, 0.590] against "
            "0.720 [0.670, 0.770], lower by 0.200 [0.140, 0.250] (Holm p <=0.001).") in text
    assert any(s.startswith("Over 2 random seeds, `a` ends at 33.0 [30.0, 36.0] %") for s in text)


def test_a_network_below_the_baseline_is_named():
    pairs = [pair(BASE, "a", "policy_top1", [0.01, -0.005, 0.02], 0.2, None), *PAIRS[1:]]
    text = validation_findings(comparison(pairs))
    assert any(s.startswith("`a` does not beat the most-frequent-move baseline") for s in text)


def _ratings(results):
    outcomes = [Outcome(b, w, s) for b, w, s, n in results for _ in range(n)]
    names = sorted({o.black for o in outcomes} | {o.white for o in outcomes})
    ratings = bradley_terry(outcomes, names)

    def games(a, b):
        return sum(1 for o in outcomes if {o.black, o.white} == {a, b})

    return ratings, games


def test_tournament_sentences_separate_only_what_the_interval_separates():
    ratings, games = _ratings([
        ("a", "random", 1.0, 10), ("random", "a", 0.0, 10),  # a 20-0 random
        ("a+rl", "a", 1.0, 3), ("a", "a+rl", 1.0, 3),  # 3-3: no difference
        ("a+rl", "random", 1.0, 5), ("random", "a+rl", 0.0, 5),
    ])
    text = tournament_findings(ratings, games, ["a", "a+rl"], ["random"], [("a+rl", "a")])
    assert text[0].startswith("`a` beats `random`: +") and "20 games between them" in text[0]
    assert text[2].startswith("Self-play did not change `a` significantly")
    assert "6 games between them" in text[2]
    assert np.isfinite(ratings.elo).all()


def test_family_order_before_and_after_self_play():
    ratings, games = _ratings([
        ("a", "b", 1.0, 8), ("b", "a", 0.0, 8), ("a+rl", "b+rl", 0.0, 8), ("b+rl", "a+rl", 1.0, 8),
        ("a", "a+rl", 0.5, 4), ("b", "b+rl", 0.5, 4),
    ])
    (sentence,) = family_order_findings(ratings, games, [("a+rl", "a"), ("b+rl", "b")])
    assert sentence.startswith("`a` against `b`: +")
    assert "self-play reversed the order" in sentence


def test_the_more_accurate_network_is_named_with_a_positive_margin():
    pairs = [*PAIRS[:2], pair("a", "b", "policy_top1", [-0.02, -0.03, -0.01], 0.003, "b")]
    text = validation_findings(comparison(pairs))
    assert ("`b` is more accurate than `a` in top-1 accuracy: 33.5 [32.7, 34.3] % against "
            "33.1 [32.3, 33.9] %, higher by 2.0 [1.0, 3.0] points (Holm p 0.003).") in text


def test_a_run_from_scratch_is_compared_with_its_generation_0():
    ratings, games = _ratings([("selfplay-last", "selfplay-gen0", 1.0, 6),
                               ("selfplay-gen0", "selfplay-last", 0.0, 6)])
    (sentence,) = tournament_findings(ratings, games, [], [],
                                      [("selfplay-last", "selfplay-gen0")])
    assert sentence.startswith("Self-play from scratch: its last generation `selfplay-last` "
                               "beats its generation 0 `selfplay-gen0`, +")


def test_far_is_said_only_of_a_large_margin():
    close = [pair(BASE, "a", "policy_top1", [-0.03, -0.04, -0.02], 0.001, "a"),
             pair(BASE, "b", "policy_top1", [-0.218, -0.227, -0.208], 0.001, "b"), *PAIRS[2:]]
    assert validation_findings(comparison(close))[1].startswith(
        "Every network predicts the played move more often than")
