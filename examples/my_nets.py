"""A network from outside the harness, in about 30 lines (docs/plugins.md).

A dilated residual tower: each block sees twice as far as the last, and a
board-mean layer gives every point the whole board's context. Load it with
``harness --plugin examples/my_nets.py`` or ``plugins = ["examples/my_nets.py"]``;
the model is then ``dilated_tiny`` wherever a zoo name goes.
"""

import keras
from keras import layers, ops

import harness


@keras.saving.register_keras_serializable(package="my_nets")
class BoardMean(layers.Layer):
    """Adds each channel's mean over the board to every point."""

    def call(self, x):
        return x + ops.mean(x, axis=(1, 2), keepdims=True)


@harness.register_model("dilated_tiny")
def dilated_tiny(board_size, input_planes, heads, width=16):
    board = keras.Input((board_size, board_size, input_planes))
    x = layers.Conv2D(width, 3, padding="same", activation="relu")(board)
    for rate in (1, 2, 4):
        y = layers.Conv2D(width, 3, padding="same", dilation_rate=rate, activation="relu")(x)
        x = BoardMean()(layers.Add()([x, y]))
    pooled = layers.GlobalAveragePooling2D()(x)
    points = layers.Flatten()(layers.Conv2D(1, 1)(x))
    outputs = {
        "policy": layers.Concatenate(name="policy")([points, layers.Dense(1)(pooled)]),
        "value": layers.Dense(1, activation="tanh", name="value")(
            layers.Dense(32, activation="relu")(pooled)),
    }
    if "ownership" in heads:
        outputs["ownership"] = layers.Flatten(name="ownership")(
            layers.Conv2D(1, 1, activation="tanh")(x))
    if "score" in heads:
        outputs["score"] = layers.Dense(1, name="score")(pooled)
    return keras.Model(board, outputs, name="dilated_tiny")
