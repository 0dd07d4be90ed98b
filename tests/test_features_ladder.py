"""The ladder reader and the cazenave21 ladder planes on known positions.

Expected answers were checked against GNU Go's strict ladder reader
(``ladder_attack``); ``test_agrees_with_gnugo_on_these_positions`` re-checks
them whenever GNU Go is installed.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from harness.features import get_encoder
from harness.features.ladder import ladder_map
from harness.features.strings import liberty_map
from harness.game.geometry import BLACK, WHITE, gtp_to_point, point_to_gtp
from harness.game.position import Game

GNUGO = shutil.which("gnugo") or ("/usr/games/gnugo" if shutil.which("/usr/games/gnugo") else None)

# White D5-D4 (E5-E4 on 9x9) has two liberties; Black to move ataris from
# above and the ladder runs up and right to the edge: captured.
LADDER_WORKS = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . X O . . . .
. . . X O X . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
"""
# The same with a white stone on H8, on the ladder's path: it escapes.
LADDER_BROKEN = LADDER_WORKS.replace(
    ". . . . . . . . .\n. . . . . . . . .\n", ". . . . . . . . .\n. . . . . . . O .\n", 1
)
# Black has just played the atari on E6: White to move cannot get out.
IN_ATARI_LOST = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . X . . . .
. . . X O . . . .
. . . X O X . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
"""
# The atari stone on E6 is itself in atari (White E7, D6): White captures
# it with F6 and is out, although extending on F5 alone would fail.
CAPTURE_ESCAPES = """
. . . . . . . . .
. . . . . . . . .
. . . . O . . . .
. . . O X . . . .
. . . X O . . . .
. . . X O X . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
"""
# A ladder across a 13x13 board, from D5-D4 to the upper right.
LONG_LADDER = """
. . . . . . . . . . . . .
. . . . . . . . . . . . .
. . . . . . . . . . . . .
. . . . . . . . . . . . .
. . . . . . . . . . . . .
. . . . . . . . . . . . .
. . . . . . . . . . . . .
. . . . . . . . . . . . .
. . X O . . . . . . . . .
. . X O X . . . . . . . .
. . . X . . . . . . . . .
. . . . . . . . . . . . .
. . . . . . . . . . . . .
"""


def with_stone(board: str, row: int, col: int, stone: str) -> str:
    rows = [line.split() for line in board.strip().splitlines()]
    rows[row][col] = stone
    return "\n".join(" ".join(r) for r in rows)


LONG_BROKEN = with_stone(LONG_LADDER, 2, 9, "O")  # a defender stone on K11
LONG_ATTACKER_STONE = with_stone(LONG_LADDER, 2, 9, "X")  # an attacker stone there helps


def swap_colours(board: str) -> str:
    return board.translate(str.maketrans("XO", "OX"))


def captured(board: str, vertex: str) -> bool:
    game = Game.from_ascii(board)
    lost = ladder_map(game.stones, game.size)
    return bool(lost[gtp_to_point(vertex, game.size)])


CASES = [
    # (board, a stone of the target string, captured?)
    (LADDER_WORKS, "E5", True),
    (LADDER_BROKEN, "E5", False),
    (IN_ATARI_LOST, "E5", True),
    (CAPTURE_ESCAPES, "E5", False),
    (LONG_LADDER, "D5", True),
    (LONG_BROKEN, "D5", False),
    (LONG_ATTACKER_STONE, "D5", True),
]


@pytest.mark.parametrize("colours", ["as drawn", "swapped"])
@pytest.mark.parametrize(("board", "vertex", "expected"), CASES)
def test_ladder_reads(board, vertex, expected, colours):
    if colours == "swapped":
        board = swap_colours(board)
    assert captured(board, vertex) is expected


def test_whole_string_shares_the_status_and_free_strings_are_never_marked():
    game = Game.from_ascii(LADDER_WORKS)
    lost = ladder_map(game.stones, 9).reshape(9, 9)
    assert lost[4, 4] and lost[5, 4]  # E5 and E4
    assert lost.sum() == 2  # the black stones all have three or more liberties


def test_crawling_under_a_wall_on_the_first_line_is_lost():
    # White A1 is in atari under Black's second-line wall: each step along the
    # first line leaves it one liberty again.
    board = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    X X X X X X .
    O . . . . . .
    """
    assert captured(board, "A1")


def test_an_escape_that_would_be_suicide_is_no_escape():
    # White B1 has two liberties, A1 and C1; after either atari the other
    # liberty is a point where White's string would have no liberty at all.
    board = """
    . . . . .
    . . . . .
    . . . . .
    X X X . .
    . O . X .
    """
    assert captured(board, "B1")


# --- the four cazenave21 ladder planes -----------------------------------------

LOST_OWN = "lost ladder: own strings in atari that cannot escape"
LOST_OPP = "lost ladder: opponent strings in atari that could not escape"
CHASED_OWN = "unsettled ladder: own two-liberty strings the opponent can ladder"
CHASED_OPP = "unsettled ladder: opponent two-liberty strings we can ladder"
LADDER_PLANES = (LOST_OWN, LOST_OPP, CHASED_OWN, CHASED_OPP)


def ladder_planes(board: str, to_play: int) -> dict[str, set[str]]:
    game = Game.from_ascii(board, to_play=to_play)
    encoder = get_encoder("cazenave21")
    x = encoder.encode_game(game)
    out = {}
    for name in LADDER_PLANES:
        marked = np.flatnonzero(x[..., encoder.plane_names.index(name)].ravel())
        out[name] = {point_to_gtp(int(p), game.size) for p in marked}
    return out


@pytest.mark.parametrize(
    ("board", "to_play", "plane_with_target"),
    [
        (LADDER_WORKS, BLACK, CHASED_OPP),  # we (Black) can start the ladder
        (LADDER_WORKS, WHITE, CHASED_OWN),  # White must defend before Black ladders it
        (IN_ATARI_LOST, WHITE, LOST_OWN),
        (IN_ATARI_LOST, BLACK, LOST_OPP),
    ],
)
def test_planes_say_whose_string_is_in_the_ladder(board, to_play, plane_with_target):
    for colours in ("as drawn", "swapped"):
        b = swap_colours(board) if colours == "swapped" else board
        player = to_play if colours == "as drawn" else 3 - to_play
        planes = ladder_planes(b, player)
        for name in LADDER_PLANES:
            expected = {"E5", "E4"} if name == plane_with_target else set()
            assert planes[name] == expected, (colours, name)


@pytest.mark.parametrize("board", [LADDER_BROKEN, CAPTURE_ESCAPES])
def test_planes_are_empty_when_the_ladder_fails(board):
    for to_play in (BLACK, WHITE):
        assert all(not marked for marked in ladder_planes(board, to_play).values())


# --- GNU Go as an independent reference ------------------------------------------


def gnugo_ladder_attack(board: str) -> dict[str, bool]:
    """GNU Go's strict ladder reader on every two-liberty string of ``board``."""
    game = Game.from_ascii(board)
    size = game.size
    commands = [f"boardsize {size}", "clear_board"]
    for p in np.flatnonzero(game.stones):
        colour = "black" if game.stones[p] == BLACK else "white"
        commands.append(f"play {colour} {point_to_gtp(int(p), size)}")
    targets = [int(p) for p in np.flatnonzero(liberty_map(game.stones, size) == 2)]
    commands += [f"ladder_attack {point_to_gtp(p, size)}" for p in targets]
    reply = subprocess.run(
        [GNUGO, "--mode", "gtp"],
        input="\n".join([*commands, "quit"]) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    answers = [line for line in reply.splitlines() if line.startswith("=")]
    codes = answers[len(commands) - len(targets) : len(commands)]
    return {
        point_to_gtp(p, size): code.split()[1] == "1"
        for p, code in zip(targets, codes, strict=True)
    }


@pytest.mark.gnugo
@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed")
@pytest.mark.parametrize(
    "board", [LADDER_WORKS, LADDER_BROKEN, LONG_LADDER, LONG_BROKEN, LONG_ATTACKER_STONE]
)
def test_agrees_with_gnugo_on_these_positions(board):
    for b in (board, swap_colours(board)):
        reference = gnugo_ladder_attack(b)
        assert reference, "the position has two-liberty strings"
        assert {v: captured(b, v) for v in reference} == reference
