"""The network evaluator: masking, value conventions, symmetries, cache, batching."""

from __future__ import annotations

import numpy as np
import pytest

from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.search import (
    BatchedSearch,
    EvaluatorConfig,
    MCTSConfig,
    NetworkEvaluator,
    value_convention,
)
from harness.search.evaluator import batch_shapes, masked_softmax
from harness.search.leaves import history_rows

keras = pytest.importorskip("keras")
symmetry = pytest.importorskip("harness.features.symmetry")

SIZE = 5
POSITION = """
. . . . .
. X O . .
. . X . .
. O . . .
. . . . X
"""


class StonePlanes:
    """A trivial encoder (own stones, opponent stones, ones) so these tests do
    not depend on the real encoders."""

    planes = 3
    history = 1

    def encode(self, stones, to_play, size, out=None):
        current = stones[:, -1, :]
        own = current == to_play[:, None]
        other = (current != 0) & ~own
        x = np.stack([own, other, np.ones_like(own)], axis=-1).astype(np.float32)
        return x.reshape(len(stones), size, size, self.planes)


def dense_model(value_activation: str = "tanh", value_bias: float = 0.0, seed: int = 0):
    """Policy from a dense layer over the whole board: not symmetric at all."""
    inputs = keras.Input((SIZE, SIZE, 3))
    flat = keras.layers.Flatten()(inputs)
    init = keras.initializers.RandomNormal(stddev=1.0, seed=seed)
    policy = keras.layers.Dense(SIZE * SIZE + 1, name="policy", kernel_initializer=init)(flat)
    value = keras.layers.Dense(
        1, activation=value_activation, name="value", kernel_initializer="zeros",
        bias_initializer=keras.initializers.Constant(value_bias),
    )(flat)
    return keras.Model(inputs, {"policy": policy, "value": value})


def pointwise_model():
    """Policy logit of a point from that point's planes only: symmetric."""
    inputs = keras.Input((SIZE, SIZE, 3))
    init = keras.initializers.RandomNormal(stddev=1.0, seed=3)
    points = keras.layers.Flatten()(keras.layers.Conv2D(1, 1, kernel_initializer=init)(inputs))
    pooled = keras.layers.GlobalAveragePooling2D()(inputs)
    pass_logit = keras.layers.Dense(1, kernel_initializer=init)(pooled)
    policy = keras.layers.Concatenate(name="policy")([points, pass_logit])
    value = keras.layers.Dense(1, activation="tanh", name="value", kernel_initializer=init)(pooled)
    return keras.Model(inputs, [policy, value])  # a list output, named by output_names


def leaves(game: Game, count: int = 1):
    rows = np.repeat(history_rows(game, 1)[None], count, axis=0)
    to_play = np.full(count, game.to_play, np.int8)
    legal = np.repeat(game.legal_moves()[None], count, axis=0)
    return rows, to_play, legal


def evaluator(model, **config) -> NetworkEvaluator:
    return NetworkEvaluator(model, StonePlanes(), SIZE, EvaluatorConfig(**config))


def test_masked_softmax_renormalises_over_legal_moves():
    logits = np.array([[0.0, np.log(3.0), 5.0, 0.0], [np.nan, 1.0, 2.0, 0.0]], np.float32)
    legal = np.array([[True, True, False, False], [True, False, True, False]])
    out = masked_softmax(logits, legal, 1.0, np.empty_like(logits))
    np.testing.assert_allclose(out[0], [0.25, 0.75, 0.0, 0.0], rtol=1e-6)
    np.testing.assert_allclose(out[1], [0.5, 0.0, 0.5, 0.0])  # broken logits: uniform


def test_policy_is_zero_on_illegal_moves_and_sums_to_one():
    game = Game.from_ascii(POSITION, to_play=WHITE)
    policy, value = evaluator(dense_model(), batch_size=8).evaluate(*leaves(game, 3))
    legal = game.legal_moves()
    assert (policy[:, ~legal] == 0).all() and (policy[:, legal] > 0).all()
    np.testing.assert_allclose(policy.sum(axis=1), 1.0, rtol=1e-5)
    assert value.shape == (3,)


@pytest.mark.parametrize(
    ("activation", "bias", "expected"),
    [("tanh", 0.5, np.tanh(0.5)), ("sigmoid", np.log(3.0), 0.5)],  # sigmoid 0.75 -> 0.5
)
def test_value_conventions(activation, bias, expected):
    model = dense_model(activation, bias)
    assert value_convention(model) == activation
    _, value = evaluator(model).evaluate(*leaves(Game(SIZE)))
    assert value[0] == pytest.approx(expected, abs=1e-5)


def test_values_come_back_in_range_whatever_the_network_says():
    from harness.search.evaluator import clean_values

    tanh = np.array([0.5, -1.5, 2.0, np.nan], np.float32)
    np.testing.assert_array_equal(clean_values(tanh, False), [0.5, -1.0, 1.0, 0.0])
    sigmoid = np.array([0.75, 0.0, 1.0, np.nan], np.float32)  # P(win) -> 2p - 1
    np.testing.assert_array_equal(clean_values(sigmoid, True), [0.5, -1.0, 1.0, 0.0])


def test_value_convention_from_the_zoo_attribute():
    model = dense_model("tanh")
    model.value_loss = "bce"  # what the zoo records overrides the layer
    assert value_convention(model) == "sigmoid"
    assert value_convention(object()) == "tanh"


def test_fixed_symmetry_transforms_inputs_and_policy_back():
    game = Game.from_ascii(POSITION, to_play=BLACK)
    model = dense_model()
    plain = evaluator(model)
    for k in range(8):
        turned = evaluator(model, symmetry=k)
        policy, _ = turned.evaluate(*leaves(game))
        # The network saw the transformed board: its answer there, mapped back.
        image = Game(SIZE)
        image.setup(
            black=symmetry.transform_points(np.flatnonzero(game.stones == BLACK), k, SIZE),
            white=symmetry.transform_points(np.flatnonzero(game.stones == WHITE), k, SIZE),
        )
        image.to_play = game.to_play
        seen, _ = plain.evaluate(*leaves(image))
        expected = symmetry.transform_policy(seen, symmetry.inverse(k), SIZE)
        np.testing.assert_allclose(policy, expected, rtol=1e-5, atol=1e-7)
        if k:
            assert not np.allclose(policy, plain.evaluate(*leaves(game))[0], atol=1e-4)


def test_random_symmetries_agree_on_a_symmetric_network():
    game = Game.from_ascii(POSITION, to_play=BLACK)
    model = pointwise_model()
    plain, _ = evaluator(model).evaluate(*leaves(game, 16))
    mixed, _ = evaluator(model, symmetry="random", seed=5).evaluate(*leaves(game, 16))
    np.testing.assert_allclose(mixed, plain, rtol=1e-5, atol=1e-7)


def test_padding_and_chunks_do_not_leak_between_positions():
    games = [Game.from_ascii(POSITION, to_play=BLACK), Game(SIZE)]
    for i in range(1, 6):
        games.append(games[-1].copy())
        games[-1].play(i * 3)
    model = dense_model()
    singles = [evaluator(model, batch_size=4).evaluate(*leaves(g))[0][0] for g in games]
    parts = zip(*(leaves(g) for g in games), strict=True)
    rows, to_play, legal = (np.concatenate(part) for part in parts)
    batched = evaluator(model, batch_size=4)
    policy, _ = batched.evaluate(rows, to_play, legal)
    np.testing.assert_allclose(policy, np.stack(singles), rtol=1e-5, atol=1e-7)
    assert batched.calls == 2  # 7 positions in chunks of at most 4
    assert batch_shapes(256) == [8, 16, 32, 64, 96, 128, 160, 192, 224, 256]
    assert batch_shapes(128) == [8, 16, 32, 48, 64, 80, 96, 112, 128]


def test_cache_answers_repeated_positions_without_the_network():
    game = Game.from_ascii(POSITION, to_play=BLACK)
    cached = evaluator(dense_model(), cache_size=64)
    first = cached.evaluate(*leaves(game))
    again = cached.evaluate(*leaves(game))
    assert cached.positions == 1 and cached.cache.hits == 1
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    rows, _, legal = leaves(game)
    cached.evaluate(rows, np.full(1, WHITE, np.int8), legal)  # other side to move: new key
    assert cached.positions == 2


def test_search_runs_on_a_keras_network():
    game = Game.from_ascii(POSITION, to_play=BLACK)
    net = evaluator(dense_model(), batch_size=8, symmetry="random", seed=1)
    search = BatchedSearch(net, MCTSConfig(playouts=24, leaves_per_game=4), games=2)
    results = search.search([game, Game(SIZE)])
    assert [r.visits.sum() for r in results] == [24, 24]
    assert all(-1.0 <= r.root_value <= 1.0 for r in results)


def test_a_model_that_does_not_fit_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"takes inputs \(5, 5, 3\)"):
        NetworkEvaluator(dense_model(), StonePlanes(), 7)
    with pytest.raises(ValueError, match="no 'score' output"):
        evaluator(dense_model(), value_head="score")
