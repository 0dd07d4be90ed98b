"""Self-play and gating games are a function of their seeds: with the evaluator
drawing a random board symmetry for every evaluation, two runs of one config
commit the same games move for move, and two gating matches end alike."""

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


def test_a_gating_match_with_random_symmetries_is_a_function_of_its_seed():
    from harness.features import get_encoder
    from harness.nets import build_model
    from harness.rl.gating import play_match
    from harness.search import NetworkEvaluator
    from harness.search.config import EvaluatorConfig

    planes = get_encoder("agz17").planes
    nets = [build_model("a0.tiny", 5, planes, seed=s) for s in (1, 2)]

    def match():
        candidate, best = (NetworkEvaluator(net, "agz17", 5, EvaluatorConfig(**RANDOM_SYMMETRIES))
                           for net in nets)
        return play_match(candidate, best, 4, size=5, komi=2.0, rules="superko", playouts=8,
                          parallel=2, seed=4)

    assert match() == match()
