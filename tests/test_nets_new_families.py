"""KataGo's nested-bottleneck nets, the transformer and a plugin's network
through self-play and play.

Supervised training and the save/load round trip are covered with every
preset (tests/test_nets_presets.py); here each new family plays self-play
games, trains on them, and its checkpoint plays a refereed game as a
searching player.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config_io import from_mapping
from harness.rl.config import RLConfig
from harness.rl.run import RLRun

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "my_nets.py"


@pytest.mark.parametrize("model", ["nbt.tiny", "transformer.tiny", f"{EXAMPLE}:dilated_tiny"],
                         ids=["nbt", "transformer", "plugin"])
def test_a_new_family_plays_self_play_learns_from_it_and_plays_a_game(tmp_path, model):
    from harness.api import play_game

    config = from_mapping(RLConfig, {
        "run": "fam", "runs_dir": str(tmp_path), "board_size": 5, "komi": 2.0,
        "model": model, "generations": 1, "seed": 3,
        "mcts": {"playouts": 4}, "evaluator": {"batch_size": 4},
        "selfplay": {"games": 2, "parallel": 2, "max_moves": 16},
        "train": {"steps": 2, "batch_size": 8}, "window": {"initial": 2},
    }, "test")
    state = RLRun(config, log=lambda _: None).run()
    assert state.games_total == 2
    final = tmp_path / "fam" / "models" / "gen-0001.keras"
    played = play_game(f"mcts:{final}@4", "random", size=5, komi=2.0, max_moves=30, seed=1)
    assert played.moves and played.result is not None
