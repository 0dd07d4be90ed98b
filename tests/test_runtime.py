"""Exported inference runtimes agree with Keras, are cached by content, and are
chosen only when they do (harness.nets.export, harness.search.runtime)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from harness.nets import build_model, load_model, save_model
from harness.nets.export import exported, file_hash, onnx_path
from harness.search import EvaluatorConfig, NetworkEvaluator
from harness.search.runtime import (
    TOLERANCE,
    RuntimeMismatch,
    checked,
    default_inference,
    disagreement,
    keras_forward,
    mark_frozen,
    onnx_forward,
    openvino_forward,
    sample_planes,
)

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")

SIZE, PLANES = 9, 17


@pytest.fixture
def frozen(tmp_path):
    """A zoo model saved to a .keras file, loaded back and frozen to it."""
    path = save_model(build_model("a0.tiny", SIZE, PLANES, seed=0), tmp_path / "net.keras")
    model = load_model(path)
    mark_frozen(model, path)
    return model, path


# The custom layers (PassLogit in the convolutional policy heads, MaxAverageOut,
# global pooling in GARB, RelativeAttention in the transformer) and the depthwise
# convolution export like stock layers.
@pytest.mark.parametrize("name", ["mobile.tiny", "mao.conv.tiny", "garb.tiny", "transformer.tiny"])
def test_exported_runtimes_match_keras(tmp_path, monkeypatch, name):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    model = build_model(name, SIZE, PLANES, seed=3)
    graph = exported(model)
    planes = sample_planes((SIZE, SIZE, PLANES), 24, seed=5)
    for build in (onnx_forward, openvino_forward):
        forward = build(graph)
        logits, values = forward(planes)
        assert logits.shape == (24, SIZE * SIZE + 1) and values.shape == (24,)
        policy_gap, value_gap = disagreement(forward, keras_forward(model), planes)
        assert policy_gap < TOLERANCE and value_gap < TOLERANCE, build.__name__


def test_export_is_cached_beside_the_model_and_keyed_by_its_bytes(frozen):
    model, path = frozen
    onnx = exported(model, path)
    assert onnx.parent == path.parent and onnx.name == f"net.{file_hash(path)}.onnx"
    written = onnx.stat().st_mtime_ns
    assert exported(model, path) == onnx and onnx.stat().st_mtime_ns == written
    # A retrained model saved under the same name gets a new export.
    save_model(build_model("a0.tiny", SIZE, PLANES, seed=1), path)
    again = load_model(path)
    assert exported(again, path) != onnx


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_model_folder_exports_to_the_cache(tmp_path, monkeypatch):
    folder = tmp_path / "ro"
    path = save_model(build_model("a0.tiny", SIZE, PLANES, seed=0), folder / "net.keras")
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    folder.chmod(0o555)
    try:
        target = onnx_path(path, file_hash(path))
    finally:
        folder.chmod(0o755)
    assert target == tmp_path / "cache" / "onnx" / f"net.{file_hash(path)}.onnx"


def test_writable_tries_a_file_rather_than_asking():
    """/proc refuses new files even to root, whom ``os.access`` would answer yes."""
    from harness.nets.export import writable

    assert not writable(Path("/proc"))
    assert writable(Path(tempfile.gettempdir()))


def test_in_memory_models_go_to_the_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    assert onnx_path(None, "0123", "m") == tmp_path / "onnx" / "m.0123.onnx"


def test_an_export_of_other_weights_is_rejected(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    model = build_model("a0.tiny", SIZE, PLANES, seed=0)
    other = onnx_forward(exported(build_model("a0.tiny", SIZE, PLANES, seed=1)))
    with pytest.raises(RuntimeMismatch, match="differs from Keras"):
        checked(other, keras_forward(model), sample_planes((SIZE, SIZE, PLANES)), "onnx")


def test_auto_runs_a_frozen_model_through_a_checked_runtime(frozen):
    model, _ = frozen
    auto = NetworkEvaluator(model, "agz17", SIZE, EvaluatorConfig(batch_size=16), inference="auto")
    keras = NetworkEvaluator(model, "agz17", SIZE, EvaluatorConfig(batch_size=16),
                             inference="keras")
    assert set(auto.runtime.choice.by_shape) == {8, 16}
    assert set(auto.runtime.choice.by_shape.values()) <= {"keras", "onnx", "openvino"}
    assert not auto.runtime.choice.rejected
    rng = np.random.default_rng(0)
    stones = rng.integers(0, 3, (12, 8, SIZE * SIZE)).astype(np.int8)  # empty, black, white
    to_play = rng.choice(np.array([1, 2], np.int8), 12)
    legal = stones[:, -1, :] == 0
    legal = np.concatenate([legal, np.ones((12, 1), bool)], axis=1)
    p, v = auto.evaluate(stones, to_play, legal)
    q, w = keras.evaluate(stones, to_play, legal)
    np.testing.assert_allclose(p, q, atol=TOLERANCE)
    np.testing.assert_allclose(v, w, atol=TOLERANCE)


def test_a_model_that_trains_in_memory_is_exported_to_a_graph_that_does_not_outlive_it(
        tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    tempfile.tempdir = None  # read TMPDIR again
    try:
        model = build_model("a0.tiny", SIZE, PLANES, seed=0)
        evaluator = NetworkEvaluator(model, "agz17", SIZE, EvaluatorConfig(batch_size=8),
                                     inference="onnx")
        assert list(tmp_path.iterdir()) == []  # nothing cached, the temporary graph removed
        first = evaluator.runtime
        evaluator.clear_cache()  # same weights: the export is kept
        assert evaluator.runtime is first
    finally:
        tempfile.tempdir = None


def test_evaluations_from_two_threads_match_one_at_a_time():
    from concurrent.futures import ThreadPoolExecutor

    model = build_model("a0.tiny", SIZE, PLANES, seed=0)
    config = EvaluatorConfig(batch_size=16, cache_size=64)
    rng = np.random.default_rng(1)
    batches = []
    for _ in range(6):
        stones = rng.integers(0, 3, (12, 8, SIZE * SIZE)).astype(np.int8)
        to_play = rng.choice(np.array([1, 2], np.int8), 12)
        legal = np.concatenate([stones[:, -1, :] == 0, np.ones((12, 1), bool)], axis=1)
        batches.append((stones, to_play, legal))
    alone = NetworkEvaluator(model, "agz17", SIZE, config, inference="keras")
    expected = [alone.evaluate(*b) for b in batches]
    shared = NetworkEvaluator(model, "agz17", SIZE, config, inference="keras")
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda b: shared.evaluate(*b), batches))
    for (p, v), (q, w) in zip(got, expected, strict=True):
        np.testing.assert_allclose(p, q, atol=1e-6)
        np.testing.assert_allclose(v, w, atol=1e-6)
    assert shared.positions == alone.positions


def test_a_forced_export_follows_new_weights_after_clear_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    model = build_model("a0.tiny", SIZE, PLANES, seed=0)
    evaluator = NetworkEvaluator(model, "agz17", SIZE, EvaluatorConfig(batch_size=8),
                                 inference="onnx")
    model.set_weights(build_model("a0.tiny", SIZE, PLANES, seed=1).get_weights())
    evaluator.clear_cache()
    planes = sample_planes((SIZE, SIZE, PLANES), 8)
    policy_gap, value_gap = disagreement(evaluator.runtime, keras_forward(model), planes)
    assert policy_gap < TOLERANCE and value_gap < TOLERANCE


def test_the_environment_forces_a_runtime(monkeypatch):
    monkeypatch.setenv("HARNESS_INFERENCE", "openvino")
    assert default_inference() == "openvino"
    monkeypatch.setenv("HARNESS_INFERENCE", "tensorrt")
    with pytest.raises(ValueError, match="HARNESS_INFERENCE"):
        default_inference()
    monkeypatch.delenv("HARNESS_INFERENCE")
    assert default_inference() == "auto"


def test_a_mixed_precision_model_exports_from_a_float32_copy(tmp_path, monkeypatch):
    import keras

    from harness.nets.precision import float32_copy, is_float32

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        model = build_model("mobile.tiny", SIZE, PLANES, seed=2)
    finally:
        keras.config.set_dtype_policy("float32")
    copy = float32_copy(model)
    assert not is_float32(model) and is_float32(copy)
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), copy.get_weights(),
                                                    strict=True))
    planes = sample_planes((SIZE, SIZE, PLANES), 8)
    # bfloat16 rounding (8 bits of mantissa) moves outputs by well under 5%.
    assert max(disagreement(keras_forward(copy), keras_forward(model), planes)) < 0.05
    forward = onnx_forward(exported(model))
    assert max(disagreement(forward, keras_forward(copy), planes)) < TOLERANCE


def test_auto_picks_the_faster_runtime_per_batch_shape():
    """One runtime with a fixed cost per call, one with a cost per position:
    the first wins large batches, the second small ones. The costs are a
    model handed to the timer, so the test does not depend on the clock."""
    from harness.search.runtime import choose

    def fixed(x):
        return x

    def per_position(x):
        return x

    cost = {fixed: lambda n: 0.004, per_position: lambda n: 0.0001 * n}  # seconds per call

    def timer(forward, x):
        return cost[forward](x.shape[0])

    choice = choose({"fixed": fixed, "per_position": per_position}, [8, 16, 128],
                    np.zeros((4, 2), np.float32), timer=timer)
    assert choice.by_shape == {8: "per_position", 16: "per_position", 128: "fixed"}
    assert "fixed for batches 128" in choice.describe()


def test_many_networks_traced_once_each_raise_no_retracing_warning(caplog):
    """A tournament worker holds one forward per network; TensorFlow's
    retracing detector would count them as one function traced eight times."""
    import logging

    from harness.search.runtime import keras_forward

    x = np.zeros((2, 5, 5, 17), np.float32)
    with caplog.at_level(logging.WARNING):
        for seed in range(8):
            keras_forward(build_model("a0.tiny", 5, 17, seed=seed))(x)
    assert not [r for r in caplog.records if "retracing" in r.getMessage()]
