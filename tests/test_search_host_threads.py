"""The host's tree work over threads (``[mcts] host_threads``) is the same
search: with a fixed evaluator every slot's tree, visit counts and move are
those of one thread, step by step, under PUCT and Gumbel roots, and self-play
games (noise, temperature and random symmetries on) are the same games."""

from __future__ import annotations

import numpy as np
import pytest

from harness.game.position import Game
from harness.search import BatchedSearch, MCTSConfig
from harness.search.game_driver import play_games
from harness.search.oracle import OracleEvaluator

SIZE = 9


def oracle() -> OracleEvaluator:
    # Pattern priors and a clipped count: every number is exact, and the
    # evaluator reads 8 history rows as the networks' encoders do.
    return OracleEvaluator(SIZE, value="material", priors="pattern", scale=10.0, history=8,
                           squash="clip")


def positions(count: int, seed: int) -> list[Game]:
    """Games of 0 to 3 * (count - 1) random moves."""
    rng = np.random.default_rng(seed)
    games = []
    for n in range(count):
        game = Game(SIZE, komi=7.5)
        for _ in range(3 * n):
            game.play(int(rng.choice(np.flatnonzero(game.legal_moves()[:-1]))))
        games.append(game)
    return games


def searches(threads: int, games: int, **settings) -> BatchedSearch:
    config = MCTSConfig(host_threads=threads, **settings)
    return BatchedSearch(oracle(), config, games=games, seed=5)


@pytest.mark.parametrize("root", ["puct", "gumbel"])
@pytest.mark.parametrize(("threads", "per_game", "overlap"),
                         [(2, 1, False), (2, 3, False), (3, 2, False), (2, 2, True)])
def test_every_step_leaves_the_trees_one_thread_leaves(root, threads, per_game, overlap):
    # Stepped side by side, so each step's tree work is compared, not just
    # the end: under the Gumbel root this is the sequential-halving schedule
    # (which root moves have how many visits after every evaluation).
    games = positions(7, seed=1)  # 7 slots: shares of unequal size
    settings = dict(playouts=40, leaves_per_game=per_game, root=root, overlap=overlap)
    today, spread = searches(1, len(games), **settings), searches(threads, len(games), **settings)
    for search in (today, spread):
        for i, game in enumerate(games):
            search.start(i, game, playouts=40 - 4 * i)  # searches end at different steps
    finished = 0
    while today.searching:
        a, b = today.step(), spread.step()
        used = today.tree.used.max()
        for name in ("visits", "value", "inflight", "first", "prior"):
            np.testing.assert_array_equal(getattr(today.tree, name)[:, :used],
                                          getattr(spread.tree, name)[:, :used], err_msg=name)
        assert [slot for slot, _ in a] == [slot for slot, _ in b]
        for (_, x), (_, y) in zip(a, b, strict=True):
            np.testing.assert_array_equal(x.visits, y.visits)
            assert x.best_move == y.best_move and x.root_value == y.root_value
            if root == "gumbel":
                np.testing.assert_array_equal(x.improved_policy, y.improved_policy)
        finished += len(a)
    assert finished == len(games)
    assert spread.evaluations == today.evaluations
    spread.close()
    today.close()


def test_threaded_gumbel_searches_keep_the_halving_schedule():
    # The schedule itself, on searches split over two threads: 16 simulations
    # among 4 sampled root moves are two phases of 8, first 2 visits for each
    # of the 4, then 4 more for each of the better 2.
    games = positions(4, seed=3)
    search = searches(2, len(games), playouts=16, root="gumbel", gumbel_k=4)
    for result in search.search(games):
        assert sorted(result.visits[result.visits > 0].tolist()) == [2, 2, 6, 6]
    search.close()


def replay_is_legal_and_finished(game: Game) -> bool:
    replay = Game(game.size, game.komi, game.rules)
    for colour, move in game.moves:
        if colour != replay.to_play or not replay.is_legal(move):
            return False
        replay.play(move)
    return replay.is_over


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_self_play_with_host_threads_plays_todays_games_to_their_end(root):
    # Noise and temperature on: every random draw still happens in the order
    # one thread makes it, so the games themselves are equal.
    settings = dict(playouts=12, leaves_per_game=2, root=root, add_noise=True,
                    temperature_moves=6)
    played = [play_games(searches(threads, 3, **settings), 5, komi=7.5, seed=9)
              for threads in (1, 2)]
    for today, spread in zip(*played, strict=True):
        assert spread.game.moves == today.game.moves
        assert spread.root_values == today.root_values
        for x, y in zip(today.policies, spread.policies, strict=True):
            np.testing.assert_array_equal(x, y)
        assert not spread.truncated and replay_is_legal_and_finished(spread.game)
    assert len(played[1]) == 5


def test_a_network_with_random_symmetries_and_a_cache_sees_todays_batches():
    # The evaluator draws a symmetry per position and remembers positions:
    # both depend on the order of the batch, which the shares keep.
    from harness.features import get_encoder
    from harness.nets import build_model
    from harness.search import EvaluatorConfig, NetworkEvaluator

    model = build_model("a0.tiny", SIZE, get_encoder("agz17").planes, seed=2)
    settings = EvaluatorConfig(batch_size=16, symmetry="random", cache_size=512, seed=3)
    played = []
    for threads in (1, 2):
        evaluator = NetworkEvaluator(model, "agz17", SIZE, settings, inference="keras")
        config = MCTSConfig(playouts=8, leaves_per_game=2, host_threads=threads)
        played.append(play_games(BatchedSearch(evaluator, config, games=4, seed=1), 4,
                                 komi=7.5, max_moves=24, seed=2))
    for today, spread in zip(*played, strict=True):
        assert spread.game.moves == today.game.moves
        assert spread.root_values == today.root_values


def test_host_threads_are_at_least_one():
    with pytest.raises(ValueError, match="host_threads"):
        MCTSConfig(host_threads=0)
