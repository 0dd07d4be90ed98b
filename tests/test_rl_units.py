"""Self-play RL pieces that need no network: targets, window, gating, curriculum, buffer."""

from __future__ import annotations

import numpy as np
import pytest

from harness.config_io import ConfigError, from_mapping
from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.rl.buffer import GameMeta, ReplayBuffer
from harness.rl.config import CurriculumConfig, RLConfig, WindowConfig
from harness.rl.curriculum import small_net_stalled
from harness.rl.game_rows import game_rows, mixed_value, policy_target
from harness.rl.gating import promote
from harness.rl.window import next_window, replace_fraction
from harness.search.game_driver import SelfPlayGame

# Black walls off column c, White column d; then both pass. Tromp-Taylor:
# Black owns columns a-c (15 points), White d-e (10); komi 0.5: B+4.5.
FINAL = """
. . X O .
. . X O .
. . X O .
. . X O .
. . X O .
"""
SIZE = 5


def walled_game(resign: bool = False, fast_odd: bool = True) -> SelfPlayGame:
    game = Game(SIZE, komi=0.5)
    for row in range(SIZE):
        game.play(row * SIZE + 2)  # Black, column c
        game.play(row * SIZE + 3)  # White, column d
    if resign:
        game.resign(BLACK)
    else:
        game.play(SIZE * SIZE)
        game.play(SIZE * SIZE)
    n = len(game.moves)
    policies = []
    for i in range(n):
        visits = np.zeros(SIZE * SIZE + 1)
        visits[game.moves[i][1]] = 3
        visits[SIZE * SIZE] = 1
        fast = fast_odd and i % 2 == 1
        policies.append(None if fast else visits / visits.sum())
    record = SelfPlayGame(game, game.result(), policies=policies,
                        root_values=[0.5 if c == BLACK else -0.5 for c, _ in game.moves],
                        full=[p is not None for p in policies])
    return record


def test_the_walled_game_is_the_known_final_position():
    game = walled_game().game
    assert game.stones.tolist() == Game.from_ascii(FINAL, BLACK, 0.5).stones.tolist()
    assert game.score() == pytest.approx(4.5)


def test_policy_target_is_the_normalised_visit_distribution():
    visits = np.array([0, 3, 1, 0, 0, 0], np.int32)
    target = policy_target(visits)
    assert target.sum() == pytest.approx(1.0)
    assert target.tolist() == pytest.approx([0, 0.75, 0.25, 0, 0, 0])
    assert policy_target(np.zeros(6)).sum() == 0.0


def test_outcome_sign_is_from_the_side_to_move():
    rows = game_rows(walled_game())
    assert rows.winner == BLACK
    black = rows.to_play == BLACK
    assert black.sum() == 6 and (~black).sum() == 6
    assert np.all(rows.value[black] == 1)
    assert np.all(rows.value[~black] == -1)


def test_value_mix_blends_outcome_and_search_value():
    z = np.array([1.0, -1.0, 1.0])
    v = np.array([0.5, 0.5, -1.0])
    assert mixed_value(z, v, 0.0).tolist() == pytest.approx(z.tolist())
    assert mixed_value(z, v, 1.0).tolist() == pytest.approx(v.tolist())
    assert mixed_value(z, v, 0.25).tolist() == pytest.approx([0.875, -0.625, 0.5])
    with pytest.raises(ValueError):
        mixed_value(z, v, 1.5)


def test_ownership_and_score_come_from_the_final_position():
    rows = game_rows(walled_game())
    black_view = np.array([[1, 1, 1, -1, -1]] * SIZE).reshape(-1)
    assert rows.ownership_known and rows.score_known
    for i, colour in enumerate(rows.to_play):
        expected = black_view if colour == BLACK else -black_view
        assert rows.ownership[i].tolist() == expected.tolist()
        assert rows.score[i] == pytest.approx(4.5 if colour == BLACK else -4.5)


def test_rows_hold_every_position_and_mark_full_searches_as_targets():
    record = walled_game()
    rows = game_rows(record)
    assert len(rows) == len(record.game.moves) == 12
    assert rows.target.tolist() == [1, 0] * 6
    assert rows.stones[0].sum() == 0  # the empty board before move 1
    assert rows.stones[3].tolist() == record.game.history[3].tolist()
    first = rows.policy[0].astype(np.float64)
    assert first.sum() == pytest.approx(1.0, abs=1e-3)
    assert first[2] == pytest.approx(0.75, abs=1e-3)
    assert rows.policy[1].sum() == 0  # a fast search: no policy target
    assert rows.root_value[0] == pytest.approx(0.5)


def test_a_resigned_game_has_no_ownership_or_score_target():
    rows = game_rows(walled_game(resign=True))
    assert rows.winner == WHITE
    assert not rows.ownership_known and not rows.score_known
    assert np.all(rows.value[rows.to_play == WHITE] == 1)


def test_window_grows_early_never_shrinks_and_is_capped():
    config = WindowConfig(initial=100, maximum=1000, replace_fraction=0.5, fraction_decay=0.5,
                          fraction_min=0.1)
    assert replace_fraction(0, config) == 0.5
    assert replace_fraction(1, config) == 0.25
    assert replace_fraction(10, config) == 0.1  # the floor
    assert next_window(100, 20, 0, config) == 100  # 20 / 0.5 = 40 < initial
    assert next_window(100, 80, 0, config) == 160  # 80 games are half the window
    assert next_window(160, 80, 1, config) == 320  # now a quarter
    assert next_window(320, 10, 2, config) == 320  # never shrinks
    assert next_window(320, 500, 5, config) == 1000  # capped


def test_gating_promotes_at_the_threshold():
    assert promote(11, 20, 0.55)
    assert not promote(10.5, 20, 0.55)
    assert promote(10, 20, 0.5)  # draws count half: 9 wins + 2 draws = 10 points
    assert not promote(0, 0, 0.55)


def test_curriculum_switches_when_the_small_net_stalls():
    loss = CurriculumConfig(enabled=True, model="a0.small", criterion="loss", patience=2,
                            min_delta=0.05)
    improving = [3.0, 2.8, 2.6, 2.4]
    flat = [3.0, 2.5, 2.49, 2.48]
    assert not small_net_stalled(loss, 4, improving, [])
    assert small_net_stalled(loss, 4, flat, [])
    assert not small_net_stalled(loss, 2, flat[:2], [])  # too little history
    gating = CurriculumConfig(enabled=True, model="a0.small", criterion="gating", patience=3)
    assert small_net_stalled(gating, 5, [], [True, True, False, False, False])
    assert not small_net_stalled(gating, 5, [], [True, False, True, False, False])
    at = CurriculumConfig(enabled=True, model="a0.small", criterion="generation",
                          switch_generation=3)
    assert not small_net_stalled(at, 2, [], []) and small_net_stalled(at, 3, [], [])
    off = CurriculumConfig(enabled=False)
    assert not small_net_stalled(off, 99, flat, [False] * 9)


def test_buffer_commits_games_merges_and_selects_the_window(tmp_path):
    buffer = ReplayBuffer(tmp_path, SIZE)
    rows = game_rows(walled_game())
    for number in range(3):
        buffer.add_game(1, number, rows, GameMeta(resign_enabled=True))
    assert buffer.games_committed(1) == 3
    buffer.merge(1)
    assert not buffer.parts_dir(1).exists() and buffer.games_committed(1) == 3
    buffer.add_game(2, 0, game_rows(walled_game(resign=True)), GameMeta(resigned=BLACK))
    buffer.merge(2)
    assert buffer.game_counts() == {1: (3, 12 * 3), 2: (1, 10)}
    window = buffer.window(2, "games", ("stones", "target", "move_number"))
    assert window.n_games == 2 and window.n_positions == 22
    assert window.games["first"].tolist() == [0, 12]
    assert window.games["ownership_known"].tolist() == [1, 0]
    window = buffer.window(15, "positions", ("stones", "target", "move_number"))
    assert window.n_games == 2  # 10 positions of gen 2 are not enough: one more game
    everything = buffer.window(100, "games", ("stones", "target", "move_number"))
    assert everything.n_games == 4 and everything.columns["move_number"][12] == 0


def test_buffer_merge_is_idempotent_after_a_kill(tmp_path):
    buffer = ReplayBuffer(tmp_path, SIZE)
    rows = game_rows(walled_game())
    buffer.add_game(1, 0, rows, GameMeta())
    buffer.merge(1)
    buffer.parts_dir(1).mkdir()  # as if killed between the rename and the cleanup
    buffer.add_game(1, 0, rows, GameMeta())
    buffer.merge(1)
    assert buffer.game_counts() == {1: (1, 12)} and not buffer.parts_dir(1).exists()


def test_config_rejects_unknown_keys_with_one_line():
    with pytest.raises(ConfigError, match="playout"):
        from_mapping(RLConfig, {"run": "x", "mcts": {"playout": 5}}, "t.toml")
    with pytest.raises(ConfigError, match="value_mix"):
        from_mapping(RLConfig, {"run": "x", "train": {"value_mix": 2.0}}, "t.toml")
    config = from_mapping(RLConfig, {"run": "x", "mcts": {"playouts": 5, "fast_playouts": 2},
                                  "window": {"unit": "positions"}}, "t.toml")
    assert config.mcts.playouts == 5 and config.window.unit == "positions"


def test_sampler_moves_policy_and_ownership_with_the_stones():
    from harness.features import get_encoder
    from harness.rl.buffer import Window
    from harness.rl.samples import Sampler

    points = SIZE * SIZE
    p = 1 * SIZE + 0  # b4-ish: off every symmetry axis together with its policy
    stones = np.zeros((1, points), np.int8)
    stones[0, p] = BLACK
    policy = np.zeros((1, points + 1), np.float16)
    policy[0, p] = 1.0
    ownership = np.zeros((1, points), np.int8)
    ownership[0, p] = 1
    columns = {"stones": stones, "to_play": np.array([BLACK], np.int8), "policy": policy,
               "target": np.ones(1, np.uint8), "value": np.ones(1, np.int8),
               "root_value": np.zeros(1, np.float16), "move_number": np.zeros(1, np.int16),
               "ownership": ownership}
    games = {"ownership_known": np.ones(1, np.uint8), "score_known": np.zeros(1, np.uint8)}
    window = Window(columns, np.zeros(1, np.int64), games, 1)
    sampler = Sampler(window, get_encoder("agz17"), SIZE, heads=("policy", "value", "ownership"))
    seen = set()
    for k in range(8):
        x, targets, weights = sampler.make(np.array([0]), np.array([k]))
        assert weights["ownership"].tolist() == [1.0]
        own_plane = x[0, :, :, 0].reshape(-1)  # agz17 plane 0: own stones now
        where = int(np.argmax(own_plane))
        assert own_plane.sum() == 1
        assert int(np.argmax(targets["policy"][0])) == where
        assert int(np.argmax(targets["ownership"][0])) == where
        seen.add(where)
    assert len(seen) == 8  # every symmetry puts the stone somewhere else


def test_reply_target_is_the_next_full_search_of_the_same_game(tmp_path):
    from harness.features import get_encoder
    from harness.rl.samples import Sampler, window_columns

    buffer = ReplayBuffer(tmp_path, SIZE)
    full = walled_game(fast_odd=False)
    buffer.add_game(1, 0, game_rows(full), GameMeta())
    buffer.add_game(1, 1, game_rows(walled_game()), GameMeta())  # odd searches fast
    buffer.merge(1)
    heads = ("policy", "value", "reply", "soft_policy")
    window = buffer.window(2, "games", window_columns(heads))
    sampler = Sampler(window, get_encoder("agz17"), SIZE, heads=heads)
    rows = np.arange(window.n_positions)
    _, targets, weights = sampler.make(rows, np.zeros(len(rows), np.int64))
    # The fully searched game: each row's reply is the next row's target, whose
    # mass (0.75) sits on the move the opponent then played; its last row has none.
    assert weights["reply"][:12].tolist() == [1.0] * 11 + [0.0]
    np.testing.assert_allclose(targets["reply"][:11], targets["policy"][1:12])
    replies = targets["reply"][:11].argmax(axis=1).tolist()
    assert replies == [move for _, move in full.game.moves[1:]]
    assert not targets["reply"][11].any()  # row 12 is the other game's first position
    # The other game: the rows training samples (its full searches, the even
    # ones) are each followed by a fast search, so none has a reply target.
    assert sampler.rows[sampler.rows >= 12].tolist() == list(range(12, 24, 2))
    assert weights["reply"][12::2].sum() == 0
    # The reply turns with the stones: under a symmetry it is the symmetric
    # next position's own policy target.
    k = np.full(11, 5)
    _, turned, _ = sampler.make(rows[:11], k)
    _, following, _ = sampler.make(rows[1:12], k)
    np.testing.assert_allclose(turned["reply"], following["policy"])


def test_soft_policy_target_is_the_target_to_the_power_one_quarter():
    from harness.features import get_encoder
    from harness.rl.buffer import Window
    from harness.rl.samples import Sampler

    points = SIZE * SIZE
    policy = np.zeros((1, points + 1), np.float16)
    policy[0, 7], policy[0, points] = 0.75, 0.25
    columns = {"stones": np.zeros((1, points), np.int8), "to_play": np.array([BLACK], np.int8),
               "policy": policy, "target": np.ones(1, np.uint8), "value": np.ones(1, np.int8),
               "root_value": np.zeros(1, np.float16), "move_number": np.zeros(1, np.int16)}
    window = Window(columns, np.zeros(1, np.int64), {}, 1)
    sampler = Sampler(window, get_encoder("agz17"), SIZE,
                      heads=("policy", "value", "soft_policy"))
    _, targets, weights = sampler.make(np.array([0]), np.array([0]))
    soft = targets["soft_policy"][0]
    # 0.75^0.25 = 0.9306 and 0.25^0.25 = 0.7071: 0.568 and 0.432 once renormalised.
    assert soft[7] == pytest.approx(0.5682, abs=1e-4)
    assert soft[points] == pytest.approx(0.4318, abs=1e-4)
    assert np.count_nonzero(soft) == 2 and weights["soft_policy"].tolist() == [1.0]


@pytest.mark.parametrize("name", ["rl-9x9-quick", "rl-9x9-warm", "rl-9x9", "rl-nogo",
                                  "rl-nogo-quick", "rl-19x19-from-sl"])
def test_shipped_configs_load(name):
    from pathlib import Path

    from harness.config_io import load_config

    path = Path(__file__).resolve().parents[1] / "configs" / f"{name}.toml"
    config = load_config(RLConfig, path)
    assert config.run == name and config.generations >= 4


def test_curriculum_on_gating_needs_gating():
    with pytest.raises(ConfigError, match="gating"):
        from_mapping(RLConfig, {"run": "x", "curriculum": {"enabled": True, "model": "a0.tiny",
                                                        "criterion": "gating"}}, "t.toml")


def test_gating_match_credits_the_stronger_side_with_either_colour():
    from harness.rl.gating import play_match
    from harness.search.oracle import OracleEvaluator

    def strong():
        return OracleEvaluator(SIZE, value="area", komi=0.5)

    def weak():
        return OracleEvaluator(SIZE, value="zero")

    kw = {"size": SIZE, "komi": 0.5, "rules": "superko", "playouts": 24, "parallel": 4}
    ahead = play_match(strong(), weak(), 8, seed=1, **kw)
    behind = play_match(weak(), strong(), 8, seed=1, **kw)
    assert ahead.games == behind.games == 8
    assert ahead.win_rate >= 0.75  # as Black in games 0, 2, ... and White in 1, 3, ...
    assert behind.win_rate <= 0.25
