"""Every bundled suite config loads; paper reproductions name their missing archives."""

from pathlib import Path

import pytest

from harness.config_io import ConfigError
from harness.suite.config import load_suite_config

CONFIGS = Path(__file__).parent.parent / "configs"
SUITES = ["quick", "garb-ablation", "nogo", "cazenave-mobile", "mao-vs-resnet18"]


@pytest.mark.parametrize("name", SUITES)
def test_bundled_suite_config_loads_or_names_its_missing_archive(name):
    path = CONFIGS / f"{name}.toml"
    try:
        config = load_suite_config(path)
    except ConfigError as e:
        assert "source datasets/archives/" in str(e) and "does not exist" in str(e)
        return
    assert config.name == name and config.train.models


def test_unknown_model_or_key_stops_with_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[train]\nmodels = ["a0.nonsense"]\n')
    with pytest.raises(ConfigError, match=r"bad.toml \[train\]"):
        load_suite_config(bad)
    bad.write_text('name = "x"\n[tournament]\ngames_per_pairs = 3\n')
    with pytest.raises(ConfigError, match=r"unknown key 'games_per_pairs'"):
        load_suite_config(bad)
