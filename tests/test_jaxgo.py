"""The JAX rules: known positions in, known answers out, then the numba rules' games.

Boards are drawn as in ``tests/test_rules_positions.py`` (``X`` Black, ``O``
White, top row the highest GTP row; its positions are reused here) and set up
through a harness ``Game``; from there every move is the JAX rules' own, and
every expected answer was worked out by hand. The agreement runs at the end replay random games on
both rule engines and must find no difference of any kind.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from test_rules_positions import (  # noqa: E402 (the positions drawn for the numba rules)
    FULL_OF_WHITE,
    KO,
    NOGO,
    ONE_STONE_IN_ATARI,
    TRIPLE_KO,
    TRIPLE_KO_CYCLE,
)

from harness.features.encoders import get_encoder  # noqa: E402 (after the JAX skip)
from harness.game import board as K  # noqa: E402
from harness.game.geometry import BLACK, EMPTY, WHITE, gtp_to_point, point_to_gtp  # noqa: E402
from harness.game.position import Game  # noqa: E402
from harness.jaxgo import rules as R  # noqa: E402
from harness.jaxgo.agreement import KINDS, compare_games  # noqa: E402
from harness.jaxgo.encode import agz17  # noqa: E402

step = jax.jit(R.step)


def position(text: str, to_play: int = BLACK, rules: str = "superko", komi: float = 7.5):
    """A one-game JAX state of a drawn position, and its size."""
    game = Game.from_ascii(text, to_play, komi=komi, rules=rules)
    return R.from_games([game]), game.size


def play(state, size: int, *vertices: str):
    for vertex in vertices:
        move = size * size if vertex == "pass" else gtp_to_point(vertex, size)
        assert bool(state.legal[0, move]), f"{vertex} should be legal"
        state = step(state, np.array([move]))
    return state


def legal(state, size: int, vertex: str) -> bool:
    return bool(state.legal[0, gtp_to_point(vertex, size)])


def stone(state, size: int, vertex: str) -> int:
    return int(state.board[0, gtp_to_point(vertex, size)])


# --- captures and suicide ----------------------------------------------------


def test_a_stone_without_liberties_is_taken_and_counted():
    state, size = position(ONE_STONE_IN_ATARI)
    state = play(state, size, "C2")
    assert stone(state, size, "C3") == EMPTY
    assert state.captures[0].tolist() == [1, 0]
    assert int(state.to_play[0]) == WHITE
    assert int(state.ko[0]) == -1  # the capturing stone has three liberties


def test_a_chain_of_two_is_taken_whole_and_the_hash_follows():
    state, size = position("""
        . X X . .
        X O O X .
        . X . . .
        . . . . .
        . . . . .
        """)
    state = play(state, size, "D3", "E1", "C3")
    assert stone(state, size, "B4") == stone(state, size, "C4") == EMPTY
    assert state.captures[0].tolist() == [2, 0]
    # The hash is the harness's own: that of the same stones set up afresh.
    same = Game.from_ascii("""
        . X X . .
        X . . X .
        . X X X .
        . . . . .
        . . . . O
        """)
    assert int(R.join_words(np.asarray(state.hash[0]))) == same.position_hash


EYE = """
. X . . .
X . X . .
. X . . .
. . . . .
. . . . .
"""


def test_suicide_is_illegal_in_an_eye_and_in_the_corner():
    state, size = position(EYE, WHITE)
    assert not legal(state, size, "B4")
    assert not legal(state, size, "A5")
    assert legal(state, size, "C5")  # beside the eye, with liberties


def test_a_move_without_liberties_is_legal_when_it_captures():
    state, size = position("""
        . X O . .
        X O . . .
        O . . . .
        . . . . .
        . . . . .
        """, WHITE)
    state = play(state, size, "A5")
    assert stone(state, size, "B5") == stone(state, size, "A4") == EMPTY
    assert state.captures[0].tolist() == [0, 2]


def eyes(state, size: int) -> set[str]:
    return {point_to_gtp(p, size) for p in np.flatnonzero(np.asarray(R.own_eyes(state))[0])}


def test_own_eyes_are_the_points_the_harness_never_fills_and_false_eyes_are_not():
    state, size = position(EYE, BLACK)
    assert eyes(state, size) == {"B4", "A5"}  # in the open, and in the corner
    assert eyes(position(EYE, WHITE)[0], size) == set()  # Black's eyes, not White's
    corner_taken, _ = position("""
        . X . . .
        X O X . .
        . X . . .
        . . . . .
        . . . . .
        """, BLACK)
    assert eyes(corner_taken, size) == set()  # a White stone on A5's one diagonal


# --- ko and superko ----------------------------------------------------------


@pytest.mark.parametrize("rules", ["superko", "simple-ko"])
def test_a_ko_is_refused_at_once_and_allowed_after_a_threat_and_answer(rules):
    state, size = position(KO, rules=rules)
    state = play(state, size, "C4")
    assert int(state.ko[0]) == gtp_to_point("B4", size)
    assert not legal(state, size, "B4")  # White may not retake at once...
    state = play(state, size, "E1", "A1")  # ...but after a threat and its answer
    assert legal(state, size, "B4")
    state = play(state, size, "B4")
    assert state.captures[0].tolist() == [1, 1]
    assert not legal(state, size, "C4")  # and now Black must wait


def test_a_pass_lifts_the_ko_ban():
    state, size = position(KO)
    state = play(state, size, "C4", "pass", "A1")
    assert legal(state, size, "B4")


def test_positional_superko_refuses_the_move_that_closes_a_triple_ko_cycle():
    state, size = position(TRIPLE_KO, rules="superko")
    state = play(state, size, *TRIPLE_KO_CYCLE[:5])
    last = gtp_to_point(TRIPLE_KO_CYCLE[5], size)
    assert int(state.ko[0]) != last  # not a simple-ko ban...
    assert not bool(state.legal[0, last])  # ...but it would repeat the start
    assert legal(state, size, "E1")


def test_simple_ko_lets_the_triple_ko_cycle_come_round_again():
    state, size = position(TRIPLE_KO, rules="simple-ko")
    start = np.asarray(state.board[0]).copy()
    for _ in range(2):
        state = play(state, size, *TRIPLE_KO_CYCLE)
        assert np.array_equal(np.asarray(state.board[0]), start)
    assert state.captures[0].tolist() == [6, 6]


# --- end of game and score ---------------------------------------------------


def test_two_passes_end_the_game_and_a_move_between_them_does_not():
    state = R.init(1, 9)
    state = play(state, 9, "pass", "E5", "pass")
    assert not bool(state.over[0])
    state = play(state, 9, "pass")
    assert bool(state.over[0])


def test_a_game_stops_at_its_move_limit_and_then_stays_as_it_is():
    state = R.init(2, 9, move_limit=3)
    for move in (40, 41, 42):
        assert not bool(state.over.any())
        state = step(state, np.array([move, move]))
    assert bool(state.over.all())
    after = step(state, np.array([43, 81]))
    for name, field in zip(R.GoState._fields, after, strict=True):
        assert np.array_equal(np.asarray(field), np.asarray(getattr(state, name))), name


def test_area_score_counts_stones_and_surrounded_points_with_komi():
    state, _ = position("""
        . X O . .
        . X O . .
        . X O . .
        . X O . .
        . X O . .
        """, komi=0.5)
    # Black: 5 stones + 5 empty points touching only Black = 10; White 5 + 10 = 15.
    assert float(R.score(state)[0]) == 10 - 15 - 0.5
    assert int(R.winner(state)[0]) == WHITE
    assert float(R.outcome(state)[0]) == -1.0  # for Black, to play
    assert np.asarray(R.ownership(state))[0].reshape(5, 5)[0].tolist() == [1, 1, -1, -1, -1]


def test_points_touching_both_colours_and_an_empty_board_belong_to_nobody():
    state, _ = position("""
        . X . O .
        . X . O .
        . X . O .
        . X . O .
        . X . O .
        """, komi=7.5)
    assert np.asarray(R.ownership(state))[0].reshape(5, 5)[:, 2].tolist() == [0] * 5
    assert float(R.score(state)[0]) == -7.5
    assert float(R.score(R.init(1, 9, komi=7.5))[0]) == -7.5


# --- NoGo ----------------------------------------------------------------------


def test_nogo_forbids_capturing_suicide_and_passing():
    state, size = position(NOGO, BLACK, rules="nogo")
    assert not legal(state, size, "B7")  # would capture B8
    assert legal(state, size, "E4")
    assert not bool(state.legal[0, size * size])  # no pass
    white, _ = position(NOGO, WHITE, rules="nogo")
    assert not legal(white, size, "A9")  # suicide


def test_nogo_side_left_without_a_legal_move_has_lost():
    state, _ = position(FULL_OF_WHITE, BLACK, rules="nogo")
    assert not bool(state.legal[0].any())
    assert bool(state.over[0])
    assert int(R.winner(state)[0]) == WHITE
    assert float(R.outcome(state)[0]) == -1.0
    white, _ = position(FULL_OF_WHITE, WHITE, rules="nogo")
    assert int(white.legal[0].sum()) == 3 and not bool(white.over[0])


# --- batches ---------------------------------------------------------------------


def test_one_batch_mixes_rules_and_komi_game_by_game():
    state = R.init(3, 9, ["superko", "simple-ko", "nogo"], komi=[7.5, 0.5, 0.0])
    assert state.legal[:, 81].tolist() == [True, True, False]  # NoGo has no pass
    assert R.score(state).tolist() == [-7.5, -0.5, 0.0]
    state = step(state, np.array([40, 40, 40]))
    assert state.board[:, 40].tolist() == [BLACK] * 3


def test_unknown_rules_and_a_komi_per_game_of_the_wrong_length_are_refused():
    with pytest.raises(ValueError, match="unknown rules"):
        R.init(2, 9, "japanese")
    with pytest.raises(ValueError, match="one per game"):
        R.init(2, 9, komi=[7.5, 7.5, 7.5])


def test_a_harness_game_longer_than_the_move_limit_allows_is_refused():
    game = Game(9)
    for move in (0, 1, 2, 3):
        game.play(move)
    with pytest.raises(ValueError, match="history room"):
        R.from_games([game], move_limit=2)


# --- the encoder -----------------------------------------------------------------


def test_agz17_planes_equal_the_harness_encoder_along_a_game_with_captures_and_passes():
    """Own/opponent from the side to move now, newest first, empty before the start."""
    game = Game(9, rules="superko")
    state = R.init(1, 9)
    encoder = get_encoder("agz17")
    moves = ["C3", "D3", "D4", "C4", "B4", "E4", "C5", "pass", "E3", "F3"]
    for number, vertex in enumerate(moves):
        move = 81 if vertex == "pass" else gtp_to_point(vertex, 9)
        game.play(move)
        state = step(state, np.array([move]))
        if number in (0, 5, 6, 7, 9):
            planes = np.asarray(agz17(state))[0]
            assert planes.shape == (9, 9, 17) and planes.dtype == np.float32
            assert np.array_equal(planes, encoder.encode_game(game))
    assert sum(game.captures) > 0


def test_agz17_planes_of_a_harness_position_with_setup_and_history():
    game = Game.from_ascii(KO, BLACK)
    for vertex in ("C4", "E1", "A1"):
        game.play(gtp_to_point(vertex, 5))
    planes = np.asarray(agz17(R.from_games([game, game.copy()])))
    assert np.array_equal(planes[1], get_encoder("agz17").encode_game(game))


# --- against the numba rules ---------------------------------------------------


def _no_differences(result) -> None:
    assert result.differences == dict.fromkeys(KINDS, 0), result.examples
    assert result.diverged == 0


def test_random_9x9_games_agree_with_the_numba_rules_under_each_rule_set():
    superko = compare_games(64, 9, "superko", seed=1)
    _no_differences(superko)
    assert superko.moves > 64 * 50 and superko.encoded > 0
    assert superko.refusals[K.KO_BAN] > 0 and superko.refusals[K.SUICIDE] > 0
    _no_differences(compare_games(64, 9, "simple-ko", seed=2))
    nogo = compare_games(64, 9, "nogo", seed=3)
    _no_differences(nogo)
    assert nogo.refusals[K.NOGO_CAPTURE] > 0


def test_random_19x19_games_agree_with_the_numba_rules():
    result = compare_games(8, 19, "superko", seed=4)
    _no_differences(result)
    assert result.moves > 8 * 100


def test_games_longer_than_the_harness_history_agree_after_it_stops_recording():
    capacity = K.history_capacity(5 * 5)  # 164 positions on 5x5
    result = compare_games(16, 5, "superko", seed=5, pass_prob=0.01, move_limit=3 * capacity)
    _no_differences(result)
    assert result.moves > 16 * capacity  # most games ran past it


@pytest.mark.slow
def test_ten_thousand_random_9x9_superko_games_agree_with_the_numba_rules():
    from harness.jaxgo.agreement import agreement

    result = agreement(10_000, 9, "superko", batch=1000)
    _no_differences(result)
    assert result.games == 10_000
    assert result.refusals[K.SUPERKO] > 0


def test_importing_harness_and_building_its_commands_imports_no_jax():
    code = ("import argparse, sys, harness, harness.commands.bench as b; "
            "b.add_arguments(argparse.ArgumentParser()); print('jax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
