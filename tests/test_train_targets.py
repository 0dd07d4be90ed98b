"""Value targets reach the value head in its own convention, from the side to move.

Known answer: in a game Black won, every position with Black to move must
carry "the player to move wins" (+1 for a tanh/MSE head, 1 for a
sigmoid/BCE head) and every position with White to move the opposite (-1, 0).
The games go through the real path: SGF -> ``harness ingest`` -> positions file
-> input pipeline -> the trainer's target conversion.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.devdata import dev_sgf_dir
from harness.train.sources import to_head_targets

# Two 9x9 games, moves alternating from Black. Positions are stored before each move.
BLACK_WINS = "(;GM[1]FF[4]SZ[9]KM[7]RE[B+R];B[ee];W[cc];B[gc];W[cg];B[gg])"
WHITE_WINS = "(;GM[1]FF[4]SZ[9]KM[7]RE[W+3.5];B[ee];W[cc];B[gc];W[cg])"


@pytest.fixture(scope="module")
def two_games(tmp_path_factory) -> Path:
    pytest.importorskip("h5py")
    from harness.data.ingest import IngestConfig, ingest

    folder = tmp_path_factory.mktemp("sgf")
    (folder / "black.sgf").write_text(BLACK_WINS)
    (folder / "white.sgf").write_text(WHITE_WINS)
    out = folder / "two.h5"
    ingest(IngestConfig(sources=[str(folder / "black.sgf"), str(folder / "white.sgf")],
                        output=out, board_size=9, val_games=0, workers=1, progress=False))
    return out


def _targets_by_game(path: Path, value_loss: str) -> list[list[float]]:
    """Value targets per game in move order, as the trainer hands them to Keras."""
    from harness.data.dataset import open_dataset
    from harness.train.dataset_source import open_split

    source = open_split(path, "train", "agz17")
    try:
        values = np.concatenate([
            to_head_targets(batch, value_loss)[1]["value"].ravel()
            for batch in source.batches(64, seed=0, augment=False)
        ])
    finally:
        source.close()
    with open_dataset(path) as ds:
        games = ds.games
        order = np.argsort(games["length"])[::-1]  # the 5-move game (Black's win) first
        return [values[games["first"][g]: games["first"][g] + games["positions"][g]].tolist()
                for g in order]


@pytest.mark.parametrize(("value_loss", "win", "loss"), [("mse", 1.0, -1.0), ("bce", 1.0, 0.0)])
def test_value_target_is_the_outcome_for_the_side_to_move(two_games, value_loss, win, loss):
    black_won, white_won = _targets_by_game(two_games, value_loss)
    # Black to move at positions 0, 2, 4; White at 1, 3.
    assert black_won == [win, loss, win, loss, win]
    assert white_won == [loss, win, loss, win]


def test_real_games_targets_follow_the_recorded_winner(tmp_path):
    """Dev-set games: target says 'win' exactly where the side to move is the winner."""
    data = dev_sgf_dir() / "FineArt"
    if not data.is_dir():
        pytest.skip(f"development data {data} is absent")
    from harness.data.dataset import open_dataset
    from harness.data.ingest import IngestConfig, ingest

    files = sorted(data.glob("*.SGF"))[:4]
    out = tmp_path / "dev.h5"
    ingest(IngestConfig(sources=[str(f) for f in files], output=out, val_games=0, workers=1,
                        progress=False))
    with open_dataset(out) as ds:
        rows = ds.split_rows("train")
        pos = ds.positions(rows)
        winner = ds.games["winner"][pos["game_id"]]
    known = winner != 0
    assert known.any() and set(np.unique(winner[known])) <= {1, 2}
    batch = (None, {"value": pos["value"].astype(np.float32)}, None)
    for value_loss, win, loss in (("mse", 1.0, -1.0), ("bce", 1.0, 0.0)):
        target = to_head_targets(batch, value_loss)[1]["value"].ravel()
        expected = np.where(pos["to_play"] == winner, win, loss)
        assert np.array_equal(target[known], expected[known])
