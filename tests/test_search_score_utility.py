"""KataGo's score utility: what the search maximises when the margin counts too."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.game.geometry import BLACK
from harness.game.position import Game
from harness.players.base import PlayerSpecError
from harness.players.spec import parse_player
from harness.search import BatchedSearch, EvaluatorConfig, MCTSConfig, NetworkEvaluator
from harness.search.leaves import history_rows
from harness.search.utility import utility_model, utility_scale

keras = pytest.importorskip("keras")
from test_evaluator import StonePlanes  # noqa: E402  (the trivial encoder those tests use)

from harness.nets.layers import ScoreUtility  # noqa: E402  (needs keras)

SIZE = 5
# Black to move; the white stone on the right edge is in atari: capturing it
# is the only move that changes the margin by more than the stone played.
ATARI = """
. . . . .
. . . X .
. . X O X
. . . . .
. . . . .
"""
CAPTURE = 3 * SIZE + 3  # the point below the white stone


def counting_model(value_bias: float = 3.0, value_activation: str = "tanh"):
    """A uniform policy, a constant value (tanh of ``value_bias`` for whoever
    is to move) and a score head that counts stones, own minus the
    opponent's: the margin as a beginner would read it."""
    inputs = keras.Input((SIZE, SIZE, 3))
    flat = keras.layers.Flatten()(inputs)
    policy = keras.layers.Dense(SIZE * SIZE + 1, kernel_initializer="zeros", name="policy")(flat)
    value = keras.layers.Dense(1, activation=value_activation, kernel_initializer="zeros",
                               bias_initializer=keras.initializers.Constant(value_bias),
                               name="value")(flat)
    count = np.tile(np.array([1.0, -1.0, 0.0], np.float32), SIZE * SIZE)[:, None]
    score = keras.layers.Dense(1, kernel_initializer=keras.initializers.Constant(count),
                               name="score")(flat)
    return keras.Model(inputs, {"policy": policy, "value": value, "score": score})


def leaves(game: Game):
    return (history_rows(game, 1)[None], np.array([game.to_play], np.int8),
            game.legal_moves()[None])


def test_the_utility_blends_value_and_margin_as_stated():
    value = np.array([[0.5], [0.5], [-1.0]], np.float32)
    score = np.array([[9.0], [0.0], [-1e6]], np.float32)
    out = np.asarray(ScoreUtility(0.2, 9.0)([value, score]))[:, 0]
    # 0.8 * 0.5 + 0.2 * (2/pi) atan(1) = 0.4 + 0.2 * 0.5
    np.testing.assert_allclose(out, [0.5, 0.4, -1.0], atol=1e-5)
    probability = np.array([[0.75]], np.float32)  # a sigmoid head: 2 * 0.75 - 1 = 0.5
    blended = ScoreUtility(0.2, 9.0, sigmoid=True)([probability, np.array([[9.0]], np.float32)])
    assert float(np.asarray(blended)[0, 0]) == pytest.approx(0.5, abs=1e-6)
    copy = ScoreUtility.from_config(ScoreUtility(0.3, 19.0, sigmoid=True).get_config())
    assert (copy.weight, copy.scale, copy.sigmoid) == (0.3, 19.0, True)
    with pytest.raises(ValueError, match="0 <= weight <= 1"):
        ScoreUtility(1.5, 9.0)
    assert utility_scale(0.0, 9) == 9.0 and utility_scale(12.0, 9) == 12.0


@pytest.mark.parametrize("inference", ["keras", "onnx"])
def test_the_evaluator_returns_the_utility_from_the_network(inference):
    if inference == "onnx":
        pytest.importorskip("onnxruntime")
        pytest.importorskip("tf2onnx")
        if keras.backend.backend() != "tensorflow":
            pytest.skip("the ONNX export goes through TensorFlow")
    game = Game.from_ascii(ATARI, to_play=BLACK)  # black 3 stones, white 1: margin 2
    model = counting_model()
    plain = NetworkEvaluator(model, StonePlanes(), SIZE, EvaluatorConfig(), inference=inference)
    blended = NetworkEvaluator(model, StonePlanes(), SIZE,
                               EvaluatorConfig(score_utility=0.25, score_utility_scale=2.0),
                               inference=inference)
    policy, value = plain.evaluate(*leaves(game))
    blended_policy, utility = blended.evaluate(*leaves(game))
    assert value[0] == pytest.approx(math.tanh(3.0), abs=1e-5)
    assert utility[0] == pytest.approx(0.75 * math.tanh(3.0) + 0.25 * 0.5, abs=1e-5)
    np.testing.assert_allclose(blended_policy, policy, atol=1e-6)
    assert blended.model is model  # the RL loop recognises its own network


def test_a_sigmoid_value_head_is_mapped_before_blending():
    model = counting_model(value_bias=math.log(3.0), value_activation="sigmoid")  # p = 0.75
    game = Game.from_ascii(ATARI, to_play=BLACK)
    evaluator = NetworkEvaluator(model, StonePlanes(), SIZE,
                                 EvaluatorConfig(score_utility=0.5, score_utility_scale=2.0),
                                 inference="keras")
    _, utility = evaluator.evaluate(*leaves(game))
    assert utility[0] == pytest.approx(0.5 * 0.5 + 0.5 * 0.5, abs=1e-5)


def test_when_the_value_cannot_tell_moves_apart_the_margin_finds_the_capture():
    game = Game.from_ascii(ATARI, to_play=BLACK)

    def searched(weight: float):
        evaluator = NetworkEvaluator(counting_model(value_bias=0.0), StonePlanes(), SIZE,
                                     EvaluatorConfig(score_utility=weight, batch_size=16),
                                     inference="keras")
        search = BatchedSearch(evaluator, MCTSConfig(playouts=200, leaves_per_game=4), seed=0)
        return search.search([game])[0]

    blended = searched(0.5)  # every position even by the value; the capture gains a stone
    assert blended.best_move == CAPTURE and blended.visits[CAPTURE] == blended.visits.max()
    assert blended.q[CAPTURE] > 0.0
    plain = searched(0.0)  # the value alone: every move alike
    assert plain.q[CAPTURE] == pytest.approx(0.0, abs=1e-6)
    assert plain.visits[CAPTURE] < 0.5 * blended.visits[CAPTURE]


def test_a_network_without_a_score_head_is_refused_in_one_line():
    inputs = keras.Input((SIZE, SIZE, 3))
    flat = keras.layers.Flatten()(inputs)
    model = keras.Model(inputs, {"policy": keras.layers.Dense(26, name="policy")(flat),
                                 "value": keras.layers.Dense(1, name="value")(flat)})
    with pytest.raises(ValueError, match="needs a score head"):
        utility_model(model, 0.1, 5.0)
    with pytest.raises(ValueError, match="score_utility must be in"):
        EvaluatorConfig(score_utility=1.5)


def test_the_player_spec_carries_the_score_utility():
    spec = parse_player("mcts:net.keras@16,score_utility=0.1")
    assert spec.score_utility == 0.1
    assert parse_player(spec.label) == spec
    assert parse_player("mcts:net.keras@16").score_utility == 0.0
    with pytest.raises(PlayerSpecError, match=r"score_utility must be in \[0, 1\]"):
        parse_player("mcts:net.keras@16,score_utility=2")


def test_the_blend_stays_float32_under_a_mixed_precision_policy():
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        wrapped = utility_model(counting_model(), 0.2, 5.0)
    finally:
        keras.config.set_dtype_policy(previous)
    assert wrapped.get_layer("utility").dtype_policy.compute_dtype == "float32"
