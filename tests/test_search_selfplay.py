"""Self-play driver: every slot busy, full games, training targets, resignation."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from harness.search import BatchedSearch, MCTSConfig
from harness.search.game_driver import play_games
from harness.search.oracle import OracleEvaluator


def driver(size: int = 5, games: int = 3, **config) -> BatchedSearch:
    evaluator = OracleEvaluator(size, value="area", scale=size * size / 4)
    return BatchedSearch(evaluator, MCTSConfig(**config), games=games, seed=11)


def test_plays_the_requested_number_of_full_games():
    search = driver(playouts=16, temperature_moves=4)
    seen = []
    records = play_games(search, 5, komi=0.5, seed=1, on_record=seen.append)
    assert len(records) == len(seen) == 5
    for record in records:
        game = record.game
        assert game.is_over or record.truncated
        assert record.length == len(record.policies) == len(record.root_values)
        assert record.result.winner in (1, 2)
        for policy in record.policies:
            assert policy is not None and abs(policy.sum() - 1.0) < 1e-5
    # Openings with temperature differ; a batch of identical games would not.
    assert len({tuple(m for _, m in r.game.moves[:4]) for r in records}) > 1
    assert not search.tree.inflight.any()


def test_games_stop_at_the_move_limit():
    records = play_games(driver(playouts=4), 2, komi=0.5, max_moves=6, seed=2)
    assert all(r.length <= 6 for r in records)
    assert all(r.truncated == (not r.game.is_over) for r in records)


def test_playout_cap_moves_are_not_training_targets():
    search = driver(playouts=12, fast_playouts=3, full_search_prob=0.3, add_noise=True)
    records = play_games(search, 3, komi=0.5, max_moves=30, seed=3)
    flags = [f for r in records for f in r.full]
    assert 0 < sum(flags) < len(flags)
    for record in records:
        for full, policy in zip(record.full, record.policies, strict=True):
            assert (policy is not None) == full


def test_resignation_and_the_no_resign_fraction():
    # Material values are lopsided quickly on 5x5, so games reach the threshold.
    config = dict(playouts=8, resign_threshold=-0.3, resign_disabled_fraction=0.5)
    evaluator = OracleEvaluator(5, value="material", scale=1.0)
    search = BatchedSearch(evaluator, MCTSConfig(**config), games=4, seed=5)
    records = play_games(search, 16, komi=0.5, max_moves=60, seed=4)
    resigned = [r for r in records if r.result.kind == "resign"]
    assert resigned and all(r.resign_enabled for r in resigned)
    assert all(not r.would_resign for r in records if r.resign_enabled)
    unresigning = [r for r in records if not r.resign_enabled]
    assert unresigning and any(r.would_resign for r in unresigning)


def test_stop_after_abandons_unfinished_games():
    search = driver(playouts=32, games=2)
    records = play_games(search, 50, komi=0.5, seed=5, stop_after=0.0)
    assert records == []
    assert search.searching == 0 and not search.tree.inflight.any()
    np.testing.assert_array_equal(search.tree.used, 1)


# Self-play as the search played it before its per-move work was compiled
# (recorded from ec3ccfe's Python driver): game lengths, the first game's
# opening and a SHA-256 prefix of every move, playout-cap flag and (PUCT:
# visit-distribution) target. The oracle's "clip" values and pattern priors
# use no transcendental function, so these hold on any CPU; only the Gumbel
# noise (numpy's own sampler) and the search's log/exp remain, as in every
# run of the harness.
PINNED_SELF_PLAY = {
    "puct": (dict(temperature_moves=6), [59, 61, 81, 49, 46, 77],
             [1, 23, 40, 19, 2, 13, 45, 46], "0afc07b150932e51"),
    "gumbel": (dict(root="gumbel"), [56, 64, 59, 41, 55, 68],
               [11, 4, 15, 16, 32, 44, 25, 12], "b2017a31bb624fd9"),
}


@pytest.mark.parametrize("name", sorted(PINNED_SELF_PLAY))
def test_self_play_is_the_same_game_for_game_as_the_python_driver_played_it(name):
    extra, lengths, opening, digest = PINNED_SELF_PLAY[name]
    evaluator = OracleEvaluator(7, value="area", priors="pattern", scale=49 / 4, squash="clip")
    config = MCTSConfig(playouts=16, leaves_per_game=2, add_noise=True, fast_playouts=4,
                        resign_threshold=-0.8, **extra)
    records = play_games(BatchedSearch(evaluator, config, games=3, seed=5), 6, komi=0.5, seed=3)
    h = hashlib.sha256()
    for record in records:
        h.update(np.array([m for _, m in record.game.moves], np.int32).tobytes())
        h.update(np.array(record.full, np.bool_).tobytes())
        if name == "puct":
            for policy in record.policies:
                if policy is not None:
                    h.update(np.asarray(policy, np.float32).tobytes())
    assert [r.length for r in records] == lengths
    assert [m for _, m in records[0].game.moves[:8]] == opening
    assert h.hexdigest()[:16] == digest
