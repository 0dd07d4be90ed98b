"""A self-play run's games are a function of its seed: two runs of one config,
with the evaluator drawing a random board symmetry for every evaluation,
commit the same games move for move."""

from __future__ import annotations

import numpy as np
from tiny_rl import first_chunk, one_generation

# No seed of its own: the symmetries must come from the run's seed.
RANDOM_SYMMETRIES = {"batch_size": 8, "symmetry": "random"}


def test_two_runs_with_one_seed_and_random_symmetries_play_the_same_games(tmp_path):
    names = ("positions/move", "positions/policy")
    a = first_chunk(one_generation(tmp_path, "first", evaluator=RANDOM_SYMMETRIES), names)
    b = first_chunk(one_generation(tmp_path, "second", evaluator=RANDOM_SYMMETRIES), names)
    assert len(a["positions/move"]) > 0
    for name in names:
        assert np.array_equal(a[name], b[name]), name
