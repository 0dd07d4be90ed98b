"""Self-play driver: every slot busy, full games, training targets, resignation."""

from __future__ import annotations

import numpy as np

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
