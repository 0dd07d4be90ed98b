"""Output heads. Each takes the trunk's feature map and returns one named output.

Outputs and their conventions (all from the side to move):

- ``policy``: B*B+1 logits (row-major points, then pass); no softmax.
- ``value``: tanh in [-1, 1] for MSE training, or sigmoid in [0, 1] (probability
  of winning) for binary cross-entropy; ``value_loss`` "mse" or "bce" says which.
- ``ownership``: B*B values in [-1, 1] (tanh): +1 the point ends up the side to
  move's, -1 the opponent's. NoGoZero+ uses a sigmoid over "dominion / not";
  Go has neutral points, so the signed form matches the dataset's +1/-1/0.
- ``score``: final margin in points, tanh times a scale (NoGoZero+ 3.2.2).
- ``reply``, ``soft_policy``: auxiliary policies (``harness.nets.names.HEADS``),
  built by the network's own policy head under another name.
"""

from __future__ import annotations

from keras import layers

from harness.nets.blocks import global_pooling_bias, mao_block
from harness.nets.builder import LayerMaker
from harness.nets.layers import MaxAverageOut, PassLogit

VALUE_ACTIVATION = {"mse": "tanh", "bce": "sigmoid"}


def az_policy(x, board_size: int, make: LayerMaker, name: str = "policy"):
    """AlphaGo Zero: 1x1 convolution to 2 planes, BN, ReLU, dense to the board."""
    p = make.bn_relu(make.conv(2, 1)(x))
    p = make.dense(board_size * board_size)(layers.Flatten()(p))
    return PassLogit(name=name)(p)


def conv_policy(x, board_size: int, make: LayerMaker, name: str = "policy"):
    """Fully convolutional (Polygames, Cazenave IV.C): 1x1 convolution to one
    plane, no bias, flattened. It commutes with the board symmetries."""
    p = make.conv(1, 1, bias=False)(x)
    return PassLogit(name=name)(layers.Flatten()(p))


def qiqiao_policy(x, board_size: int, make: LayerMaker, name: str = "policy"):
    """Qiqiao: 1x1 convolution to 8 planes, dense 256, dense to every move."""
    p = make.conv(8, 1, activation="relu")(x)
    p = make.dense(256, activation="relu")(layers.Flatten()(p))
    return make.dense(board_size * board_size + 1, name=name)(p)


def mao_policy(x, board_size: int, make: LayerMaker, name: str = "policy", *, width: int,
               pieces: int, dropout: float):
    """MAO network policy piece: a MAO block, a MAO layer with one unit per
    move, global average pooling to the logits."""
    p = mao_block(x, width, pieces, dropout, make)
    p = _mao_out(p, board_size * board_size + 1, pieces, dropout, make)
    return layers.GlobalAveragePooling2D(name=name)(p)


def az_value(x, value_loss: str, make: LayerMaker):
    """AlphaGo Zero: 1x1 convolution to 1 plane, BN, ReLU, dense 256, dense 1."""
    v = make.bn_relu(make.conv(1, 1)(x))
    v = make.dense(256, activation="relu")(layers.Flatten()(v))
    return make.dense(1, activation=VALUE_ACTIVATION[value_loss], name="value")(v)


def avg_value(x, value_loss: str, make: LayerMaker):
    """Global average pooling, dense 50, dense 1 (Cazenave IV.C)."""
    v = layers.GlobalAveragePooling2D()(x)
    v = make.dense(50, activation="relu")(v)
    return make.dense(1, activation=VALUE_ACTIVATION[value_loss], name="value")(v)


def qiqiao_value(x, value_loss: str, make: LayerMaker):
    """Qiqiao: 1x1 convolution to 4 planes, dense 128, dense 64, dense 1."""
    v = make.conv(4, 1, activation="relu")(x)
    v = make.dense(128, activation="relu")(layers.Flatten()(v))
    v = make.dense(64, activation="relu")(v)
    return make.dense(1, activation=VALUE_ACTIVATION[value_loss], name="value")(v)


def mao_value(x, value_loss: str, make: LayerMaker, *, width: int, pieces: int,
              dropout: float, paper: bool = False):
    """MAO network value piece: a MAO block, a one-unit MAO layer, global
    average pooling, then the value activation.

    ``paper``: as the paper has it. Otherwise (the zoo's default) its MAO
    layers have no channel selectors and its mlpconv layers batch-normalise
    before each ReLU: the pooled value differs between positions by about
    0.001 at initialisation, less than the selectors' noise, and at lr 0.006
    training shrinks it to a constant, after which the block's ReLUs die
    (docs/results.md, "Why the MAO value head predicted a constant")."""
    dropout = dropout if paper else 0.0
    v = mao_block(x, width, pieces, dropout, make, bn=not paper)
    v = layers.GlobalAveragePooling2D()(_mao_out(v, 1, pieces, dropout, make))
    return layers.Activation(VALUE_ACTIVATION[value_loss], name="value")(v)


def _mao_out(x, units: int, pieces: int, dropout: float, make: LayerMaker):
    init = {"class_name": "GlorotUniform", "config": {"seed": make.next_seed()}}
    return MaxAverageOut(units, pieces, dropout, seed=make.next_seed(),
                         kernel_initializer=init)(x)


def _global_pooling_conv(x, out_planes: int, make: LayerMaker):
    """NoGoZero+ head body: a convolutional block (BN, ReLU, 3x3 conv), then the
    global pooling convolutional block (GPS, BN, ReLU, 1x1 conv)."""
    channels = x.shape[-1]
    t = make.conv(channels, 3, bias=False)(make.bn_relu(x))
    t = global_pooling_bias(t, t, make)
    return make.conv(out_planes, 1)(make.bn_relu(t))


def ownership_head(x, board_size: int, make: LayerMaker):
    """NoGoZero+ dominion head: two planes, then a dense layer to every point."""
    o = layers.Flatten()(_global_pooling_conv(x, 2, make))
    return make.dense(board_size * board_size, activation="tanh", name="ownership")(o)


def score_head(x, scale: float, make: LayerMaker):
    """NoGoZero+ score head: one plane, a dense tanh unit, times the score scale."""
    s = layers.Flatten()(_global_pooling_conv(x, 1, make))
    s = make.dense(1, activation="tanh")(s)
    return layers.Rescaling(scale, name="score")(s)
