"""Networks from outside the package (harness.nets.plugins, docs/plugins.md).

The example plugin (examples/my_nets.py) is trained and rated beside a zoo
network in a small suite; a plugin breaking the contract, and a model file
whose layer no loaded plugin registers, are refused with one line.
"""

import json
from pathlib import Path

import keras
import pandas as pd
import pytest
from tiny_study import tiny_suite

from harness.nets import build_model, load_model, model_info, model_summary, save_model
from harness.nets.info import ModelFileError
from harness.nets.plugins import PluginError, load_plugins, model_spec

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "my_nets.py"

TRAIN = """
[train]
models = ["dilated_tiny", "a0.tiny"]
epochs = 2
budget = 256
budget_unit = "samples"
batch_size = 32
optimizer = "adam"
lr = 0.002
"""


def test_the_example_network_is_trained_and_rated_beside_a_zoo_network(tmp_path):
    from harness.suite.config import load_suite_config
    from harness.suite.runner import run_suite

    path = tmp_path / "plug.toml"
    path.write_text(tiny_suite(tmp_path, "plug", TRAIN, top=f'plugins = ["{EXAMPLE}"]', games=8,
                               batch_sizes="[1]"))
    report = run_suite(load_suite_config(path), progress=False, log=lambda _: None)

    out = tmp_path / "results" / "plug"
    metrics = pd.read_csv(tmp_path / "models" / "plug-dilated_tiny" / "metrics.csv")
    assert metrics["samples_seen"].tolist() == [128, 256]  # the same budget as a0.tiny
    best = load_model(tmp_path / "models" / "plug-dilated_tiny" / "best.keras")
    assert best.model_info.architecture == "dilated_tiny" and best.plugin == "dilated_tiny"
    zoo = pd.read_csv(out / "zoo.csv")
    assert dict(zip(zoo["model"], zoo["family"], strict=True)) == {
        "dilated_tiny": "plugin", "a0.tiny": "resnet"}
    ranking = pd.read_csv(out / "tournament" / "ranking.csv")
    assert sorted(ranking["player"]) == ["a0.tiny", "dilated_tiny", "random"]
    comparison = json.loads((out / "compare" / "comparison.json").read_text())
    assert "dilated_tiny" in [m["name"] for m in comparison["models"]]
    assert "dilated_tiny" in report.read_text()


def test_a_factory_is_named_by_file_module_or_registered_name(tmp_path, monkeypatch):
    (tmp_path / "plain_nets.py").write_text(EXAMPLE.read_text().replace(
        '"dilated_tiny"', '"plain_tiny"').replace('package="my_nets"', 'package="plain"'))
    monkeypatch.syspath_prepend(str(tmp_path))
    by_module = build_model("plain_nets:dilated_tiny", 9, 17, seed=1)
    by_file = build_model(f"{EXAMPLE}:dilated_tiny", 9, 17, heads=("ownership", "score"))
    load_plugins([str(EXAMPLE)])
    by_name = build_model("dilated_tiny", 9, 17)
    assert [tuple(o.shape) for o in by_module.outputs] == [(None, 82), (None, 1)]
    assert sorted(by_file.output_names) == ["ownership", "policy", "score", "value"]
    assert by_name.plugin == "dilated_tiny" and by_name.value_loss == "mse"
    assert model_spec("dilated_tiny").family == "plugin"
    assert model_summary(by_name)["family"] == "plugin"
    assert model_spec("a0.tiny").family == "resnet"


@pytest.mark.parametrize("body, problem", [
    ("return keras.Model(board, {'policy': keras.layers.Dense(board_size * board_size, "
     "name='policy')(flat), 'value': keras.layers.Dense(1, activation='tanh', "
     "name='value')(flat)})",
     "output 'policy' has 81 values per position, expected 82"),
    ("return keras.Model(board, {'policy': keras.layers.Dense(board_size * board_size + 1, "
     "name='policy')(flat)})",
     "has no output 'value'"),
    ("return 'not a model'", "returned str, not a keras.Model"),
])
def test_a_factory_breaking_the_contract_is_refused_in_one_line(tmp_path, body, problem):
    bad = tmp_path / "bad_nets.py"
    bad.write_text(
        "import keras\n\n"
        "def net(board_size, input_planes, heads):\n"
        "    board = keras.Input((board_size, board_size, input_planes))\n"
        "    flat = keras.layers.Flatten()(board)\n"
        f"    {body}\n")
    with pytest.raises(PluginError, match=problem) as caught:
        build_model(f"{bad}:net", 9, 17)
    assert "\n" not in str(caught.value)


def test_a_model_file_whose_layer_no_plugin_registers_is_refused_naming_it(tmp_path,
                                                                           monkeypatch):
    load_plugins([str(EXAMPLE)])
    model = build_model("dilated_tiny", 9, 17)
    model.model_info = model_info(model, encoder="agz17")
    path = save_model(model, tmp_path / "dilated.keras")
    assert load_model(path).plugin == "dilated_tiny"  # loads while the plugin is loaded
    registered = keras.saving.get_custom_objects()
    monkeypatch.delitem(registered, "my_nets>BoardMean")  # a process without the plugin
    with pytest.raises(ModelFileError, match=r"layer class '(my_nets>)?BoardMean'") as caught:
        load_model(path)
    assert "\n" not in str(caught.value) and "--plugin" in str(caught.value)


def test_plugin_names_and_references_that_cannot_work_are_refused():
    from harness import register_model

    with pytest.raises(PluginError, match="zoo family word"):
        register_model("mobile")(lambda *a: None)
    with pytest.raises(PluginError, match="has no function 'missing'"):
        model_spec(f"{EXAMPLE}:missing")
    with pytest.raises(PluginError, match="cannot load plugin"):
        load_plugins(["no_such_plugin_module_here"])
    with pytest.raises(ValueError, match="unknown family"):
        model_spec("not_registered_anywhere")
