"""What a model costs: parameters, FLOPs per position, outputs, value convention."""

from __future__ import annotations

import keras

from harness.nets.names import HEADS, ModelSpec, parse_model_name


def model_summary(model: keras.Model) -> dict:
    """Parameters (trainable and batch-norm statistics, as Keras counts them),
    FLOPs for one position, output heads and the value convention."""
    board = model.inputs[0].shape
    return {
        "name": model.name,
        "family": _family(model),
        "board_size": int(board[1]),
        "input_planes": int(board[3]),
        "params": int(model.count_params()),
        "trainable_params": int(sum(_size(w) for w in model.trainable_weights)),
        "flops": flops_per_position(model),
        "heads": heads_of(model),
        "value_loss": value_loss_of(model),
    }


def flops_per_position(model: keras.Model) -> int:
    """Two FLOPs per multiply-accumulate of every convolution and dense layer,
    read from the layer shapes; element-wise work (BN, activations, additions,
    pooling) is left out, as in the papers' comparisons."""
    total = 0
    for layer in model.layers:
        if hasattr(layer, "flops_per_position"):
            total += layer.flops_per_position(layer.input.shape)
        elif isinstance(layer, keras.layers.DepthwiseConv2D):
            kh, kw, channels, multiplier = layer.kernel.shape
            _, height, width, _ = layer.output.shape
            total += 2 * kh * kw * channels * multiplier * height * width
        elif isinstance(layer, keras.layers.Conv2D):
            kh, kw, fan_in, filters = layer.kernel.shape
            _, height, width, _ = layer.output.shape
            total += 2 * kh * kw * fan_in * filters * height * width
        elif isinstance(layer, keras.layers.Dense):
            fan_in, units = layer.kernel.shape
            total += 2 * fan_in * units * _tokens(layer.input.shape)
        elif isinstance(layer, keras.layers.MultiHeadAttention):
            total += _attention_flops(layer)
    return int(total)


def _tokens(shape) -> int:
    """Vectors a dense layer is applied to: 1 for a flat input, the points for
    a transformer's (batch, points, width) tokens."""
    n = 1
    for d in shape[1:-1]:
        n *= int(d)
    return n


def _attention_flops(layer) -> int:
    """Self-attention over T tokens of width W with H heads of size D: the
    query, key, value and output projections (4 x 2 T W H D) and the scores
    and their weighted sum (2 x 2 T^2 H D)."""
    t = _tokens(layer.output.shape)
    width, heads, size = layer.query_dense.kernel.shape
    return int(4 * 2 * t * width * heads * size + 2 * 2 * t * t * heads * size)


def heads_of(model: keras.Model) -> list[str]:
    """Output names, policy and value first."""
    names = list(model.output_names)
    return [h for h in HEADS if h in names] + [h for h in names if h not in HEADS]


def value_loss_of(model: keras.Model) -> str:
    """``"mse"`` (tanh value) or ``"bce"`` (sigmoid value), read from the layer
    that produces the ``value`` output, so it holds for loaded models too."""
    activation = getattr(model.get_layer("value"), "activation", None)
    return "bce" if getattr(activation, "__name__", "") == "sigmoid" else "mse"


def spec_of(model: keras.Model) -> ModelSpec | None:
    """The spec behind a zoo model (its name is canonical), or None."""
    try:
        return parse_model_name(model.name)
    except ValueError:
        return None


def _family(model: keras.Model) -> str:
    spec = spec_of(model)
    if spec:
        return spec.family
    return "plugin" if getattr(model, "plugin", "") else "unknown"


def _size(weight) -> int:
    n = 1
    for d in weight.shape:
        n *= int(d)
    return n
