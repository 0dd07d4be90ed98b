"""The zoo's custom Keras layers; everything else is built from stock layers.

All use ``keras.ops`` only (no TensorFlow calls) so the models run on any
Keras backend, and all are registered so ``.keras`` files load with
``safe_mode=True``.
"""

from __future__ import annotations

import math

import keras
import numpy as np
from keras import ops


@keras.saving.register_keras_serializable(package="harness")
class PassLogit(keras.layers.Layer):
    """Append a constant zero logit for the pass move to the B*B board logits.

    Softmax ignores a shift common to all logits, so fixing the pass logit at
    zero loses nothing when the board logits come from a dense layer (a dense
    layer with B*B+1 outputs is the same function class), and it is how a fully
    convolutional head, which has no natural place for a pass, can still learn
    to pass: by lowering every board logit below zero. It also keeps the
    parameter counts of the paper's networks, which have no pass output.
    """

    def call(self, logits):
        return ops.concatenate([logits, ops.zeros_like(logits[:, :1])], axis=-1)

    def compute_output_shape(self, input_shape):
        points = input_shape[-1]
        return (*input_shape[:-1], None if points is None else points + 1)

    def get_config(self):
        return super().get_config()


@keras.saving.register_keras_serializable(package="harness")
class MaxAverageOut(keras.layers.Layer):
    """A MAO layer: ``units`` maximum-average-out units side by side (MAO paper 2.1).

    Each unit (1) passes its input through a channel selector, a per-sample
    dropout mask of shape 1x1xC active in training only (the all-pass state at
    inference); (2) convolves it with ``pieces`` kernels; (3) averages each
    resulting map over the board; (4) outputs the map(s) whose average equals
    the maximum (equation 5 keeps ties). Like Maxout, the selection is the
    nonlinearity: there is no activation.

    One selector mask per sample is shared by the units of a layer: separate
    masks per unit would need one convolution per unit and sample.
    Kernels use "same" padding so that the maps keep the board's size.
    """

    def __init__(self, units: int, pieces: int, dropout: float = 0.0, kernel_size: int = 3,
                 seed: int | None = None, kernel_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        if units < 1 or pieces < 1 or not 0.0 <= dropout < 1.0:
            raise ValueError(f"MaxAverageOut needs units >= 1, pieces >= 1 and 0 <= dropout < 1 "
                             f"(got {units}, {pieces}, {dropout})")
        self.units = int(units)
        self.pieces = int(pieces)
        self.dropout = float(dropout)
        self.kernel_size = int(kernel_size)
        self.seed = seed
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.seed_generator = keras.random.SeedGenerator(seed)

    def build(self, input_shape):
        channels = int(input_shape[-1])
        k = self.kernel_size
        self.kernel = self.add_weight(
            name="kernel", shape=(k, k, channels, self.units * self.pieces),
            initializer=self.kernel_initializer)
        self.bias = self.add_weight(name="bias", shape=(self.units * self.pieces,),
                                    initializer="zeros")

    def call(self, inputs, training=None):
        if training and self.dropout > 0.0:
            shape = ops.shape(inputs)
            inputs = keras.random.dropout(inputs, self.dropout,
                                          noise_shape=(shape[0], 1, 1, shape[3]),
                                          seed=self.seed_generator)
        maps = ops.conv(inputs, self.kernel, strides=1, padding="same") + self.bias
        height, width = inputs.shape[1], inputs.shape[2]
        maps = ops.reshape(maps, (-1, height, width, self.units, self.pieces))
        averages = ops.mean(maps, axis=(1, 2), keepdims=True)
        best = ops.max(averages, axis=-1, keepdims=True)
        chosen = ops.cast(ops.greater_equal(averages, best), maps.dtype)
        return ops.sum(maps * chosen, axis=-1)

    def compute_output_shape(self, input_shape):
        return (*input_shape[:-1], self.units)

    def flops_per_position(self, input_shape) -> int:
        """Two FLOPs per multiply-accumulate of the convolution."""
        _, height, width, channels = input_shape
        k = self.kernel_size
        return 2 * k * k * int(channels) * self.units * self.pieces * int(height) * int(width)

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, pieces=self.pieces, dropout=self.dropout,
                      kernel_size=self.kernel_size, seed=self.seed,
                      kernel_initializer=keras.initializers.serialize(self.kernel_initializer))
        return config


@keras.saving.register_keras_serializable(package="harness")
class FusedBatchNormalization(keras.layers.BatchNormalization):
    """Batch normalisation through TensorFlow's fused kernel on board maps.

    Same weights, config and arithmetic as ``keras.layers.BatchNormalization``
    (which it is, for loading and for every ``isinstance`` check); only the
    kernel differs. Keras normalises with separate element-wise ops, each
    one a pass over the tensor, and on a CPU a MobileNet's 200-channel
    expansions make those passes memory-bound: stock batch norm plus ReLU on
    a 128x19x19x200 training batch took 212 ms forward and backward, the
    fused kernel 116 ms (issue 19). Anything but a 4-D channels-last float
    input on the TensorFlow backend, with centre and scale, takes the stock
    path.
    """

    def _fusable(self, inputs, mask) -> bool:
        return (keras.backend.backend() == "tensorflow" and mask is None and self.center
                and self.scale and not self.renorm and not self.synchronized
                and len(inputs.shape) == 4 and self.axis in (-1, 3)
                and keras.backend.standardize_dtype(inputs.dtype) in ("float32", "bfloat16"))

    def call(self, inputs, training=None, mask=None):
        if not self._fusable(inputs, mask):
            return super().call(inputs, training=training, mask=mask)
        import tensorflow as tf

        if training and self.trainable:
            outputs, mean, variance = tf.compat.v1.nn.fused_batch_norm(
                inputs, self.gamma, self.beta, epsilon=self.epsilon, is_training=True)[:3]
            # The kernel returns the unbiased batch variance; Keras's moving
            # variance averages the biased one.
            count = tf.cast(tf.size(inputs) // tf.shape(inputs)[-1], variance.dtype)
            variance = variance * (count - 1.0) / tf.maximum(count, 1.0)
            self.moving_mean.assign(self.moving_mean * self.momentum
                                    + mean * (1.0 - self.momentum))
            self.moving_variance.assign(self.moving_variance * self.momentum
                                        + variance * (1.0 - self.momentum))
            return outputs
        return tf.compat.v1.nn.fused_batch_norm(
            inputs, self.gamma, self.beta, mean=self.moving_mean,
            variance=self.moving_variance, epsilon=self.epsilon, is_training=False)[0]


@keras.saving.register_keras_serializable(package="harness")
class PointEmbedding(keras.layers.Layer):
    """A learned vector per board point added to that point's token: the
    transformer's position encoding (absolute, so it learns edges, corners
    and the 3-4 points of its board size)."""

    def __init__(self, initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.initializer = keras.initializers.get(initializer)

    def build(self, input_shape):
        self.table = self.add_weight(shape=tuple(input_shape[1:]), name="table",
                                     initializer=self.initializer)

    def call(self, tokens):
        return tokens + ops.cast(self.table, tokens.dtype)

    def get_config(self):
        return {**super().get_config(),
                "initializer": keras.initializers.serialize(self.initializer)}


@keras.saving.register_keras_serializable(package="harness")
class RelativeAttention(keras.layers.Layer):
    """Multi-head self-attention over the board's points whose scores get a
    learned bias per head and per 2-D offset between the two points (Swin's
    relative position bias, on a board).

    A transformer that only adds absolute positions to its tokens must learn
    from data that a point's neighbours matter, separately at every point; on
    the quick dataset it stays on the most-frequent-move plateau for 200,000
    samples (docs/results.md). The offset bias is shared by every point, so a
    head can look at its neighbours (or at any fixed shape) after a few steps,
    as a convolution does from the start. ``size`` is the board's side; the
    table holds the (2 size - 1)^2 offsets; ``seed`` makes the projections'
    initial weights reproducible.
    """

    def __init__(self, heads: int, width: int, size: int, seed: int | None = None, **kwargs):
        super().__init__(**kwargs)
        if heads < 1 or width % heads or size < 1:
            raise ValueError(f"RelativeAttention needs heads >= 1 dividing width and size >= 1 "
                             f"(got heads {heads}, width {width}, size {size})")
        self.heads, self.width, self.size = int(heads), int(width), int(size)
        self.seed = seed

    def build(self, input_shape):
        channels, span = int(input_shape[-1]), 2 * self.size - 1
        self.qkv = self.add_weight(shape=(channels, 3 * self.width), name="qkv",
                                   initializer=self._glorot(0))
        self.qkv_bias = self.add_weight(shape=(3 * self.width,), name="qkv_bias",
                                        initializer="zeros")
        self.project = self.add_weight(shape=(self.width, channels), name="project",
                                       initializer=self._glorot(1))
        self.project_bias = self.add_weight(shape=(channels,), name="project_bias",
                                            initializer="zeros")
        self.offset_bias = self.add_weight(shape=(span * span, self.heads), name="offset_bias",
                                           initializer="zeros")
        row, column = divmod(np.arange(self.size * self.size), self.size)
        # offset_index[i, j]: the table row of the offset from point j to point i.
        self.offset_index = ((row[:, None] - row[None, :] + self.size - 1) * span
                             + column[:, None] - column[None, :] + self.size - 1).astype("int32")

    def _glorot(self, offset: int):
        seed = None if self.seed is None else self.seed + offset
        return keras.initializers.GlorotUniform(seed=seed)

    def call(self, tokens):
        points, heads = self.size * self.size, self.heads
        depth = self.width // heads
        # The whole layer runs in float32 whatever the compute dtype, and only
        # its result is rounded: in bfloat16, TensorFlow's graph optimiser
        # fuses its last addition with the residual one when the batch axis
        # is free, which rounds differently (0.03 in a logit between the
        # search's forward and Keras's predict). Attention is a small share
        # of a board transformer's FLOPs (its projections and MLP dominate).
        x = ops.cast(tokens, "float32")
        qkv = ops.matmul(x, ops.cast(self.qkv, "float32")) + ops.cast(self.qkv_bias, "float32")
        qkv = ops.reshape(qkv, (-1, points, 3, heads, depth))
        query = ops.transpose(qkv[:, :, 0], (0, 2, 1, 3))
        key = ops.transpose(qkv[:, :, 1], (0, 2, 3, 1))
        value = ops.transpose(qkv[:, :, 2], (0, 2, 1, 3))
        scores = ops.matmul(query, key) * (1.0 / math.sqrt(depth))
        bias = ops.take(ops.cast(self.offset_bias, "float32"), self.offset_index, axis=0)
        weights = ops.softmax(scores + ops.transpose(bias, (2, 0, 1))[None], axis=-1)
        mixed = ops.transpose(ops.matmul(weights, value), (0, 2, 1, 3))
        mixed = ops.reshape(mixed, (-1, points, self.width))
        out = ops.matmul(mixed, ops.cast(self.project, "float32"))
        return ops.cast(out + ops.cast(self.project_bias, "float32"), tokens.dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def flops_per_position(self, input_shape) -> int:
        """The query, key, value and output projections (4 x 2 T C W) and the
        scores and their weighted sum (2 x 2 T^2 W) over T points."""
        points, channels = self.size * self.size, int(input_shape[-1])
        return 4 * 2 * points * channels * self.width + 2 * 2 * points * points * self.width

    def get_config(self):
        return {**super().get_config(), "heads": self.heads, "width": self.width,
                "size": self.size, "seed": self.seed}


@keras.saving.register_keras_serializable(package="harness")
class ScoreUtility(keras.layers.Layer):
    """What a search maximises when the margin counts too: ``(1 - weight) v +
    weight (2 / pi) atan(s / scale)`` from the value ``v`` (tanh, or a win
    probability when ``sigmoid``) and the score head's expected margin ``s``
    in points, both for the side to move.

    KataGo's paper adds such a saturating score term to the win value: where
    every move wins (or loses) the win value no longer tells moves apart, and
    the margin still does, so the search keeps playing for points instead of
    drifting. A convex blend rather than a sum keeps the utility in [-1, 1],
    the range the tree's value normalisations assume; the arctangent saturates
    so that a few more points never outweigh a safe win.
    """

    def __init__(self, weight: float, scale: float, sigmoid: bool = False, **kwargs):
        super().__init__(**kwargs)
        if not 0.0 <= weight <= 1.0 or scale <= 0:
            raise ValueError(f"ScoreUtility needs 0 <= weight <= 1 and scale > 0 "
                             f"(got {weight}, {scale})")
        self.weight = float(weight)
        self.scale = float(scale)
        self.sigmoid = bool(sigmoid)

    def call(self, inputs):
        value, score = inputs
        value = ops.cast(value, "float32")
        if self.sigmoid:
            value = 2.0 * value - 1.0
        margin = ops.arctan(ops.cast(score, "float32") / self.scale) * (2.0 / math.pi)
        return (1.0 - self.weight) * value + self.weight * margin

    def compute_output_shape(self, input_shape):
        return input_shape[0]

    def get_config(self):
        return {**super().get_config(), "weight": self.weight, "scale": self.scale,
                "sigmoid": self.sigmoid}
