"""Model factories: a name, a board size and an input width in, a ``keras.Model`` out."""

from __future__ import annotations

from collections.abc import Iterable

import keras
from keras import layers

from harness.nets import blocks
from harness.nets import heads as head_fns
from harness.nets.builder import LayerMaker
from harness.nets.layers import PointEmbedding, RelativeAttention
from harness.nets.names import ModelSpec, parse_model_name, with_overrides

MIN_BOARD, MAX_BOARD = 2, 25


def build_model(name: str, board_size: int, input_planes: int, *,
                heads: Iterable[str] | None = None, value_loss: str | None = None,
                seed: int | None = None) -> keras.Model:
    """Build the named model for ``board_size`` x ``board_size`` inputs of ``input_planes``.

    ``heads`` replaces the name's set of outputs (policy and value are always
    built; add any of "ownership", "score", "reply", "soft_policy");
    ``value_loss`` ("mse" or "bce") replaces its value convention. The model's
    name is the canonical name of the result and ``model.value_loss`` records
    the convention.
    """
    from harness.nets.plugins import is_plugin_reference

    if is_plugin_reference(name):
        return _build_plugin(name, board_size, input_planes, heads, value_loss, seed)
    spec = with_overrides(parse_model_name(name), heads=heads, value_loss=value_loss)
    return build_from_spec(spec, board_size, input_planes, seed=seed)


def _build_plugin(reference: str, board_size: int, input_planes: int,
                  heads: Iterable[str] | None, value_loss: str | None, seed: int | None):
    """A plugin's network (:mod:`harness.nets.plugins`), checked like a zoo one.
    A factory takes no seed: with one, Keras's global seed is set first."""
    from harness.nets.plugins import PluginError, build_plugin_model
    from harness.nets.summary import value_loss_of

    _check_board(board_size, input_planes)
    wanted = ("policy", "value", *(h for h in (heads or ()) if h not in ("policy", "value")))
    if seed is not None:
        keras.utils.set_random_seed(seed)
    model = build_plugin_model(reference, int(board_size), int(input_planes), wanted)
    model.value_loss = value_loss_of(model)
    if value_loss not in (None, "auto", model.value_loss):
        raise PluginError(f"plugin model {reference!r} has a {model.value_loss} value head, "
                          f"{value_loss} was asked for")
    model.spec = None
    return model


def _check_board(board_size: int, input_planes: int) -> None:
    if not MIN_BOARD <= int(board_size) <= MAX_BOARD:
        raise ValueError(f"board size {board_size} outside {MIN_BOARD}..{MAX_BOARD}")
    if int(input_planes) < 1:
        raise ValueError(f"input planes must be at least 1, got {input_planes}")


def build_from_spec(spec: ModelSpec, board_size: int, input_planes: int, *,
                    seed: int | None = None) -> keras.Model:
    _check_board(board_size, input_planes)
    make = LayerMaker(seed)
    board = keras.Input((board_size, board_size, input_planes), name="board")
    features = TRUNKS[spec.family](board, spec, make)
    outputs = {
        "policy": _policy(features, spec, board_size, make),
        "value": _value(features, spec, make),
    }
    if spec.ownership:
        outputs["ownership"] = head_fns.ownership_head(features, board_size, make)
    if spec.score:
        scale = spec.score_scale if spec.score_scale is not None else board_size * board_size
        outputs["score"] = head_fns.score_head(features, float(scale), make)
    for head in ("reply", "soft_policy"):
        if getattr(spec, head):
            outputs[head] = _policy(features, spec, board_size, make, name=head)
    model = keras.Model(board, outputs, name=spec.name)
    model.value_loss = spec.value_loss
    model.spec = spec
    return model


def _policy(x, spec: ModelSpec, board_size: int, make: LayerMaker, name: str = "policy"):
    if spec.policy_head == "az":
        return head_fns.az_policy(x, board_size, make, name)
    if spec.policy_head == "conv":
        return head_fns.conv_policy(x, board_size, make, name)
    if spec.policy_head == "qiqiao":
        return head_fns.qiqiao_policy(x, board_size, make, name)
    return head_fns.mao_policy(x, board_size, make, name, width=spec.width, pieces=spec.pieces,
                               dropout=spec.dropout)


def _value(x, spec: ModelSpec, make: LayerMaker):
    if spec.value_head == "az":
        return head_fns.az_value(x, spec.value_loss, make)
    if spec.value_head == "avg":
        return head_fns.avg_value(x, spec.value_loss, make)
    if spec.value_head == "qiqiao":
        return head_fns.qiqiao_value(x, spec.value_loss, make)
    return head_fns.mao_value(x, spec.value_loss, make, width=spec.width, pieces=spec.pieces,
                              dropout=spec.dropout, paper=spec.paper_value)


def resnet_trunk(x, spec: ModelSpec, make: LayerMaker):
    """AlphaGo Zero tower. Cazenave's a0 networks read the 21 planes with a 1x1
    convolution (the counts of V.A need it); ``stem3`` gives AlphaGo Zero's 3x3."""
    x = make.bn_relu(make.conv(spec.width, 3 if spec.stem3 else 1)(x))
    block = blocks.golois_block if spec.golois else blocks.agz_block
    for _ in range(spec.blocks):
        x = block(x, spec.width, make)
    return x


def mobile_trunk(x, spec: ModelSpec, make: LayerMaker):
    x = make.bn_relu(make.conv(spec.width, 1)(x))
    for _ in range(spec.blocks):
        x = blocks.inverted_residual_block(x, spec.width, spec.expansion, make)
    return x


def resnet18_trunk(x, spec: ModelSpec, make: LayerMaker):
    """ResNet18's four stages of two basic blocks, widths W, 2W, 4W, 8W, on the
    board: the 7x7 stride-2 stem and max pooling become one 3x3 convolution and
    no stage halves the board."""
    x = make.bn_relu(make.conv(spec.width, 3, bias=False)(x))
    for stage in range(4):
        for _ in range(2):
            x = blocks.basic_block(x, spec.width * 2**stage, make)
    return x


def mao_trunk(x, spec: ModelSpec, make: LayerMaker):
    """MAO network (figure 4): an mlpconv stem twice the block width (80 for
    40), then the common MAO blocks; the policy and value pieces are heads."""
    x = blocks.mlpconv(x, 2 * spec.width, make)
    for _ in range(spec.blocks):
        x = blocks.mao_block(x, spec.width, spec.pieces, spec.dropout, make)
    return x


def garb_trunk(x, spec: ModelSpec, make: LayerMaker):
    """NoGoZero+ pre-activation tower: plain and global attention residual
    blocks alternate, starting with a plain one; a final BN+ReLU feeds the heads."""
    x = make.conv(spec.width, 3, bias=False)(x)
    for i in range(spec.blocks):
        block = blocks.garb_block if i % 2 else blocks.preact_block
        x = block(x, spec.width, make)
    return make.bn_relu(x)


def qiqiao_trunk(x, spec: ModelSpec, make: LayerMaker):
    for width in spec.conv_widths:
        x = make.conv(width, 3, activation="relu")(x)
    return x


def nbt_trunk(x, spec: ModelSpec, make: LayerMaker):
    """KataGo's nested-bottleneck tower (b18c384nbt's design): a 3x3 stem,
    then ``blocks`` nested-bottleneck blocks, global pooling inside every
    third one from the third on, and a final BN+ReLU for the heads."""
    x = make.conv(spec.width, 3, bias=False)(x)
    for i in range(spec.blocks):
        x = blocks.nested_bottleneck_block(x, spec.width, make, pooled=i % 3 == 2)
    return make.bn_relu(x)


def transformer_trunk(x, spec: ModelSpec, make: LayerMaker):
    """One token per point: a 3x3 convolution of the input planes plus a
    learned per-point vector, then ``blocks`` pre-norm blocks (multi-head
    self-attention over all points with a learned bias per head and board
    offset, then a two-layer MLP of twice the width, each added back), a
    final layer norm, and the points back on the board for the heads.

    The stem and the offset bias give attention the locality a convolution
    starts with; without them (``stem1.abs``: a linear embedding, absolute
    positions only) the tiny net stayed at 13% top-1 where ``a0.tiny`` reached
    33%, and each alone lifts it to 31-32% (docs/results.md). The MLP's
    activation is SiLU, not GELU: exact GELU exports to ONNX as Erfc, which
    ONNX Runtime's opset 15 lacks."""
    size = x.shape[1]
    if spec.stem1:
        tokens = make.dense(spec.width)(layers.Reshape((size * size, x.shape[-1]))(x))
    else:
        tokens = layers.Reshape((size * size, spec.width))(make.conv(spec.width, 3)(x))
    tokens = PointEmbedding()(tokens)
    for _ in range(spec.blocks):
        t = layers.LayerNormalization()(tokens)
        if spec.absolute_positions:
            t = layers.MultiHeadAttention(spec.attention_heads, spec.width // spec.attention_heads,
                                          kernel_initializer=make.initializer())(t, t)
        else:
            t = RelativeAttention(spec.attention_heads, spec.width, size, make.next_seed())(t)
        tokens = layers.Add()([tokens, t])
        t = make.dense(2 * spec.width, activation="silu")(layers.LayerNormalization()(tokens))
        tokens = layers.Add()([tokens, make.dense(spec.width)(t)])
    tokens = layers.LayerNormalization()(tokens)
    return layers.Reshape((size, size, spec.width))(tokens)


TRUNKS = {
    "resnet": resnet_trunk,
    "mobile": mobile_trunk,
    "resnet18": resnet18_trunk,
    "mao": mao_trunk,
    "garb": garb_trunk,
    "qiqiao": qiqiao_trunk,
    "nbt": nbt_trunk,
    "transformer": transformer_trunk,
}
