"""A network trained under a mixed precision loads where it can run fast.

A ``.keras`` file records each layer's dtype policy: without a conversion a
network trained in bfloat16 on a CPU with bfloat16 instructions would train
and evaluate in TensorFlow's emulated bfloat16 on an AVX2 CPU, several
times slower than float32.
"""

import keras
import numpy as np
import pytest

from harness.nets import build_model, load_model, save_model
from harness.nets.precision import float32_copy, policies, runnable_here

SIZE, PLANES = 5, 4


@pytest.fixture()
def bf16_model():
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        return build_model("a0.tiny", SIZE, PLANES, seed=3)
    finally:
        keras.config.set_dtype_policy("float32")


def test_a_bfloat16_network_runs_in_float32_where_bfloat16_is_not_native(bf16_model):
    bf16_model.value_loss = "mse"
    copy = runnable_here(bf16_model, native="float32")
    assert policies(bf16_model) == {"mixed_bfloat16"}
    assert policies(copy) == {"float32"}
    assert copy.value_loss == "mse"
    for a, b in zip(bf16_model.get_weights(), copy.get_weights(), strict=True):
        assert np.array_equal(a, b)
    x = np.random.default_rng(0).random((4, SIZE, SIZE, PLANES), np.float32)
    ref = bf16_model(x, training=False)["value"]
    got = copy(x, training=False)["value"]
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(ref, np.float32),
                               atol=0.05)


def test_a_network_already_native_here_is_left_as_it_is(bf16_model):
    assert runnable_here(bf16_model, native="mixed_bfloat16") is bf16_model
    float32 = float32_copy(bf16_model)
    assert runnable_here(float32, native="mixed_bfloat16") is float32
    assert float32_copy(float32) is float32


def test_load_model_converts_by_this_device_s_native_precision(bf16_model, tmp_path,
                                                                  monkeypatch):
    import harness.devices

    path = save_model(bf16_model, tmp_path / "bf16.keras")
    monkeypatch.setattr(harness.devices, "resolve_precision", lambda name: "float32")
    assert policies(load_model(path)) == {"float32"}
    monkeypatch.setattr(harness.devices, "resolve_precision", lambda name: "mixed_bfloat16")
    assert policies(load_model(path)) == {"mixed_bfloat16"}


def test_a_resumed_bfloat16_training_state_keeps_its_optimizer_in_float32(bf16_model, tmp_path,
                                                                          monkeypatch):
    import harness.devices
    from harness.train.checkpoints import load_checkpoint
    from harness.train.config import OptimizerSettings
    from harness.train.trainer import compile_model

    compile_model(bf16_model, OptimizerSettings(), 1e-3, "mse", soft_policy=False)
    rng = np.random.default_rng(1)
    x = rng.random((8, SIZE, SIZE, PLANES), np.float32)
    y = {"policy": rng.integers(0, SIZE * SIZE + 1, 8), "value": rng.uniform(-1, 1, (8, 1))}
    bf16_model.train_on_batch(x, y)
    path = save_model(bf16_model, tmp_path / "state.keras")
    saved = [keras.ops.convert_to_numpy(v) for v in bf16_model.optimizer.variables]

    monkeypatch.setattr(harness.devices, "resolve_precision", lambda name: "float32")
    resumed = load_checkpoint(path, compile=True)
    assert policies(resumed) == {"float32"}
    assert int(resumed.optimizer.iterations) == 1
    for got, want in zip(resumed.optimizer.variables, saved, strict=True):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(got), want)
    resumed.train_on_batch(x, y)  # and it trains on
    assert int(resumed.optimizer.iterations) == 2
