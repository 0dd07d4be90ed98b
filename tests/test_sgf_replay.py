"""Replaying records on the rules kernel: known positions in, known answers out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.sgf import ReplayError, parse_sgf_bytes, replay, replay_positions, replay_records

FIXTURES = Path(__file__).parent / "fixtures" / "sgf"


def one(data: bytes):
    (record,) = parse_sgf_bytes(data)
    return record


def board_of(ascii_board: str) -> np.ndarray:
    return Game.from_ascii(ascii_board).board.copy()


# A ko on the top-left of a 9x9 board: Black takes at move 9 (c8), White may
# not take back at once (move 10, b8).
KO_GAME = b"(;GM[1]SZ[9]RE[B+R];B[ba];W[ca];B[ab];W[db];B[bc];W[cc];B[ii];W[bb];B[cb];W[bb])"
AFTER_KO_CAPTURE = """
. X O . . . . . .
X . X O . . . . .
. X O . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . X
"""


def test_capture_gives_the_known_position_and_ko_is_refused():
    record = one(KO_GAME)
    with pytest.raises(ReplayError, match=r"^illegal move 10 B8 \(ko\)$"):
        replay(record)
    record.moves = record.moves[:9]
    game = replay(record)
    assert np.array_equal(game.board, board_of(AFTER_KO_CAPTURE))
    assert game.captures == (1, 0)
    positions = replay_positions(record)
    assert np.array_equal(positions[-1].reshape(9, 9), board_of(AFTER_KO_CAPTURE))


def test_a_missing_pass_lifts_the_ko_ban():
    # Black takes the ko, then Black again (White's pass left out of the
    # record): White may now retake, in both replays.
    record = one(KO_GAME[:-7] + b";B[ie];W[bb])")
    assert len(record.moves) == 11
    game = replay(record)
    assert game.captures == (1, 1)
    assert np.array_equal(replay_positions(record)[-1], game.stones)


def test_illegal_move_57_occupied_point():
    record = one((FIXTURES / "illegal_move_57.sgf").read_bytes())
    assert record.reject is None and len(record.moves) == 57
    with pytest.raises(ReplayError) as info:
        replay(record)
    assert str(info.value) == "illegal move 57 L19 (occupied point)"
    with pytest.raises(ReplayError, match=r"^illegal move 57 L19 \(occupied point\)$"):
        replay_positions(record)
    ((checked, game),) = list(replay_records([record]))
    assert game is None and checked.reject == "illegal move 57 L19 (occupied point)"


def test_suicide_is_refused():
    record = one(b"(;GM[1]SZ[9];B[ee];W[ba];B[fe];W[ab];B[aa])")
    with pytest.raises(ReplayError, match=r"^illegal move 5 A9 \(suicide\)$"):
        replay(record)


def test_the_same_colour_twice_is_replayed_unless_strict():
    record = one(b"(;GM[1]SZ[9];B[ee];B[cc];W[gg])")
    game = replay(record)
    assert game.moves == [(BLACK, 40), (BLACK, 20), (WHITE, 60)]
    with pytest.raises(ReplayError, match="move 2 C7: Black moves twice"):
        replay(record, strict_alternation=True)
    with pytest.raises(ReplayError, match="move 2 C7: Black moves twice"):
        replay_positions(record, strict_alternation=True)


def test_play_resumes_after_two_passes():
    record = one(b"(;GM[1]SZ[9];B[ee];W[cc];B[];W[];B[gg];W[])")
    game = replay(record)
    assert len(game.moves) == 6 and game.passes == 1
    assert replay_positions(record).shape == (7, 81)


def test_handicap_setup_is_on_the_board_before_the_first_move():
    record = one((FIXTURES / "handicap_second_node.sgf").read_bytes())
    positions = replay_positions(record)
    start = positions[0].reshape(19, 19)
    assert start[15, 3] == BLACK and start[3, 15] == BLACK and (start != 0).sum() == 2
    game = replay(record)
    assert np.array_equal(game.history[-1], positions[-1])


def test_mid_game_setup_is_applied_before_the_next_move():
    record = one(b"(;GM[1]SZ[9];B[ee];W[cc];AE[ee]AB[gg];W[ee])")
    positions = replay_positions(record)
    before_third = positions[2].reshape(9, 9)
    assert before_third[4, 4] == 0 and before_third[6, 6] == BLACK
    assert positions[3].reshape(9, 9)[4, 4] == WHITE
    game = replay(record)
    assert np.array_equal(game.history[-1], positions[-1])


def test_setup_without_liberties_is_rejected():
    record = one(b"(;GM[1]SZ[9]AB[aa]AW[ba][ab];W[ee])")
    with pytest.raises(ReplayError, match="leaves a group without liberties at A9"):
        replay(record)
    with pytest.raises(ReplayError, match="leaves a group without liberties at A9"):
        replay_positions(record)


def test_resignation_in_the_record_becomes_the_game_result():
    game = replay(one(b"(;GM[1]SZ[9]RE[W+R];B[ee];W[cc])"))
    assert game.result().winner == WHITE and game.result().kind == "resign"


def test_rejected_records_do_not_replay():
    record = one(b"(;GM[1]SZ[25];B[aa])")
    with pytest.raises(ReplayError, match="board size 25 unsupported"):
        replay(record)


def test_compiled_replay_matches_the_game_api_move_by_move():
    # A long game with captures: random legal moves written as SGF, then read.
    from harness.bench.sgf import generated_sgf

    records = parse_sgf_bytes(generated_sgf(3, size=9, seed=7))
    assert len(records) == 3
    for record in records:
        positions = replay_positions(record)
        game = replay(record)
        assert np.array_equal(np.array(game.history), positions)
        assert any(p == 81 for _, p in record.moves)  # the games end in passes
