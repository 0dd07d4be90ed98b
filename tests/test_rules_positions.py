"""Known Go and NoGo positions in, known answers out.

Every board is drawn in the test (``X`` Black, ``O`` White, ``.`` empty; the
top row is the highest GTP row number) and every expected answer was worked
out by hand from the rules, so these tests do not trust the kernel's own idea
of Go. Vertices are GTP's: column letter (no I), row counted from the bottom.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.game import board as K
from harness.game.geometry import BLACK, EMPTY, WHITE, geometry, gtp_to_point
from harness.game.position import Game, IllegalMove
from harness.game.result import GameResult

GO_RULES = ("superko", "simple-ko")


def at(game: Game, vertex: str) -> int:
    return gtp_to_point(vertex, game.size)


def play(game: Game, *vertices: str) -> list[int]:
    """Play the vertices in turn; the stones each one captured."""
    return [game.play(at(game, v)) for v in vertices]


def stone(game: Game, vertex: str) -> int:
    return int(game.stones[at(game, vertex)])


def legal_set(game: Game) -> set[int]:
    return set(np.flatnonzero(game.legal_moves()).tolist())


# --- captures ---------------------------------------------------------------

ONE_STONE_IN_ATARI = """
. . . . .
. . X . .
. X O X .
. . . . .
. . . . .
"""


@pytest.mark.parametrize("rules", GO_RULES)
def test_single_stone_capture_removes_it_and_counts_it(rules):
    game = Game.from_ascii(ONE_STONE_IN_ATARI, BLACK, rules=rules)
    assert play(game, "C2") == [1]
    assert stone(game, "C3") == EMPTY
    assert game.captures == (1, 0)
    assert game.to_play == WHITE
    assert game.ko_point == -1  # the capturing stone has three liberties


def test_two_stone_group_is_captured_as_a_whole():
    game = Game.from_ascii(
        """
        . . . . .
        . X X . .
        X O O X .
        . X . . .
        . . . . .
        """
    )
    assert play(game, "C2") == [2]
    assert stone(game, "B3") == stone(game, "C3") == EMPTY
    assert game.captures == (1 + 1, 0)


def test_one_move_captures_two_separate_groups():
    game = Game.from_ascii(
        """
        . X . X .
        X O . O X
        . X . X .
        . . . . .
        . . . . .
        """
    )
    assert play(game, "C4") == [2]
    assert stone(game, "B4") == stone(game, "D4") == EMPTY


SURROUNDED_FIVE = """
. X X X .
X O O O X
X O . O X
. X X X .
. . . . .
"""


def test_move_without_liberties_is_legal_when_it_captures():
    """C3 touches the white group three times and has no empty neighbour."""
    game = Game.from_ascii(SURROUNDED_FIVE, BLACK)
    assert game.check(at(game, "C3")) == "legal"
    assert play(game, "C3") == [5]  # counted once, not once per touching side
    assert game.board[1:3, 1:4].tolist() == [[EMPTY, EMPTY, EMPTY], [EMPTY, BLACK, EMPTY]]


def test_capture_on_the_edge():
    game = Game.from_ascii(
        """
        . X O X .
        . . . . .
        . . . . .
        . . . . .
        . . . . .
        """
    )
    assert play(game, "C4") == [1]
    assert stone(game, "C5") == EMPTY


@pytest.mark.parametrize(
    ("text", "move", "taken"),
    [
        ("O X . . .\n. . . . .\n. . . . .\n. . . . .\n. . . . .", "A4", ["A5"]),
        ("O O X . .\nX . . . .\n. . . . .\n. . . . .\n. . . . .", "B4", ["A5", "B5"]),
    ],
    ids=["one-stone", "two-stones"],
)
def test_capture_in_the_corner(text, move, taken):
    game = Game.from_ascii(text)
    assert play(game, move) == [len(taken)]
    assert all(stone(game, v) == EMPTY for v in taken)


def test_snapback_recaptures_more_than_the_stone_thrown_in():
    game = Game.from_ascii(
        """
        . . O X .
        O O O X .
        X X X X .
        . . . . .
        . . . . .
        """
    )
    assert play(game, "B5") == [0]  # throw-in: self-atari, legal
    assert play(game, "A5") == [1]  # White takes it...
    assert game.ko_point == -1  # ...with a stone that joins a group: no ko
    assert play(game, "B5") == [5]  # ...and loses five stones at once
    assert game.board[:2, :3].tolist() == [[EMPTY, BLACK, EMPTY], [EMPTY, EMPTY, EMPTY]]


# --- ko ---------------------------------------------------------------------

KO = """
. X O . .
X O . O .
. X O . .
. . . . .
. . . . .
"""


@pytest.mark.parametrize("rules", GO_RULES)
def test_simple_ko_forbids_the_immediate_recapture(rules):
    game = Game.from_ascii(KO, BLACK, rules=rules)
    assert play(game, "C4") == [1]
    assert game.ko_point == at(game, "B4")
    assert game.check(at(game, "B4")) == "ko"
    assert at(game, "B4") not in legal_set(game)
    with pytest.raises(IllegalMove) as info:
        play(game, "B4")
    assert info.value.reason == "ko"
    assert str(info.value) == "illegal move 2 B4 (ko)"


@pytest.mark.parametrize("rules", GO_RULES)
def test_ko_ban_lifts_after_moves_elsewhere(rules):
    game = Game.from_ascii(KO, BLACK, rules=rules)
    play(game, "C4", "E1", "A1")  # capture, ko threat, answer
    assert game.check(at(game, "B4")) == "legal"
    assert play(game, "B4") == [1]  # White retakes...
    assert game.check(at(game, "C4")) == "ko"  # ...and now Black must wait


@pytest.mark.parametrize("rules", GO_RULES)
def test_pass_lifts_the_ko_ban(rules):
    game = Game.from_ascii(KO, BLACK, rules=rules)
    play(game, "C4")
    game.pass_turn()  # White passes instead of retaking
    assert game.ko_point == -1
    play(game, "A1")
    assert play(game, "B4") == [1]


def test_ko_ban_binds_only_the_side_that_lost_the_stone():
    """A record may show the capturer moving again: it may fill the ko (a bug before)."""
    game = Game.from_ascii(KO, BLACK, rules="simple-ko")
    play(game, "C4")
    assert game.check(at(game, "B4"), WHITE) == "ko"
    assert game.check(at(game, "B4"), BLACK) == "legal"
    assert game.play(at(game, "B4"), BLACK) == 0
    assert game.ko_point == -1


TRIPLE_KO = """
. X O . . . X O .
X O . O . X . X O
. X O . . . X O .
. . . . . . . . .
. X O . . . . . .
X O . O . . . . .
. X O . . . . . .
. . . . . . . . .
. . . . . . . . .
"""
# Each move takes a ko other than the one just taken, so simple ko never objects.
TRIPLE_KO_CYCLE = ("C8", "G8", "C4", "B8", "H8", "B4")


def test_positional_superko_forbids_closing_a_triple_ko_cycle():
    game = Game.from_ascii(TRIPLE_KO, BLACK, rules="superko")
    start = game.stones.copy()
    assert play(game, *TRIPLE_KO_CYCLE[:5]) == [1] * 5
    last = at(game, TRIPLE_KO_CYCLE[5])
    assert game.ko_point != last  # not a simple-ko ban...
    assert game.check(last) == "positional superko"  # ...but it would repeat the start
    assert last not in legal_set(game)
    # The same point is fine for Black (no repetition), and White has other moves.
    assert game.check(last, BLACK) != "positional superko"
    assert game.check(at(game, "E1")) == "legal"
    assert np.array_equal(game.history[1], start)


def test_simple_ko_lets_the_triple_ko_cycle_repeat_forever():
    game = Game.from_ascii(TRIPLE_KO, BLACK, rules="simple-ko")
    start = game.stones.copy()
    start_hash = game.position_hash
    for _ in range(3):
        assert play(game, *TRIPLE_KO_CYCLE) == [1] * 6
        assert np.array_equal(game.stones, start)
        assert game.position_hash == start_hash
    assert game.captures == (9, 9)


# --- suicide ----------------------------------------------------------------


@pytest.mark.parametrize("rules", GO_RULES)
def test_single_stone_suicide_is_illegal(rules):
    game = Game.from_ascii(
        """
        . X . . .
        X . X . .
        . X . . .
        . . . . .
        . . . . .
        """,
        WHITE,
        rules=rules,
    )
    for vertex in ("B4", "A5"):  # in the eye, and in the corner
        assert game.check(at(game, vertex)) == "suicide"
        assert at(game, vertex) not in legal_set(game)
    with pytest.raises(IllegalMove, match="suicide"):
        play(game, "B4")
    assert game.check(at(game, "B4"), BLACK) == "legal"  # filling one's own eye is allowed


def test_multi_stone_suicide_is_illegal():
    game = Game.from_ascii(
        """
        X X X X .
        X O O X .
        X . X . .
        . X . . .
        . . . . .
        """,
        WHITE,
    )
    assert game.check(at(game, "B3")) == "suicide"  # would leave three stones without liberty
    assert game.check(at(game, "B3"), BLACK) == "legal"
    game.to_play = BLACK
    assert play(game, "B3") == [2]


def test_filling_the_last_liberty_of_six_stones_is_suicide():
    game = Game.from_ascii(SURROUNDED_FIVE, WHITE)
    assert game.check(at(game, "C3")) == "suicide"


def test_refused_move_changes_nothing():
    """Before the fix a refused move by the other colour still handed it the turn."""
    game = Game.from_ascii(SURROUNDED_FIVE, BLACK)
    before = (game.to_play, game.position_hash, game.stones.copy(), len(game.moves))
    with pytest.raises(IllegalMove):
        game.play(at(game, "C3"), WHITE)
    assert (game.to_play, game.position_hash, len(game.moves)) == (before[0], before[1], before[3])
    assert np.array_equal(game.stones, before[2])


def test_illegal_move_reports_number_vertex_and_reason():
    game = Game(9)
    play(game, "D4")
    with pytest.raises(IllegalMove) as info:
        play(game, "D4")
    assert str(info.value) == "illegal move 2 D4 (occupied point)"
    assert (info.value.reason, info.value.move_number) == ("occupied point", 2)
    assert game.check(-1) == game.check(82) == "off the board"


# --- scoring ----------------------------------------------------------------


def test_territory_is_counted_with_komi():
    game = Game.from_ascii(
        """
        . X O . .
        . X O . .
        . X O . .
        . X O . .
        . X O . .
        """,
        komi=0.5,
    )
    # Black: 5 stones + 5 empty points touching only Black = 10; White 5 + 10 = 15.
    assert game.score() == 10 - 15 - 0.5
    assert game.result() == GameResult(WHITE, "score", 5.5)
    assert game.ownership().reshape(5, 5)[0].tolist() == [1, 1, -1, -1, -1]


def test_dame_belongs_to_nobody():
    game = Game.from_ascii(
        """
        . X . O .
        . X . O .
        . X . O .
        . X . O .
        . X . O .
        """,
        komi=7.5,
    )
    assert game.ownership().reshape(5, 5)[:, 2].tolist() == [0] * 5
    assert game.score() == -7.5
    assert game.result().to_sgf() == "W+7.5"


SEKI = """
O . X O .
O . X O .
X X X O .
O O O O .
. . . . .
"""


def test_seki_stones_count_and_shared_liberties_are_neutral():
    game = Game.from_ascii(SEKI, BLACK, komi=0.0)
    # Neither side may take the shared liberties without putting itself in atari,
    # but the moves are legal (self-atari, not suicide).
    for vertex in ("B5", "B4"):
        assert game.check(at(game, vertex), BLACK) == "legal"
        assert game.check(at(game, vertex), WHITE) == "legal"
    owner = game.ownership().reshape(5, 5)
    assert owner[0, 1] == owner[1, 1] == 0
    # Black 5 stones; White 9 stones + 9 points of territory on the right and bottom.
    assert game.score() == 5 - 18
    assert game.result() == GameResult(WHITE, "score", 13.0)


def test_empty_board_belongs_to_nobody():
    game = Game(9, komi=7.5)
    assert game.ownership().tolist() == [0] * 81
    assert game.score() == -7.5


# --- end of game, setup, undo, copy -----------------------------------------


def test_two_passes_end_the_game_and_a_move_in_between_does_not():
    game = Game(9, komi=7.5)
    game.pass_turn()
    assert game.passes == 1 and not game.is_over
    play(game, "E5")  # White's stone: the whole board is White's area
    assert game.passes == 0
    game.pass_turn()
    game.pass_turn()
    assert game.is_over
    with pytest.raises(IllegalMove, match="game is over"):
        play(game, "A1")
    assert game.result() == GameResult(WHITE, "score", 81 + 7.5)


def test_resignation_decides_the_game():
    game = Game(9)
    play(game, "E5")
    game.resign()  # White, to move, resigns
    assert game.is_over
    assert game.result() == GameResult(BLACK, "resign")
    assert game.result().to_sgf() == "B+R"
    assert game.result().value_for(WHITE) == -1.0


HANDICAP_4 = ("D4", "Q16", "D16", "Q4")


def test_handicap_stones_then_white_moves_first():
    game = Game(19, komi=0.5)
    game.setup(black=[at(game, v) for v in HANDICAP_4])
    game.to_play = WHITE
    zob = geometry(19).zobrist
    expected_hash = 0
    for v in HANDICAP_4:
        expected_hash ^= int(zob[at(game, v), BLACK])
    assert game.position_hash == expected_hash
    assert len(game.history) == 2  # empty board, then the setup
    assert game.legal_moves()[at(game, "D4")] == 0
    play(game, "K10")
    assert stone(game, "K10") == WHITE and game.to_play == BLACK
    assert game.score() == 4 - 1 - 0.5  # no territory: every empty region touches both


def test_setup_can_remove_stones():
    game = Game.from_ascii(ONE_STONE_IN_ATARI)
    game.setup(empty=[at(game, "C3")])
    assert stone(game, "C3") == EMPTY
    assert game.position_hash == Game.from_ascii(ONE_STONE_IN_ATARI.replace("O", ".")).position_hash


def full_state(game: Game) -> dict:
    """Everything a position is made of, copied."""
    b = game.boards
    n = int(b.meta[0, K.HIST_LEN])
    state = {name: np.array(getattr(b, name)[0]) for name in K.Boards._fields if name != "history"}
    state["history"] = b.history[0, :n].copy()
    state["moves"] = list(game.moves)
    state["stones history"] = [s.copy() for s in game.history]
    state["to_play"] = game.to_play
    return state


def assert_same_state(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for key in want:
        if key == "stones history":
            assert len(got[key]) == len(want[key])
            assert all(np.array_equal(a, b) for a, b in zip(got[key], want[key], strict=True))
        else:
            assert np.array_equal(np.asarray(got[key]), np.asarray(want[key])), key


@pytest.mark.parametrize("rules", GO_RULES)
def test_undo_restores_the_exact_state_move_by_move(rules):
    """Captures, a ko, passes and a setup edit in between are all taken back exactly."""
    game = Game.from_ascii(KO, WHITE, rules=rules)  # White to move first (a bug before)
    states = [full_state(game)]
    for vertex in ("E1", "C4", "A1"):
        play(game, vertex)
        states.append(full_state(game))
    game.to_play = BLACK  # an edit between moves: Black moves twice
    states[-1] = full_state(game)
    for vertex in ("E2", "B4", "pass", "C2"):
        game.play(at(game, vertex))
        states.append(full_state(game))
    for want in reversed(states[:-1]):
        game.undo()
        assert_same_state(full_state(game), want)
    with pytest.raises(ValueError):
        game.undo()


def test_undo_after_a_setup_between_moves_keeps_the_setup():
    game = Game(9)
    play(game, "E5")
    game.setup(white=[at(game, "A1")])
    before = full_state(game)
    play(game, "C3")
    game.undo()
    assert_same_state(full_state(game), before)
    game.undo()  # back through the setup to the empty board
    assert game.moves == [] and not game.stones.any() and game.position_hash == 0


def test_copy_is_independent_of_the_original():
    game = Game.from_ascii(KO, BLACK)
    play(game, "C4")
    twin = game.copy()
    before = full_state(game)
    play(twin, "E1", "A1", "B4")
    assert_same_state(full_state(game), before)
    play(game, "D1")
    assert stone(twin, "D1") == EMPTY and stone(twin, "B4") == WHITE
    twin.undo()
    assert stone(twin, "B4") == EMPTY and twin.check(at(twin, "B4")) == "legal"
    assert stone(game, "D1") == WHITE


# --- NoGo -------------------------------------------------------------------

NOGO = """
. X . . . . . . .
X O X . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . O . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . X
"""


def test_nogo_forbids_capturing():
    game = Game.from_ascii(NOGO, BLACK, rules="nogo")
    assert game.check(at(game, "B7")) == "capture (forbidden in NoGo)"
    with pytest.raises(IllegalMove):
        play(game, "B7")
    assert game.check(at(game, "E4")) == "legal"


def test_nogo_forbids_suicide():
    game = Game.from_ascii(NOGO, WHITE, rules="nogo")
    assert game.check(at(game, "A9")) == "suicide"


def test_nogo_forbids_passing():
    game = Game(9, rules="nogo")
    assert game.check(game.pass_move) == "pass (forbidden in NoGo)"
    assert not game.legal_moves()[game.pass_move]
    with pytest.raises(IllegalMove):
        game.pass_turn()


FULL_OF_WHITE = "\n".join(
    " ".join("." if (r, c) in ((0, 0), (4, 4), (8, 8)) else "O" for c in range(9))
    for r in range(9)
)


def test_nogo_side_without_a_legal_move_loses():
    game = Game.from_ascii(FULL_OF_WHITE, BLACK, rules="nogo")
    assert not game.legal_moves().any()  # every point is suicide for Black
    assert game.is_over
    result = game.result()
    assert (result.winner, result.kind) == (WHITE, "score")
    assert result.to_sgf() == "W+"
    # White, to move in the same position, may still fill one of its three eyes.
    game.to_play = WHITE
    assert not game.is_over and game.legal_moves().sum() == 3


def test_nogo_random_playouts_end_only_when_the_side_to_move_has_no_legal_move():
    """Playouts skip own eyes; in NoGo that once ended a third of them too early."""
    geo = geometry(9)
    boards = K.new_boards(1, 9, K.NOGO)
    mask = np.zeros(82, np.bool_)
    early = 0
    for seed in range(200):
        K.seed_rng(seed)
        K.reset(boards, 0, 9, K.NOGO)
        K.playout(boards, 0, geo.neighbours, geo.diagonals, geo.zobrist, 1000)
        early += bool(K.legal_mask(boards, 0, geo.neighbours, geo.zobrist, mask).any())
        assert boards.meta[0, K.CAPS_BLACK] == boards.meta[0, K.CAPS_WHITE] == 0
    assert early == 0
