"""AlphaGo's value-network data: one position per game, right after one
uniformly random move, labelled with the game's outcome for its side to move."""

from __future__ import annotations

import numpy as np
import pytest

from harness.game.geometry import BLACK, WHITE
from harness.rl.value_games import value_positions
from harness.rl.value_net import ValueNetSettings, split_games, symmetric

SIZE = 5


class Counting:
    """A legitimate evaluator: uniform over the candidates; it counts what it is asked."""

    def __init__(self):
        self.positions = 0
        self.stones = []

    def evaluate(self, stones, to_play, candidates):
        self.positions += len(stones)
        self.stones.append(stones[:, -1].copy())
        policy = candidates.astype(np.float32)
        return policy / policy.sum(axis=1, keepdims=True), np.zeros(len(policy), np.float32)


def test_one_position_per_game_after_the_random_move():
    sl, rl = Counting(), Counting()
    got = value_positions(sl, rl, 40, size=SIZE, komi=0.5, rules="superko", history=2,
                          seed=3, u_max=12, parallel=16)
    assert len(got.outcome) + got.ended_early == 40
    assert len(np.unique(got.game)) == len(got.game)  # never two from one game
    assert ((got.u >= 1) & (got.u <= 12)).all()
    # After U moves (no captures this early on 5x5 is not guaranteed, so count
    # at most U stones) the side to move is White after an odd U, Black after an even one.
    stones = (got.history[:, -1] != 0).sum(axis=1)
    assert (stones <= got.u).all() and (stones >= 1).all()
    np.testing.assert_array_equal(got.to_play, np.where(got.u % 2 == 1, WHITE, BLACK))
    assert set(np.unique(got.outcome)) <= {-1.0, 0.0, 1.0}
    assert got.evaluations == sl.positions + rl.positions
    assert sl.positions > 0 and rl.positions > 0


def test_games_that_end_before_their_random_move_give_nothing():
    got = value_positions(Counting(), Counting(), 8, size=SIZE, komi=0.5, rules="superko",
                          history=1, seed=0, u_max=10_000,
                          max_moves=20)
    assert got.ended_early >= 7 and len(got.outcome) == 8 - got.ended_early


def test_a_play_budget_keeps_whole_waves_and_reports_each():
    waves = []
    got = value_positions(Counting(), Counting(), 48, size=SIZE, komi=0.5, rules="superko",
                          history=1, seed=2, u_max=8, parallel=16, play_seconds=1e-9,
                          progress=lambda so_far: waves.append(so_far))
    # the budget is spent during the first wave, so no second one starts
    assert got.games_played == 16 and len(waves) == 1 and got.seconds > 0
    assert len(got.outcome) + got.ended_early == 16 and (got.game < 16).all()
    whole = value_positions(Counting(), Counting(), 48, size=SIZE, komi=0.5,
                            rules="superko", history=1, seed=2, u_max=8, parallel=16,
                            progress=lambda so_far: waves.append(so_far.games_played))
    assert whole.games_played == 48 and waves[1:] == [16, 32, 48]


def test_a_killed_run_resumes_to_the_games_it_would_have_played(tmp_path):
    def play(**options):
        return value_positions(Counting(), Counting(), 40, size=SIZE, komi=0.5,
                               rules="superko", history=2, seed=5, u_max=10, parallel=16,
                               **options)

    whole = play()
    first = play(waves_dir=tmp_path, play_seconds=1e-9)  # "killed" after one wave
    assert first.games_played == 16 and sorted(p.name for p in tmp_path.iterdir()) == [
        "wave-0000.npz"]
    counted = Counting()
    resumed = value_positions(Counting(), counted, 40, size=SIZE, komi=0.5, rules="superko",
                              history=2, seed=5, u_max=10, parallel=16, waves_dir=tmp_path)
    assert resumed.games_played == 40 and len(list(tmp_path.iterdir())) == 3
    for key in ("history", "to_play", "outcome", "u", "game"):
        np.testing.assert_array_equal(getattr(resumed, key), getattr(whole, key))
    assert resumed.evaluations == whole.evaluations
    assert 0 < counted.positions < whole.evaluations  # the saved wave was not replayed


def test_held_out_games_are_whole_games_at_the_end():
    got = value_positions(Counting(), Counting(), 30, size=SIZE, komi=0.5, rules="superko",
                          history=1, seed=1, u_max=8)
    train, held = split_games(got, 0.2)
    assert len(train) + len(held) == len(got.game)
    assert got.game[held].min() > got.game[train].max()
    assert 0.1 < len(held) / len(got.game) < 0.35


def test_a_symmetry_moves_every_history_plane_alike():
    history = np.zeros((1, 2, SIZE * SIZE), np.int8)
    history[0, :, 0] = BLACK  # the top-left corner, in both planes
    turned = symmetric(history, 1, SIZE)
    assert (turned[0, 0] != 0).sum() == 1 and (turned[0, 0] == turned[0, 1]).all()
    assert turned[0, 0, 0] == 0  # the stone left the corner it was in...
    corners = [0, SIZE - 1, SIZE * (SIZE - 1), SIZE * SIZE - 1]
    assert turned[0, 0, corners].sum() == BLACK  # ...for another corner
    np.testing.assert_array_equal(symmetric(history, 0, SIZE), history)


def test_settings_refuse_what_cannot_be_measured():
    with pytest.raises(ValueError, match="held_out_share"):
        ValueNetSettings(held_out_share=1.0)
    with pytest.raises(ValueError, match="sample_games"):
        ValueNetSettings(sample_games=1)


def test_the_paired_difference_is_the_difference_of_the_two_errors():
    from harness.rl.value_net import mse_row, paired_row

    outcome = np.array([1.0, -1.0, 1.0, -1.0])
    better = np.array([0.5, -0.5, 0.5, -0.5])  # squared error 0.25 each
    worse = np.array([0.0, 0.0, 0.0, 0.0])  # 1.0 each
    assert mse_row("b", better, outcome)["mse"] == pytest.approx(0.25)
    row = paired_row("b - w", better, worse, outcome)
    assert row["mse"] == pytest.approx(-0.75) and row["positions"] == 4
