"""Every bundled suite config loads; paper reproductions name their missing archives."""

from pathlib import Path

import pytest

from harness.config_io import ConfigError
from harness.suite.config import load_suite_config

CONFIGS = Path(__file__).parent.parent / "configs"
SUITES = ["quick", "garb-ablation", "nogo", "cazenave-mobile", "mao-vs-resnet18",
          "claim-mobile-vs-resnet", "claim-mao-vs-resnet18"]


@pytest.mark.parametrize("name", SUITES)
def test_bundled_suite_config_loads_or_names_its_missing_archive(name):
    path = CONFIGS / f"{name}.toml"
    try:
        config = load_suite_config(path)
    except ConfigError as e:
        missing = ("source datasets/archives/", "source ../shared/data/")
        assert any(m in str(e) for m in missing) and "does not exist" in str(e)
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


def test_a_suite_holds_out_the_months_its_test_sources_name(tmp_path):
    from test_sgf_kifu import zipped_tygem

    from harness.data.dataset import open_dataset
    from harness.data.layout import TEST
    from harness.suite.runner import ensure_dataset

    tygem = zipped_tygem(tmp_path / "tygem")
    study = tmp_path / "study.toml"
    study.write_text(f'name = "held-out"\nboard_size = 19\ndatasets_dir = "{tmp_path}"\n'
                     f'[data]\nsources = ["{tygem}"]\ntest_sources = ["2011-02"]\n'
                     'val_games = 1\nmin_moves = 1\nworkers = 1\n')
    path = ensure_dataset(load_suite_config(study), progress=False, log=lambda _: None)
    with open_dataset(path) as ds:
        held_out = {s.rsplit("!", 1)[1] for s, split in
                    zip(ds.games["source"], ds.games["split"], strict=True) if split == TEST}
    assert held_out == {"2011-02"}


def test_step_times_of_earlier_runs_are_read_back_and_a_torn_file_starts_again(tmp_path):
    from harness.suite.runner import read_timings

    path = tmp_path / "timings.json"
    assert read_timings(path) == {}
    path.write_text('{"data": 12.5, "train": 1200, "note": "x"}')
    assert read_timings(path) == {"data": 12.5, "train": 1200.0}
    path.write_text('{"data": 12.')
    assert read_timings(path) == {}
