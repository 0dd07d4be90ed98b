"""The dtype policies a model computes under, and its float32 copy.

A ``.keras`` file records each layer's dtype policy, so a network trained
under ``mixed_bfloat16`` on a machine with bfloat16 instructions reloads in
bfloat16 everywhere. On a CPU without them (AVX2 only) TensorFlow emulates
bfloat16 in Eigen: on a 2-core AVX2 machine 300 training steps of the
published 19x19 network had not finished after 18 minutes, where float32
took 3.9. So a model whose mixed policy this device does not compute
natively loads as float32.
"""

from __future__ import annotations

MIXED = ("mixed_bfloat16", "mixed_float16")
# The harness's attributes a float32 copy keeps (load_checkpoint sets them before it converts).
_ATTRIBUTES = ("value_loss", "spec", "model_info", "plugin")


def policies(model) -> frozenset[str]:
    """The names of the dtype policies ``model``'s layers compute under (its
    input layers, which compute nothing, reload as float32 and are left out)."""
    import keras

    return frozenset(layer.dtype_policy.name for layer in model.layers
                     if not isinstance(layer, keras.layers.InputLayer))


def is_float32(model) -> bool:
    return policies(model) == {"float32"}


def float32_copy(model):
    """``model`` itself if it computes in float32, else a copy that does, with
    the same weights (and the harness's attributes)."""
    if is_float32(model):
        return model
    import keras

    def retype(node):
        if isinstance(node, dict):
            if node.get("class_name") in ("DTypePolicy", "FloatDTypePolicy"):
                return {**node, "class_name": "DTypePolicy", "config": {"name": "float32"}}
            return {key: retype(value) for key, value in node.items()}
        if isinstance(node, list):
            return [retype(value) for value in node]
        return node

    copy = keras.Model.from_config(retype(model.get_config()))
    copy.set_weights(model.get_weights())
    for name in _ATTRIBUTES:
        if hasattr(model, name):
            setattr(copy, name, getattr(model, name))
    return copy


def runnable_here(model, native: str | None = None):
    """``model``, or a float32 copy of it when it computes under a mixed
    policy that is not ``native`` (this device's, from
    :func:`harness.devices.resolve_precision`, when None)."""
    mixed = policies(model) & set(MIXED)
    if not mixed:
        return model
    if native is None:
        from harness.devices import resolve_precision

        native = resolve_precision("auto")
    return model if mixed == {native} else float32_copy(model)
