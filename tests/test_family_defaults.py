"""Every family learns with its own defaults (harness.train.family).

A family's optimizer settings fill what a config leaves out, and a config or
flag that sets one wins. The slow test is issue #61's item 6: each family's
tiny preset, trained with nothing but its defaults for one fixed budget of
200,000 samples on the bundled study's dataset, reaches at least 80% of
``a0.tiny``'s held-out top-1 and a value MSE below 0.8. MAO is represented
by ``mao.conv.tiny``: the paper's own policy piece ends in global average
pooling, so a move's logit cannot say where anything is (tests/
test_nets_learning.py), and at this budget it stays at 11-12% whatever the
rate (docs/results.md).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from harness.config_io import ConfigError, from_mapping
from harness.train.config import TrainConfig
from harness.train.family import FamilyDefaults, family_defaults, with_family_defaults

QUICK_DATA = Path(__file__).resolve().parents[1] / "datasets" / "quick.h5"
TINY_PRESETS = ["mobile.tiny", "mao.conv.tiny", "garb.tiny", "resnet18.tiny", "qiqiao.tiny",
                "nbt.tiny", "transformer.tiny"]
BUDGET_SAMPLES = 200_000


def _config(**values) -> TrainConfig:
    return from_mapping(TrainConfig, {"data": "d.h5", **values}, "test")


def test_a_config_without_a_rate_takes_its_familys():
    assert _config(model="resnet18.tiny").lr is None
    assert with_family_defaults(_config(model="resnet18.tiny"), "resnet18.tiny").lr == 0.005
    assert with_family_defaults(_config(model="a0.tiny"), "a0.tiny").lr == FamilyDefaults().lr


def test_a_rate_the_config_sets_wins_over_the_familys():
    config = _config(model="resnet18.tiny", lr=0.001)
    assert with_family_defaults(config, "resnet18.tiny") is config


def test_a_plugin_or_an_unknown_name_gets_the_common_defaults():
    assert family_defaults("examples/my_nets.py:dilated_tiny") == FamilyDefaults()
    assert family_defaults("no.such.family") == FamilyDefaults()


def test_a_schedule_needs_the_rate_filled_first():
    with pytest.raises(ConfigError, match="family"):
        _config(model="a0.tiny").schedule(10, 1)
    assert with_family_defaults(_config(model="a0.tiny"), "a0.tiny").schedule(10, 1).initial \
        == FamilyDefaults().lr


def test_self_play_learns_at_its_familys_rate():
    from harness.rl.config import RLConfig
    from harness.rl.learner import learning_rate

    config = from_mapping(RLConfig, {"run": "r", "model": "a0.tiny", "generations": 2}, "test")
    # The network's own family counts (a run can start from a file of another).
    rate = learning_rate(config, "b2c16nbt")(0)
    assert float(rate) == pytest.approx(family_defaults("nbt.tiny").lr) != FamilyDefaults().lr


def _held_out(model: str, root: Path) -> dict[str, float]:
    from harness.cli import main as harness

    code = harness(["train", "--model", model, "--data", str(QUICK_DATA), "--run", model,
                    "--runs-dir", str(root), "--budget", str(BUDGET_SAMPLES),
                    "--budget-unit", "samples", "--epochs", "2", "--val-samples", "8192",
                    "--quiet"])
    assert code == 0, f"harness train {model} exited {code}"
    with open(root / model / "metrics.csv", newline="") as metrics:
        last = list(csv.DictReader(metrics))[-1]
    return {"top1": float(last["val_policy_top1"]), "mse": float(last["val_value_mse"])}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, float]:
    if not QUICK_DATA.exists():
        pytest.skip(f"{QUICK_DATA} is made by `make run` (its data step)")
    return _held_out("a0.tiny", tmp_path_factory.mktemp("reference"))


@pytest.mark.slow
@pytest.mark.parametrize("model", TINY_PRESETS)
def test_every_familys_tiny_preset_learns_with_its_defaults(reference, model, tmp_path):
    scores = _held_out(model, tmp_path)
    assert scores["top1"] >= 0.8 * reference["top1"], (model, scores, reference)
    assert scores["mse"] < 0.8, (model, scores)
