"""The MobileNet block's batch norm on TensorFlow's fused kernel computes what
``keras.layers.BatchNormalization`` computes: outputs, gradients (input, gamma,
beta) and moving statistics, in training and inference, float32 and bfloat16
(harness.nets.layers.FusedBatchNormalization)."""

from __future__ import annotations

import keras
import numpy as np
import pytest
import tensorflow as tf

from harness.nets import build_model, load_model, save_model
from harness.nets.layers import FusedBatchNormalization

SHAPE = (6, 5, 5, 7)


def _pair(**options):
    """A stock and a fused layer with the same non-trivial weights."""
    rng = np.random.default_rng(0)
    stock, fused = keras.layers.BatchNormalization(**options), FusedBatchNormalization(**options)
    for layer in (stock, fused):
        layer.build(SHAPE)
    weights = [rng.normal(1, 0.3, 7), rng.normal(0, 0.3, 7), rng.normal(0, 0.5, 7),
               rng.uniform(0.5, 2, 7)]  # gamma, beta, moving mean, moving variance
    for layer in (stock, fused):
        layer.set_weights([w.astype(np.float32) for w in weights])
    return stock, fused


def _inputs(seed=1):
    return tf.constant(np.random.default_rng(seed).normal(0.5, 2.0, SHAPE).astype(np.float32))


def _grads(layer, x, training):
    upstream = tf.constant(np.random.default_rng(2).normal(size=SHAPE).astype(np.float32))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, training=training)
        loss = tf.reduce_sum(tf.nn.relu(y) * upstream)
    return y, tape.gradient(loss, [x, layer.gamma, layer.beta])


@pytest.mark.parametrize("training", [True, False])
def test_outputs_and_gradients_match_keras_batch_norm(training):
    stock, fused = _pair(momentum=0.9)
    x = _inputs()
    y_ref, g_ref = _grads(stock, x, training)
    y, g = _grads(fused, x, training)
    np.testing.assert_allclose(y.numpy(), y_ref.numpy(), rtol=1e-5, atol=1e-5)
    for name, got, want in zip(("input", "gamma", "beta"), g, g_ref, strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4,
                                   err_msg=name)


def test_moving_statistics_follow_the_biased_batch_variance():
    stock, fused = _pair(momentum=0.9)
    x = _inputs()
    before = fused.moving_mean.numpy().copy(), fused.moving_variance.numpy().copy()
    stock(x, training=True)
    fused(x, training=True)
    np.testing.assert_allclose(fused.moving_mean.numpy(), stock.moving_mean.numpy(), rtol=1e-6)
    np.testing.assert_allclose(fused.moving_variance.numpy(), stock.moving_variance.numpy(),
                               rtol=1e-5)
    # Known answer from numpy: 0.9 * old + 0.1 * batch statistic (biased variance).
    flat = x.numpy().reshape(-1, 7)
    np.testing.assert_allclose(fused.moving_mean.numpy(),
                               0.9 * before[0] + 0.1 * flat.mean(0), rtol=1e-5)
    np.testing.assert_allclose(fused.moving_variance.numpy(),
                               0.9 * before[1] + 0.1 * flat.var(0), rtol=1e-5)


def test_bfloat16_inputs_match_keras_within_bfloat16_rounding():
    stock, fused = _pair(dtype="mixed_bfloat16")
    x = tf.cast(_inputs(), tf.bfloat16)
    for training in (True, False):
        want = tf.cast(stock(x, training=training), tf.float32).numpy()
        got = tf.cast(fused(x, training=training), tf.float32).numpy()
        np.testing.assert_allclose(got, want, rtol=0.02, atol=0.02)


def test_a_frozen_layer_uses_its_moving_statistics():
    stock, fused = _pair()
    fused.trainable = stock.trainable = False
    x = _inputs()
    np.testing.assert_allclose(fused(x, training=True).numpy(), stock(x, training=True).numpy(),
                               rtol=1e-5, atol=1e-5)


def test_mobile_models_use_it_and_round_trip_through_a_keras_file(tmp_path):
    model = build_model("mobile.tiny", 9, 17, seed=0)
    fused = [layer for layer in model.layers if isinstance(layer, FusedBatchNormalization)]
    assert fused and all(isinstance(layer, keras.layers.BatchNormalization) for layer in fused)
    again = load_model(save_model(model, tmp_path / "m.keras"))
    x = np.random.default_rng(0).random((3, 9, 9, 17), dtype=np.float32)
    np.testing.assert_allclose(again.predict_on_batch(x)["policy"],
                               model.predict_on_batch(x)["policy"], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("make", ["_shifted_depthwise", "_grouped_depthwise"])
def test_the_measured_depthwise_alternatives_compute_keras_depthwise(make):
    """The alternatives ``harness bench layers`` times against the stock kernel
    are the same convolution: outputs and input and kernel gradients."""
    from harness.bench import layers as bench_layers

    stock = keras.layers.DepthwiseConv2D(3, padding="same", use_bias=False)
    x = _inputs()
    stock.build(x.shape)
    stock.set_weights([np.random.default_rng(3).normal(size=(3, 3, 7, 1)).astype(np.float32)])
    other = getattr(bench_layers, make)(stock.kernel)
    upstream = tf.constant(np.random.default_rng(4).normal(size=SHAPE).astype(np.float32))
    results = []
    for fn in (stock, other):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
            loss = tf.reduce_sum(y * upstream)
        try:
            results.append((y, *tape.gradient(loss, [x, stock.kernel])))
        except tf.errors.InvalidArgumentError:  # no such kernel on this CPU
            np.testing.assert_allclose(y, results[0][0], atol=1e-5)
            pytest.skip("outputs agree; this TensorFlow has no gradient kernel for a grouped "
                        "convolution on this CPU")
    for want, got, what in zip(results[0], results[1], ("output", "input grad", "kernel grad"),
                               strict=True):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4,
                                   err_msg=what)


def test_bench_layers_times_every_candidate():
    import argparse

    from harness.bench import layers as bench_layers

    args = argparse.Namespace(batch=2, board_size=5, trunk=4, expansion=6, rounds=1)
    rows = {row[0]: row for row in bench_layers.measure(args, log=str)}
    assert set(rows) == set(bench_layers.candidates(args))
    assert rows["depthwise 3x3 (keras)"][1] == "2x5x5x6" and rows["conv 1x1 expand"][1] == "2x5x5x4"
    assert rows["depthwise 3x3 (keras)"][3] == pytest.approx(1.0)
    measured = [row for row in rows.values() if row[2] != bench_layers.NOT_MEASURED]
    assert all(row[2] > 0 for row in measured)
    assert {"depthwise 3x3 (keras)", "depthwise as shifted mul-adds", "conv 3x3 (ResNet)"} <= {
        row[0] for row in measured}


def test_a_step_tensorflow_has_no_kernel_for_is_reported_not_raised():
    """TensorFlow 2.21 on an AVX2-only CPU has no gradient kernel for a grouped
    convolution (AVX-512 machines have one): the bench says so and goes on."""
    from harness.bench.layers import unsupported

    def no_kernel():
        raise tf.errors.InvalidArgumentError(
            None, None, "Gradients for grouped convolutions are not supported on CPU. "
            "Computed input depth 6 doesn't match filter input depth 1")

    assert unsupported(no_kernel) == (
        "Gradients for grouped convolutions are not supported on CPU.")
    assert unsupported(lambda: None) is None
