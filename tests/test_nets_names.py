"""Model names: the papers' spellings parse to the papers' networks, and back."""

from __future__ import annotations

import pytest

from harness.nets import ModelSpec, model_names, parse_model_name
from harness.nets.names import canonical_name, with_overrides


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # Cazenave V.A: the small networks change size with their heads.
        ("a0.small", dict(family="resnet", blocks=8, width=66, policy_head="az",
                          value_head="az", value_loss="mse", golois=False)),
        ("a0.small.avg", dict(blocks=10, width=63, policy_head="az", value_head="avg")),
        ("a0.small.avg.conv.bin", dict(blocks=13, width=64, policy_head="conv",
                                       value_head="avg", value_loss="bce", golois=True)),
        ("mobile.small", dict(family="mobile", blocks=25, width=64, expansion=200,
                              policy_head="az", value_head="avg", value_loss="mse")),
        ("mobile.small.conv.avg.bin", dict(blocks=33, width=64, expansion=200,
                                           policy_head="conv", value_loss="bce")),
        ("mobile.small.conv.avg.bin.val4", dict(blocks=33, value_weight=4.0)),
        ("mobile.conv.avg.bin.60.128.512", dict(blocks=60, width=128, expansion=512)),
        ("a0.20.256", dict(blocks=20, width=256, policy_head="az", value_head="az")),
        ("mao", dict(family="mao", blocks=2, width=40, pieces=4, policy_head="mao",
                     value_head="mao", dropout=0.25)),
        ("mao.2.40.4.d10", dict(dropout=0.10, paper_value=False)),
        ("mao.paper", dict(blocks=2, width=40, pieces=4, value_head="mao", dropout=0.25,
                           paper_value=True)),
        ("garb.5.32", dict(family="garb", blocks=5, width=32, value_loss="bce",
                           ownership=True, score=True)),
        ("garb.mse.noown.noscore.5.32", dict(value_loss="mse", ownership=False, score=False)),
        ("resnet18", dict(family="resnet18", width=64)),
        ("qiqiao", dict(family="qiqiao", conv_widths=(32, 64, 128), policy_head="qiqiao")),
        ("a0.az.own.score.s5.6.64", dict(ownership=True, score=True, score_scale=5.0)),
        ("mao.az.conv.1.8.2", dict(policy_head="conv", value_head="az")),
    ],
)
def test_paper_names_parse_to_the_papers_settings(name, expected):
    spec = parse_model_name(name)
    for field, value in expected.items():
        assert getattr(spec, field) == value, field


@pytest.mark.parametrize("name", [*model_names(), "a0.conv.agz.5.32", "mobile.az.10.128.512",
                                  "mao.az.avg.bin.1.8.2", "a0.stem3.own.3.32", "garb.s5.2.12",
                                  "mao.paper", "mao.conv.paper.tiny", "mao.d10.paper.bin.1.8.2",
                                  "transformer.stem1.abs.tiny", "transformer.abs.2.32.4"])
def test_canonical_name_parses_back_to_the_same_spec(name):
    spec = parse_model_name(name)
    assert parse_model_name(spec.name) == spec
    assert canonical_name(parse_model_name(spec.name)) == spec.name


def test_canonical_names_keep_the_papers_spelling():
    assert parse_model_name("mobile.small.conv.avg.bin").name == "mobile.conv.avg.bin.33.64.200"
    assert parse_model_name("a0.small.avg.conv.bin").name == "a0.conv.avg.bin.13.64"
    assert parse_model_name("resnet.20.256").name == "a0.20.256"
    assert parse_model_name("A0.20.256").name == "a0.20.256"


def test_value_convention_is_readable_from_every_canonical_name():
    for name in model_names():
        spec = parse_model_name(name)
        assert ("bin" in spec.name.split(".")) == (spec.value_loss == "bce"), name


def test_every_family_has_a_small_and_a_tiny_preset():
    names = set(model_names())
    for family in ("a0", "mobile", "mao", "garb", "resnet18", "qiqiao"):
        assert f"{family}.small" in names
        assert f"{family}.tiny" in names


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "empty model name"),
        ("alexnet.8.64", "unknown family 'alexnet'"),
        ("a0.20", "a0 takes 2 size numbers (a0.BLOCKS.FILTERS), got 1"),
        ("a0.20.256.3", "takes 2 size numbers"),
        ("a0", "size numbers missing"),
        ("a0..20.256", "empty token"),
        ("a0.fast.20.256", "unknown option 'fast'"),
        ("a0.bin.mse.6.64", "conflicts with 'bin'"),
        ("mobile.d10.5.32.64", "mao"),
        ("a0.small.8.66", "not both"),
        ("garb.5.2", "at least 3 channels"),
        ("a0.0.64", "from 1 to 4096"),
        ("mao.1.8.2.d100", "dN"),
        ("a0.paper.2.16", "applies to mao models only"),
        ("a0.stem1.2.16", "applies to transformer models only"),
        ("transformer.stem3.tiny", "applies to a0 models only"),
        ("mobile.abs.tiny", "applies to transformer models only"),
        ("transformer.stem1.stem3.tiny", "conflicts with 'stem1'"),
        ("mao.avg.paper.1.8.2", "needs the MAO value head"),
    ],
)
def test_bad_names_fail_with_one_line_naming_the_problem_and_the_forms(name, problem):
    with pytest.raises(ValueError) as info:
        parse_model_name(name)
    message = str(info.value)
    assert problem in message
    assert "\n" not in message
    assert "mobile.BLOCKS.TRUNK.EXPANSION" in message


def test_overrides_change_heads_and_value_convention():
    spec = with_overrides(parse_model_name("a0.6.64"), heads=("policy", "value", "score"),
                          value_loss="bce")
    assert spec.heads == ("policy", "value", "score")
    assert spec.name == "a0.bin.score.6.64"
    with pytest.raises(ValueError, match="unknown heads"):
        with_overrides(spec, heads=("policy", "territory"))
    with pytest.raises(ValueError, match="unknown value loss"):
        with_overrides(spec, value_loss="hinge")


def test_katago_auxiliary_policies_are_heads_by_name_and_by_override():
    spec = parse_model_name("a0.soft.reply.4.32")
    assert spec.reply and spec.soft_policy
    assert spec.heads == ("policy", "value", "reply", "soft_policy")
    assert spec.name == "a0.reply.soft.4.32"
    assert parse_model_name(spec.name) == spec
    plain = with_overrides(spec, heads=("policy", "value", "score"))
    assert not plain.reply and not plain.soft_policy and plain.score
    assert with_overrides(plain, heads=("policy", "value", "reply")).heads == (
        "policy", "value", "reply")


def test_spec_is_a_plain_frozen_dataclass():
    spec = parse_model_name("a0.6.64")
    assert isinstance(spec, ModelSpec)
    with pytest.raises(AttributeError):
        spec.blocks = 3
