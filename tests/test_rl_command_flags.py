"""``harness rl``'s flags over a config file, and a resumed run's own config."""

import argparse
from pathlib import Path

from harness.config_io import save_config
from harness.rl.command import add_arguments, config_from_args

GUMBEL = Path(__file__).resolve().parents[1] / "configs" / "rl-9x9-gumbel.toml"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_model_flag_swaps_the_network_and_keeps_the_recipe(tmp_path):
    config = config_from_args(_args("--config", str(GUMBEL), "--model", "a0.6.64",
                                    "--run", "wide", "--runs-dir", str(tmp_path)))
    assert config.model == "a0.6.64"
    assert (config.mcts.root, config.mcts.playouts, config.selfplay.games) == ("gumbel", 16, 96)
    assert config.heads == ["ownership", "score"]


def test_resume_keeps_the_saved_network_over_a_model_flag(tmp_path):
    started = config_from_args(_args("--config", str(GUMBEL), "--model", "a0.6.64",
                                     "--run", "wide", "--runs-dir", str(tmp_path)))
    started.run_dir.mkdir(parents=True)
    save_config(started, started.run_dir / "config.json")
    resumed = config_from_args(_args("--config", str(GUMBEL), "--model", "a0.tiny", "--resume",
                                     "--hours", "2.0", "--run", "wide",
                                     "--runs-dir", str(tmp_path)))
    assert resumed.model == "a0.6.64" and resumed.max_hours == 2.0
