"""Trunk blocks: functions from a Keras tensor to a Keras tensor, one per block design.

Bias and batch-norm placement follow the papers exactly where a parameter
count depends on it (Cazenave V.A): his residual and stem convolutions carry
a bias although batch norm follows; his MobileNet convolutions do not.
"""

from __future__ import annotations

from keras import layers

from harness.nets.builder import LayerMaker
from harness.nets.layers import FusedBatchNormalization, MaxAverageOut


def agz_block(x, filters: int, make: LayerMaker):
    """AlphaGo Zero residual block: conv-BN-ReLU-conv-BN, add the input, ReLU."""
    y = make.bn_relu(make.conv(filters, 3)(x))
    y = make.bn()(make.conv(filters, 3)(y))
    return make.relu()(layers.Add()([x, y]))


def golois_block(x, filters: int, make: LayerMaker):
    """Golois residual block (Cazenave V.A): ReLU right after each convolution,
    one batch norm after the addition."""
    y = make.conv(filters, 3, activation="relu")(x)
    y = make.conv(filters, 3, activation="relu")(y)
    return make.bn()(layers.Add()([x, y]))


def inverted_residual_block(x, trunk: int, expansion: int, make: LayerMaker):
    """MobileNetV2 block as Cazenave uses it: 1x1 expand, depthwise 3x3, 1x1
    squeeze back to the trunk width (linear bottleneck), add the input.

    Batch norm runs on the fused kernel (:class:`FusedBatchNormalization`,
    same weights and arithmetic): on the expanded maps it, not the depthwise
    convolution, dominates a CPU training step (issue 19: stock depthwise
    61 ms forward and backward on 128x19x19x200, its alternatives slower;
    batch norm and ReLU 212 ms, fused 116 ms).
    """
    m = _fused_bn_relu(make.conv(expansion, 1, bias=False)(x), make)
    m = _fused_bn_relu(make.depthwise(3)(m), make)
    m = FusedBatchNormalization()(make.conv(trunk, 1, bias=False)(m))
    return layers.Add()([m, x])


def _fused_bn_relu(x, make: LayerMaker):
    return make.relu()(FusedBatchNormalization()(x))


def basic_block(x, filters: int, make: LayerMaker):
    """ResNet18 basic block; a 1x1 projection shortcut when the width changes.

    Stride is always 1: a Go board is too small to halve, and per-point heads
    need the full-resolution map.
    """
    shortcut = x
    if x.shape[-1] != filters:
        shortcut = make.bn()(make.conv(filters, 1, bias=False)(x))
    y = make.bn_relu(make.conv(filters, 3, bias=False)(x))
    y = make.bn()(make.conv(filters, 3, bias=False)(y))
    return make.relu()(layers.Add()([shortcut, y]))


def preact_block(x, filters: int, make: LayerMaker):
    """Pre-activation residual block (BN-ReLU-conv twice), the plain NoGoZero+ block."""
    y = make.conv(filters, 3, bias=False)(make.bn_relu(x))
    y = make.conv(filters, 3, bias=False)(make.bn_relu(y))
    return layers.Add()([x, y])


def garb_split(channels: int) -> tuple[int, int]:
    """Widths of X and G in a GARB: G takes C/3 (rounded), X twice that, so the
    fully connected layer maps 2*|G| pooled values to |X| without reduction."""
    g = max(1, round(channels / 3))
    return 2 * g, g


def global_pooling_bias(x, g, make: LayerMaker):
    """NoGoZero+ global pooling structure: BN+ReLU on G, mean and max over the
    board, a fully connected layer to X's width, added to every point of X."""
    g = make.bn_relu(g)
    pooled = layers.Concatenate()([layers.GlobalAveragePooling2D()(g),
                                   layers.GlobalMaxPooling2D()(g)])
    bias = make.dense(x.shape[-1])(pooled)
    bias = layers.Reshape((1, 1, x.shape[-1]))(bias)
    return layers.Add()([x, bias])


def garb_block(x, filters: int, make: LayerMaker):
    """Global attention residual block (NoGoZero+ 3.2.1), pre-activation style:
    two convolutions split the input into X and G, G biases X through the
    global pooling structure, a last convolution restores the width."""
    return global_pooling_block(x, filters, *garb_split(filters), make)


def global_pooling_block(x, filters: int, x_width: int, g_width: int, make: LayerMaker):
    """A pre-activation residual block whose first convolution is split into
    ``x_width`` regular channels and ``g_width`` channels pooled over the board
    into a bias of the regular ones (NoGoZero+'s GARB, KataGo's gpool block)."""
    t = make.bn_relu(x)
    biased = global_pooling_bias(make.conv(x_width, 3, bias=False)(t),
                                 make.conv(g_width, 3, bias=False)(t), make)
    y = make.conv(filters, 3, bias=False)(make.bn_relu(biased))
    return layers.Add()([x, y])


def nbt_widths(channels: int) -> tuple[int, int]:
    """KataGo's nested-bottleneck widths: the inner blocks run at half the
    trunk, a third of which is pooled in a global-pooling block (b18c384nbt:
    192 and 64)."""
    mid = max(2, channels // 2)
    return mid, max(1, mid // 3)


def nested_bottleneck_block(x, channels: int, make: LayerMaker, *, pooled: bool,
                            inner: int = 2):
    """KataGo's nested-bottleneck residual block: a 1x1 convolution to half
    the width, ``inner`` pre-activation residual blocks there (the first with
    global pooling when ``pooled``), a 1x1 convolution back, added to the
    trunk. Every convolution is pre-activated (BN, ReLU, conv). KataGo's
    pooling also feeds the mean scaled by board width, a constant multiple
    of the mean on one board size, so mean and max are pooled here."""
    mid, gpool = nbt_widths(channels)
    y = make.conv(mid, 1, bias=False)(make.bn_relu(x))
    for i in range(inner):
        if pooled and i == 0:
            y = global_pooling_block(y, mid, mid - gpool, gpool, make)
        else:
            y = preact_block(y, mid, make)
    y = make.conv(channels, 1, bias=False)(make.bn_relu(y))
    return layers.Add()([x, y])


def mlpconv(x, width: int, make: LayerMaker, *, bn: bool = False):
    """Network-in-network mlpconv layer: a 3x3 convolution and a 1x1 one, both
    ReLU; ``bn``: batch norm between each convolution (then without bias) and
    its ReLU."""
    if not bn:
        x = make.conv(width, 3, activation="relu")(x)
        return make.conv(width, 1, activation="relu")(x)
    x = make.bn_relu(make.conv(width, 3, bias=False)(x))
    return make.bn_relu(make.conv(width, 1, bias=False)(x))


def mao_block(x, width: int, pieces: int, dropout: float, make: LayerMaker, *,
              bn: bool = False):
    """MAO block (MAO paper figure 3): a MAO layer followed by two mlpconv
    layers (``bn``: batch-normalised ones)."""
    x = MaxAverageOut(width, pieces, dropout, seed=make.next_seed(),
                      kernel_initializer=_glorot(make))(x)
    x = mlpconv(x, width, make, bn=bn)
    return mlpconv(x, width, make, bn=bn)


def _glorot(make: LayerMaker):
    seed = make.next_seed()
    return {"class_name": "GlorotUniform", "config": {"seed": seed}}
