"""Every preset builds on 9x9 and 19x19, trains (finite losses, gradients reach
every weight) and survives a save/load round trip bit for bit.

Full-size presets (AlphaGo Zero towers, 60-block MobileNets...) and the
small ones on 19x19 run with ``-m slow``; the default run keeps every tiny
and small preset on 9x9 and the tiny ones on 19x19.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

from harness.nets import build_model, load_model, parse_model_name, save_model  # noqa: E402
from harness.nets.registry import PRESETS  # noqa: E402


def _cases():
    """Default run: tiny and small presets on 9x9, tiny ones on 19x19, each
    architecture once (``val4`` only changes a training weight)."""
    seen = set()
    for preset in PRESETS:
        architecture = replace(parse_model_name(preset.name), value_weight=1.0)
        repeat = architecture in seen
        seen.add(architecture)
        for board in (9, 19):
            slow = (preset.scale == "full" or repeat
                    or (board == 19 and preset.scale != "tiny"))
            marks = [pytest.mark.slow] if slow else []
            yield pytest.param(preset.name, board, marks=marks, id=f"{preset.name}-{board}")


def _targets(spec, batch: int, board: int, rng) -> dict[str, np.ndarray]:
    points = board * board
    win = rng.integers(0, 2, (batch, 1)).astype(np.float32)
    targets = {
        "policy": rng.integers(0, points + 1, batch),
        "value": win if spec.value_loss == "bce" else 2 * win - 1,
    }
    if spec.ownership:
        targets["ownership"] = rng.integers(-1, 2, (batch, points)).astype(np.float32)
    if spec.score:
        targets["score"] = rng.normal(0, 10, (batch, 1)).astype(np.float32)
    return targets


def _head_losses(spec, outputs, targets) -> dict:
    losses = {
        "policy": keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
            targets["policy"], outputs["policy"]),
        "value": (keras.losses.BinaryCrossentropy() if spec.value_loss == "bce"
                  else keras.losses.MeanSquaredError())(targets["value"], outputs["value"]),
    }
    for head in ("ownership", "score"):
        if head in targets:
            losses[head] = keras.losses.MeanSquaredError()(targets[head], outputs[head])
    return losses


def _feeds_only_batch_norm(layer) -> bool:
    consumers = [node.operation for node in layer._outbound_nodes]
    return bool(consumers) and all(
        isinstance(c, keras.layers.BatchNormalization) for c in consumers)


@pytest.mark.parametrize(("name", "board"), list(_cases()))
def test_preset_builds_trains_and_round_trips(name, board, tmp_path):
    planes = 21 if board == 19 else 17
    spec = parse_model_name(name)
    model = build_model(name, board, planes, seed=3)
    rng = np.random.default_rng(board)
    x = (rng.random((2, board, board, planes)) < 0.3).astype(np.float32)

    # Outputs: the spec's heads with the documented shapes and ranges.
    with tf.GradientTape() as tape:
        outputs = model(x, training=True)
        losses = _head_losses(spec, outputs, _targets(spec, 2, board, rng))
        total = sum(losses.values())
    assert sorted(outputs) == sorted(spec.heads)
    assert tuple(outputs["policy"].shape) == (2, board * board + 1)
    assert tuple(outputs["value"].shape) == (2, 1)
    value = np.asarray(outputs["value"])
    low = 0.0 if spec.value_loss == "bce" else -1.0
    assert np.all((value >= low) & (value <= 1.0))
    if spec.ownership:
        assert tuple(outputs["ownership"].shape) == (2, board * board)
    if spec.score:
        assert tuple(outputs["score"].shape) == (2, 1)

    # Every head's loss is finite and every trainable weight gets a gradient.
    for head, loss in losses.items():
        assert np.isfinite(float(loss)), head
    grads = tape.gradient(total, model.trainable_weights)
    # The bias of a layer feeding only batch normalisation has a zero gradient in
    # theory (the normalisation subtracts it again), so only its connection is checked.
    before_norm = {w.path for layer in model.layers if _feeds_only_batch_norm(layer)
                   for w in layer.weights if w.path.endswith("/bias")}
    dead = [w.path for w, g in zip(model.trainable_weights, grads, strict=True)
            if g is None or (w.path not in before_norm and not np.any(np.asarray(g)))]
    assert dead == []

    # Save, load safely, same outputs bit for bit; the convention survives.
    path = save_model(model, tmp_path / "model.keras")
    loaded = load_model(path)
    assert loaded.name == spec.name
    assert loaded.value_loss == spec.value_loss
    before = model(x, training=False)
    after = loaded(x, training=False)
    for head in spec.heads:
        np.testing.assert_array_equal(np.asarray(before[head]), np.asarray(after[head]))
