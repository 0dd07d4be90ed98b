"""What the zoo's pieces do: MAO selection, GARB global context, head symmetry,
the papers' parameter counts, FLOPs, seeding, safe loading, the commands."""

from __future__ import annotations

import argparse
import itertools
import zipfile

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from harness.nets import (  # noqa: E402
    ModelFileError,
    blocks,
    build_model,
    heads,
    load_model,
    model_summary,
    save_model,
    value_loss_of,
)
from harness.nets.builder import LayerMaker  # noqa: E402
from harness.nets.layers import MaxAverageOut, RelativeAttention  # noqa: E402
from harness.nets.registry import PRESETS  # noqa: E402

# --- MAO ------------------------------------------------------------------------


def _mao_reference(x, kernel, bias, units, pieces):
    """Equations (2)-(7) of the MAO paper in plain numpy ("same" padding)."""
    n, h, w, _ = x.shape
    k = kernel.shape[0]
    r = k // 2
    padded = np.pad(x, ((0, 0), (r, r), (r, r), (0, 0)))
    maps = np.zeros((n, h, w, kernel.shape[-1]))
    for dy, dx in itertools.product(range(k), range(k)):
        maps += padded[:, dy:dy + h, dx:dx + w, :] @ kernel[dy, dx]
    maps = (maps + bias).reshape(n, h, w, units, pieces)
    means = maps.mean(axis=(1, 2), keepdims=True)
    chosen = means >= means.max(axis=-1, keepdims=True)
    return (maps * chosen).sum(axis=-1)


def test_mao_unit_outputs_the_map_with_the_largest_board_average():
    # One unit, two 1x1 pieces: piece 0 copies channel 0, piece 1 channel 1.
    layer = MaxAverageOut(units=1, pieces=2, kernel_size=1)
    layer.build((None, 3, 3, 2))
    layer.set_weights([np.eye(2, dtype=np.float32).reshape(1, 1, 2, 2), np.zeros(2, np.float32)])
    spread = np.array([[4, 0, 0], [0, 0, 0], [0, 0, 0]], np.float32)  # mean 0.44
    even = np.full((3, 3), 0.3, np.float32)  # mean 0.30
    x = np.stack([spread, even], axis=-1)[None]
    np.testing.assert_allclose(np.asarray(layer(x))[0, :, :, 0], spread)
    np.testing.assert_allclose(np.asarray(layer(x[..., ::-1]))[0, :, :, 0], spread)
    x_low = np.stack([spread / 4, even], axis=-1)[None]  # mean 0.11: the even map wins
    np.testing.assert_allclose(np.asarray(layer(x_low))[0, :, :, 0], even)


def test_mao_selector_is_stochastic_in_training_and_the_identity_at_inference():
    rng = np.random.default_rng(0)
    units, pieces, channels, rate = 3, 2, 5, 0.5
    layer = MaxAverageOut(units, pieces, dropout=rate, seed=11)
    x = rng.normal(size=(4, 5, 5, channels)).astype(np.float32)
    inference = np.asarray(layer(x, training=False))
    kernel, bias = (np.asarray(w, np.float64) for w in layer.get_weights())

    # Inference: all channels pass; the output is the paper's equations.
    np.testing.assert_array_equal(inference, np.asarray(layer(x, training=False)))
    np.testing.assert_allclose(inference, _mao_reference(x, kernel, bias, units, pieces),
                               rtol=1e-4, atol=1e-4)

    # Training: two calls differ, and each sample's output is the inference
    # computation on that sample with some whole input channels dropped (the
    # 1x1xC selector mask), the kept ones scaled by 1/(1-rate).
    first, second = (np.asarray(layer(x, training=True)) for _ in range(2))
    assert not np.allclose(first, second)
    assert not np.allclose(first, inference)
    masks = np.array(list(itertools.product((0.0, 1.0 / (1 - rate)), repeat=channels)))
    for sample in range(len(x)):
        candidates = _mao_reference(x[sample][None] * masks[:, None, None, :], kernel, bias,
                                    units, pieces)
        errors = np.abs(candidates - first[sample][None]).max(axis=(1, 2, 3))
        assert errors.min() < 1e-3, sample


def test_mao_without_dropout_trains_like_it_infers():
    layer = MaxAverageOut(2, 3, dropout=0.0)
    x = np.random.default_rng(1).normal(size=(2, 4, 4, 3)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(layer(x, training=True)),
                                  np.asarray(layer(x, training=False)))


# --- GARB: global context ----------------------------------------------------------


def _block_model(block, size=9, channels=12, seed=5):
    make = LayerMaker(seed)
    inputs = keras.Input((size, size, channels))
    return keras.Model(inputs, block(inputs, channels, make))


@pytest.mark.parametrize(("block", "sees_far_corner"), [
    (blocks.garb_block, True),
    (blocks.preact_block, False),
    (blocks.agz_block, False),
])
def test_only_the_garb_block_sees_the_opposite_corner(block, sees_far_corner):
    model = _block_model(block)
    x = np.random.default_rng(2).normal(size=(1, 9, 9, 12)).astype(np.float32)
    moved = x.copy()
    moved[0, 8, 8, :] += 3.0  # a stone appears at the far corner
    before = np.asarray(model(x, training=False))[0, 0, 0]
    after = np.asarray(model(moved, training=False))[0, 0, 0]
    if sees_far_corner:
        assert np.abs(after - before).max() > 1e-4
    else:
        np.testing.assert_array_equal(after, before)


def test_garb_splits_channels_two_thirds_and_one_third():
    assert blocks.garb_split(24) == (16, 8)
    assert blocks.garb_split(128) == (86, 43)


# --- policy heads and board symmetries ------------------------------------------


def _symmetries():
    for k in range(4):
        for flip in (False, True):
            yield lambda a, k=k, flip=flip: np.rot90(a[:, ::-1] if flip else a, k, axes=(0, 1))


def _head_model(head, size=7, channels=6):
    inputs = keras.Input((size, size, channels))
    return keras.Model(inputs, head(inputs, size, LayerMaker(4)))


def _board_logits(model, features, size):
    logits = np.asarray(model(features[None], training=False))[0]
    return logits[:-1].reshape(size, size), logits[-1]


def test_fully_convolutional_policy_rotates_with_the_board():
    size = 7
    model = _head_model(heads.conv_policy, size)
    features = np.random.default_rng(3).normal(size=(size, size, 6)).astype(np.float32)
    board, pass_logit = _board_logits(model, features, size)
    for symmetry in _symmetries():
        moved_board, moved_pass = _board_logits(model, np.ascontiguousarray(symmetry(features)),
                                                size)
        np.testing.assert_allclose(moved_board, symmetry(board), rtol=1e-5, atol=1e-5)
        assert moved_pass == pass_logit == 0.0


def test_alphazero_policy_head_is_not_equivariant():
    size = 7
    model = _head_model(heads.az_policy, size)
    features = np.random.default_rng(3).normal(size=(size, size, 6)).astype(np.float32)
    board, _ = _board_logits(model, features, size)
    rotate = np.rot90
    moved_board, _ = _board_logits(model, np.ascontiguousarray(rotate(features)), size)
    assert not np.allclose(moved_board, rotate(board), atol=1e-3)


# --- parameter counts and FLOPs --------------------------------------------------

CAZENAVE_V_A = {  # 19x19, 21 input planes (Cazenave III and IV.E); val4 is the fifth
    "a0.small": 988_405,
    "a0.small.avg": 986_748,
    "a0.small.avg.conv.bin": 968_485,
    "mobile.small": 997_506,
    "mobile.small.conv.avg.bin": 970_477,
}


@pytest.mark.parametrize(("name", "params"), CAZENAVE_V_A.items())
def test_cazenave_small_networks_have_the_papers_parameter_counts(name, params):
    assert build_model(name, 19, 21).count_params() == params


def test_qiqiao_matches_a_count_by_hand_of_its_published_layers():
    # 9x9, 10 planes: three 3x3 convolutions; policy 1x1x8, dense 256, dense 82;
    # value 1x1x4, dense 128, dense 64, dense 1 (all with biases).
    by_hand = ((10 * 9 + 1) * 32 + (32 * 9 + 1) * 64 + (64 * 9 + 1) * 128
               + (128 + 1) * 8 + (648 + 1) * 256 + (256 + 1) * 82
               + (128 + 1) * 4 + (324 + 1) * 128 + (128 + 1) * 64 + 65)
    assert by_hand == 333_951
    assert build_model("qiqiao", 9, 10).count_params() == by_hand


def test_flops_per_position_match_a_count_by_hand():
    points = 361
    a0_small = 2 * points * (21 * 66 + 16 * 9 * 66 * 66 + 66 * 2 + 66) + 2 * (722 * 361
                                                                           + 361 * 256 + 256)
    assert model_summary(build_model("a0.small", 19, 21))["flops"] == a0_small
    block = 64 * 200 + 9 * 200 + 200 * 64
    mobile = 2 * points * (21 * 64 + 33 * block + 64) + 2 * (64 * 50 + 50)
    assert model_summary(build_model("mobile.small.conv.avg.bin", 19, 21))["flops"] == mobile


def test_a_nested_bottleneck_net_matches_a_count_by_hand():
    # b3c12nbt.conv.avg on 9x9 with 17 planes: trunk 12, inner blocks at 6, of
    # which 2 pooled in the third (pooled) block. Convolutions carry no bias;
    # every batch norm counts 4 numbers per channel (as Keras counts them).
    bn = 4
    stem = 9 * 17 * 12
    preact6 = 2 * (bn * 6 + 9 * 6 * 6)
    squeeze_expand = bn * 12 + 12 * 6 + bn * 6 + 6 * 12
    plain = squeeze_expand + 2 * preact6
    pooled_inner = (bn * 6 + 9 * 6 * 4 + 9 * 6 * 2 + bn * 2 + (2 * 2 * 4 + 4)
                    + bn * 4 + 9 * 4 * 6)
    pooled = squeeze_expand + pooled_inner + preact6
    heads = 12 + (12 * 50 + 50) + (50 + 1)  # conv policy; pooled value 50, 1
    by_hand = stem + 2 * plain + pooled + bn * 12 + heads
    assert by_hand == 7_333
    model = build_model("b3c12nbt.conv.avg", 9, 17)
    assert model.count_params() == by_hand
    macs = (9 * 17 * 12 + 2 * (12 * 6 + 4 * 9 * 6 * 6 + 6 * 12)
            + (12 * 6 + 9 * 6 * 4 + 9 * 6 * 2 + 9 * 4 * 6 + 2 * 9 * 6 * 6 + 6 * 12) + 12) * 81
    assert model_summary(model)["flops"] == 2 * macs + 2 * (4 * 4) + 2 * (12 * 50 + 50)


def test_a_transformer_counts_attention_and_token_wise_layers_by_hand():
    # transformer.tiny on 9x9, 3 planes: 81 tokens of 16 from a 3x3 stem, 2 blocks
    # of 2 heads of 8, each with a bias per head for the 17 x 17 board offsets.
    t, w = 81, 16
    model = build_model("transformer.tiny", 9, 3)
    embed = (9 * 3 * w + w) + t * w
    offsets = 17 * 17 * 2
    block = 2 * w + (4 * w * w + 4 * w) + offsets + 2 * w + (w * 2 * w + 2 * w) + (2 * w * w + w)
    heads = w + (w * 50 + 50) + 51
    assert model.count_params() == embed + 2 * block + 2 * w + heads
    macs = t * 9 * 3 * w + 2 * (4 * t * w * w + 2 * t * t * w + 2 * t * w * 2 * w) + t * w
    assert model_summary(model)["flops"] == 2 * macs + 2 * (w * 50 + 50)


def test_the_plain_transformer_embeds_points_linearly_with_absolute_positions():
    # stem1.abs: a dense embedding of each point's planes and Keras's own attention.
    t, w = 81, 16
    model = build_model("transformer.stem1.abs.tiny", 9, 3)
    embed = (3 * w + w) + t * w
    block = 2 * w + (4 * w * w + 4 * w) + 2 * w + (w * 2 * w + 2 * w) + (2 * w * w + w)
    heads = w + (w * 50 + 50) + 51
    assert model.count_params() == embed + 2 * block + 2 * w + heads
    assert not any(isinstance(layer, RelativeAttention) for layer in model.layers)
    macs = t * 3 * w + 2 * (4 * t * w * w + 2 * t * t * w + 2 * t * w * 2 * w) + t * w
    assert model_summary(model)["flops"] == 2 * macs + 2 * (w * 50 + 50)


def test_an_offset_bias_alone_makes_attention_copy_each_points_left_neighbour():
    # Queries and keys are zero, so the scores are the offset bias alone; values
    # and the output projection are the identity. A large bias on the offset
    # "one column to the right of the key" makes every point read the token of
    # the point on its left, as a shift by one column would.
    size, width = 5, 4
    layer = RelativeAttention(heads=2, width=width, size=size)
    tokens = np.random.default_rng(0).normal(size=(3, size * size, width)).astype("float32")
    layer(tokens)
    qkv = np.zeros((width, 3 * width), "float32")
    qkv[:, 2 * width:] = np.eye(width)
    span = 2 * size - 1
    bias = np.zeros((span * span, 2), "float32")
    bias[(size - 1) * span + size] = 50.0  # row offset 0, column offset +1
    layer.set_weights([qkv, np.zeros(3 * width), np.eye(width), np.zeros(width), bias])
    out = np.asarray(layer(tokens)).reshape(3, size, size, width)
    board = tokens.reshape(3, size, size, width)
    np.testing.assert_allclose(out[:, :, 1:], board[:, :, :-1], atol=1e-5)


def test_summary_reports_heads_params_and_value_convention():
    info = model_summary(build_model("garb.tiny", 9, 17))
    assert info["heads"] == ["policy", "value", "ownership", "score"]
    assert info["value_loss"] == "bce"
    assert info["family"] == "garb"
    assert info["board_size"] == 9 and info["input_planes"] == 17
    assert info["params"] > info["trainable_params"] > 0  # BN statistics count as params


@pytest.mark.parametrize("name", [p.name for p in PRESETS if p.scale == "tiny"])
@pytest.mark.parametrize("board", [5, 13])
def test_any_board_size_and_input_width_builds(name, board):
    model = build_model(name, board, 3)
    assert tuple(model.get_layer("policy").output.shape) == (None, board * board + 1)


def test_bad_board_sizes_are_refused():
    with pytest.raises(ValueError, match="board size 1"):
        build_model("a0.tiny", 1, 3)
    with pytest.raises(ValueError, match="input planes"):
        build_model("a0.tiny", 9, 0)


# --- seeding, value convention, files --------------------------------------------


def test_same_seed_same_weights_other_seed_other_weights():
    a, b, c = (build_model("mao.tiny", 5, 3, seed=s) for s in (1, 1, 2))
    for wa, wb in zip(a.get_weights(), b.get_weights(), strict=True):
        np.testing.assert_array_equal(wa, wb)
    assert not all(np.array_equal(wa, wc) for wa, wc in
                   zip(a.get_weights(), c.get_weights(), strict=True))


def test_value_convention_is_discoverable_after_loading(tmp_path):
    model = build_model("a0.tiny", 5, 3, value_loss="bce", heads=("policy", "value", "score"))
    assert model.name == "a0.bin.score.2.16"
    assert model.value_loss == value_loss_of(model) == "bce"
    loaded = load_model(save_model(model, tmp_path / "m.keras"))
    assert loaded.value_loss == "bce"
    assert loaded.spec == model.spec
    assert loaded.get_layer("value").activation.__name__ == "sigmoid"


def test_load_model_names_the_file_on_bad_input(tmp_path):
    missing = tmp_path / "missing.keras"
    text = tmp_path / "notes.keras"
    text.write_text("not a model")
    foreign = tmp_path / "foreign.keras"
    with zipfile.ZipFile(foreign, "w") as archive:
        archive.writestr("readme.txt", "hello")
    good = save_model(build_model("qiqiao.tiny", 5, 3), tmp_path / "good.keras")
    truncated = tmp_path / "truncated.keras"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    for path in (missing, text, foreign, truncated):
        with pytest.raises(ModelFileError) as info:
            load_model(path)
        message = str(info.value)
        assert message.startswith(str(path)) and "\n" not in message


def test_save_leaves_no_temporary_files(tmp_path):
    save_model(build_model("qiqiao.tiny", 5, 3), tmp_path / "m.keras")
    assert [p.name for p in tmp_path.iterdir()] == ["m.keras"]
    with pytest.raises(ValueError, match=r"\.keras"):
        save_model(build_model("qiqiao.tiny", 5, 3), tmp_path / "m.h5")


# --- commands ------------------------------------------------------------------


def _args(module, argv):
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    return parser.parse_args(argv)


def test_models_command_prints_the_zoo(capsys, tmp_path):
    from harness.cli import main
    from harness.commands import models as command

    stem = tmp_path / "zoo"
    args = _args(command, ["a0.tiny", "garb.tiny", "--board-size", "9", "--planes", "17",
                           "--save", str(stem)])
    assert command.run(args) == 0
    out = capsys.readouterr().out
    assert "board 9x9, 17 input planes" in out
    assert "| garb.tiny" in out and "policy+value+ownership+score" in out
    assert "NoGoZero+" in out
    assert stem.with_suffix(".csv").read_text().startswith("name,canonical,family,params")
    assert main(["models", "a0.9"]) == 2


def test_bench_models_times_forward_and_training(capsys, tmp_path):
    from harness.bench import models

    stem = tmp_path / "bench"
    args = _args(models, ["a0.tiny", "--board-size", "5", "--planes", "3", "--batch-sizes",
                          "1,4", "--train-batch", "4", "--seconds", "0.01", "--save", str(stem)])
    assert models.run(args) == 0
    rows = stem.with_suffix(".csv").read_text().strip().splitlines()
    assert rows[0] == ("model,board,params,MFLOPs,pass,batch,positions/s,batches/s,"
                       "GFLOP/s,of peak,precision")
    passes = [(r.split(",")[4], r.split(",")[5]) for r in rows[1:]]
    assert passes == [("peak", "-"), ("forward", "1"), ("forward", "4"), ("train", "4")]
    assert all(float(r.split(",")[6]) > 0 for r in rows[2:])
    assert "| a0.tiny" in capsys.readouterr().out
