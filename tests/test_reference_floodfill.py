"""The compiled kernel against an independent flood-fill implementation of the rules.

Reference: ``FloodFillGo`` below, written for this test and sharing no code
with ``harness.game.board``. It keeps nothing incremental: at every move it
labels all groups from scratch (``scipy.ndimage.label``), counts each group's
distinct liberties, derives captures and suicide from those counts, builds the
board after every candidate move, and applies ko by its definition on whole
boards (simple ko: the move may not recreate the position before the
opponent's last move; positional superko: nor any earlier position). The
move actually played is re-played a second way (place the stone, remove
opponent groups left without liberties) and must give the same board.

At every move of every random game the two implementations must agree on the
legal-move set, on the board after each legal move and the stones it captures,
and at the end on the Tromp-Taylor area (owner of every point and the score).
Games use simple ko, positional superko and NoGo in turn; moves are uniformly
random among legal moves that do not fill a point whose neighbours are all
the mover's own stones, with occasional passes.

The default run plays 240 games on 9x9 and 8 on 19x19 (about 10 s of CPU on
one core); the slow run plays 1,000 games on 9x9 and 1,000 on 19x19 (about
6 minutes of CPU on one core, 19x19 dominating; measured 23 minutes of wall
time on a 2-core machine shared with other jobs; 512,000 19x19 positions):
``pytest -m slow tests/test_reference_floodfill.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from numba import njit
from scipy import ndimage

from harness.game import board as K
from harness.game.geometry import BLACK, EMPTY, WHITE, geometry, point_to_gtp

FOUR = ndimage.generate_binary_structure(2, 1)  # orthogonal adjacency only
KERNEL_RULE = {"simple-ko": K.SIMPLE_KO, "superko": K.POSITIONAL_SUPERKO, "nogo": K.NOGO}


def neighbour_values(a: np.ndarray, fill) -> np.ndarray:
    """(4, S, S): at each point, the value of ``a`` above, below, left and right of it."""
    out = np.full((4, *a.shape), fill, dtype=a.dtype)
    out[0, 1:, :] = a[:-1, :]
    out[1, :-1, :] = a[1:, :]
    out[2, :, 1:] = a[:, :-1]
    out[3, :, :-1] = a[:, 1:]
    return out


def distinct_liberties(labels: np.ndarray, count: int, empty: np.ndarray) -> np.ndarray:
    """Number of distinct empty points next to each labelled group (index 0 unused)."""
    touching = np.where(empty, neighbour_values(labels, 0), 0)
    for k in range(1, 4):  # an empty point next to a group twice is one liberty
        for j in range(k):
            touching[k][touching[k] == touching[j]] = 0
    counts = np.bincount(touching.ravel(), minlength=count + 1)
    counts[0] = 0
    return counts


def play_and_look(board: np.ndarray, p: int, color: int) -> tuple[np.ndarray, int, bool]:
    """(board after, stones captured, own stone has a liberty) by the literal rule."""
    after = board.copy()
    after.flat[p] = color
    breathing = neighbour_values(after == EMPTY, False).any(0)
    enemy, _ = ndimage.label(after == 3 - color, FOUR)
    alive = np.unique(enemy[breathing & (enemy > 0)])
    dead = (enemy > 0) & ~np.isin(enemy, alive)
    after[dead] = EMPTY
    breathing = neighbour_values(after == EMPTY, False).any(0)
    friends, _ = ndimage.label(after == color, FOUR)
    mine = friends.flat[p]
    return after, int(dead.sum()), bool((breathing & (friends == mine)).any())


def area_owner(board: np.ndarray) -> np.ndarray:
    """Tromp-Taylor: stones, and empty regions reaching only one colour."""
    region, count = ndimage.label(board == EMPTY, FOUR)
    reaches = {}
    for color in (BLACK, WHITE):
        next_to = neighbour_values(board == color, False).any(0) & (region > 0)
        reaches[color] = np.zeros(count + 1, bool)
        reaches[color][region[next_to]] = True
    region_owner = np.where(reaches[BLACK] & ~reaches[WHITE], 1, 0)
    region_owner = np.where(reaches[WHITE] & ~reaches[BLACK], -1, region_owner)
    owner = np.where(board == BLACK, 1, np.where(board == WHITE, -1, 0))
    return np.where(board == EMPTY, region_owner[region], owner)


@dataclass
class Successors:
    legal: np.ndarray  # bool (P + 1,)
    after: np.ndarray  # int8 (P, P): row p = board after p (rows of illegal p unused)
    taken: np.ndarray  # int (P,)
    suicides: int = 0
    ko_bans: int = 0
    superko_bans: int = 0  # repetitions other than the simple-ko recapture
    nogo_capture_bans: int = 0


@dataclass
class FloodFillGo:
    """Go and NoGo from the definitions, recomputed from scratch at every move."""

    size: int
    rules: str
    board: np.ndarray = field(init=False)
    to_play: int = BLACK
    previous: np.ndarray | None = None  # position before the last move
    seen: set[bytes] = field(default_factory=set)
    captures: dict[int, int] = field(default_factory=lambda: {BLACK: 0, WHITE: 0})

    def __post_init__(self) -> None:
        self.board = np.zeros((self.size, self.size), np.int8)
        self.seen.add(self.board.tobytes())

    def successors(self) -> Successors:
        n = self.size * self.size
        color, board = self.to_play, self.board
        empty = board == EMPTY
        own, n_own = ndimage.label(board == color, FOUR)
        enemy, n_enemy = ndimage.label(board == 3 - color, FOUR)
        own_libs = distinct_liberties(own, n_own, empty)
        enemy_libs = distinct_liberties(enemy, n_enemy, empty)
        own_next, enemy_next = neighbour_values(own, 0), neighbour_values(enemy, 0)
        # An enemy group next to p whose only liberty is p dies when p is played.
        dying = np.where((enemy_next > 0) & (enemy_libs[enemy_next] == 1), enemy_next, 0)
        captures = (dying > 0).any(0) & empty
        breathes = neighbour_values(empty, False).any(0) | (
            (own_next > 0) & (own_libs[own_next] >= 2)
        ).any(0)
        suicide = empty & ~captures & ~breathes
        candidate = empty & ~suicide
        out = Successors(np.zeros(n + 1, bool), np.zeros((n, n), np.int8), np.zeros(n, int))
        out.suicides = int(suicide.sum())
        if self.rules == "nogo":
            out.nogo_capture_bans = int((candidate & captures).sum())
            candidate &= ~captures
        points = np.flatnonzero(candidate)
        after = np.repeat(board.reshape(1, n), len(points), axis=0)
        after[np.arange(len(points)), points] = color
        groups = dying.reshape(4, n)[:, points].T  # (candidates, 4) groups each one kills
        kills = np.zeros((len(points), n_enemy + 1), bool)
        kills[np.arange(len(points))[:, None], groups] = True
        kills[:, 0] = False  # label 0 is "no group"
        removed = kills[:, enemy.reshape(n)]  # (candidates, P): stones each one takes
        after[removed] = EMPTY
        ok = np.ones(len(points), bool)
        if self.rules != "nogo" and self.previous is not None:
            recapture = (after == self.previous.reshape(1, n)).all(1)
            out.ko_bans = int(recapture.sum())
            ok &= ~recapture
        if self.rules == "superko":
            repeat = np.array([row.tobytes() in self.seen for row in after], bool)
            out.superko_bans = int((repeat & ok).sum())
            ok &= ~repeat
        out.legal[points[ok]] = True
        out.legal[n] = self.rules != "nogo"
        out.after[points] = after
        out.taken[points] = removed.sum(1)
        return out

    def play(self, p: int, successors: Successors) -> None:
        self.previous = self.board.copy()
        if p < self.size * self.size:
            after, taken, breathes = play_and_look(self.board, p, self.to_play)
            assert breathes, "reference self-check: a legal move keeps a liberty"
            assert np.array_equal(after.reshape(-1), successors.after[p])
            assert taken == successors.taken[p], "reference self-check: two ways to capture"
            self.board = after
            self.captures[self.to_play] += taken
        self.seen.add(self.board.tobytes())
        self.to_play = 3 - self.to_play


@njit(cache=False)
def kernel_successors(b, g, scratch, nbr, zob, legal, after, taken):
    """Board and captures after each legal point, each played on a copy of game ``g``.

    Between moves the copy is restored field by field except the history, which
    ``play`` only appends to (restoring ``meta`` rewinds its length): copying a
    long history for every candidate would dominate the run time.
    """
    K.copy_game(b, g, scratch, 0)
    for p in range(b.stones.shape[1]):
        if legal[p]:
            taken[p] = K.play(scratch, 0, p, nbr, zob)
            after[p, :] = scratch.stones[0, :]
            scratch.stones[0, :] = b.stones[g, :]
            scratch.head[0, :] = b.head[g, :]
            scratch.nxt[0, :] = b.nxt[g, :]
            scratch.libs[0, :] = b.libs[g, :]
            scratch.lib_sum[0, :] = b.lib_sum[g, :]
            scratch.lib_sq[0, :] = b.lib_sq[g, :]
            scratch.group_size[0, :] = b.group_size[g, :]
            scratch.meta[0, :] = b.meta[g, :]
            scratch.hash[0] = b.hash[g]


def vertices(points, size: int) -> str:
    return " ".join(point_to_gtp(int(p), size) for p in points)


def ascii_board(stones: np.ndarray, size: int) -> str:
    return "\n".join(
        " ".join(".XO"[v] for v in stones.reshape(size, size)[r]) for r in range(size)
    )


@dataclass
class Tally:
    games: int = 0
    positions: int = 0
    moves_compared: int = 0
    captures: int = 0
    suicides: int = 0
    ko_bans: int = 0
    superko_bans: int = 0
    nogo_capture_bans: int = 0


def play_and_compare(size: int, rules: str, seed: int, tally: Tally, pass_rate=0.02) -> None:
    """One random game, both implementations checked at every move."""
    rng = np.random.default_rng(seed)
    geo = geometry(size)
    nbr, zob = geo.neighbours, geo.zobrist
    n = size * size
    boards = K.new_boards(1, size, KERNEL_RULE[rules])
    scratch = K.new_boards(1, size, KERNEL_RULE[rules])
    ref = FloodFillGo(size, rules)
    mask = np.zeros(n + 1, np.bool_)
    after = np.zeros((n, n), np.int8)
    taken = np.zeros(n, np.int64)
    where = f"{size}x{size} {rules} seed {seed}"
    passes = 0
    for move_number in range(1, 3 * n + 1):  # < history capacity, so superko is exact
        K.legal_mask(boards, 0, nbr, zob, mask)
        expected = ref.successors()
        before = boards.stones[0].copy()
        here = f"{where}, move {move_number}, from\n{ascii_board(before, size)}"
        if not np.array_equal(mask, expected.legal):
            extra = np.flatnonzero(mask & ~expected.legal)
            missing = np.flatnonzero(expected.legal & ~mask)
            raise AssertionError(
                f"legal moves differ ({here})\nkernel only: {vertices(extra, size)}\n"
                f"reference only: {vertices(missing, size)}"
            )
        kernel_successors(boards, 0, scratch, nbr, zob, mask, after, taken)
        legal_points = np.flatnonzero(mask[:n])
        differs = (after[legal_points] != expected.after[legal_points]).any(1)
        differs |= taken[legal_points] != expected.taken[legal_points]
        for p in legal_points[differs][:1]:
            raise AssertionError(
                f"move {point_to_gtp(int(p), size)} differs ({here})\n"
                f"kernel after ({taken[p]} taken):\n{ascii_board(after[p], size)}\n"
                f"reference after ({expected.taken[p]} taken):\n"
                f"{ascii_board(expected.after[p], size)}"
            )
        tally.positions += 1
        tally.moves_compared += len(legal_points)
        tally.suicides += expected.suicides
        tally.ko_bans += expected.ko_bans
        tally.superko_bans += expected.superko_bans
        tally.nogo_capture_bans += expected.nogo_capture_bans

        own_eye = neighbour_values(ref.board == ref.to_play, True).all(0).reshape(n)
        not_own_eye = legal_points[~own_eye[legal_points]]
        if rules == "nogo":
            if len(legal_points) == 0:
                break  # the side to move has lost
            choice = not_own_eye if len(not_own_eye) else legal_points
            p = int(rng.choice(choice))
        elif len(not_own_eye) == 0 or rng.random() < pass_rate:
            p = n
        else:
            p = int(rng.choice(not_own_eye))
        got = K.play(boards, 0, p, nbr, zob)
        ref.play(p, expected)
        tally.captures += got
        assert np.array_equal(boards.stones[0], ref.board.reshape(-1)), where
        assert boards.meta[0, K.TO_PLAY] == ref.to_play
        assert boards.meta[0, K.CAPS_BLACK] == ref.captures[BLACK], where
        assert boards.meta[0, K.CAPS_WHITE] == ref.captures[WHITE], where
        passes = passes + 1 if p == n else 0
        if passes == 2:
            break
    owner = np.zeros(n, np.int32)
    score = K.area_score(boards, 0, nbr, owner)
    expected_owner = area_owner(ref.board).reshape(-1)
    assert np.array_equal(owner, expected_owner), f"area owner differs ({where})"
    assert score == expected_owner.sum()
    tally.games += 1


def run_games(size: int, games: int, rules_cycle: tuple[str, ...], seed0: int) -> Tally:
    tally = Tally()
    for i in range(games):
        play_and_compare(size, rules_cycle[i % len(rules_cycle)], seed0 + i, tally)
    print(f"\n{size}x{size}: {tally}")
    return tally


def test_reference_helpers_on_known_positions():
    """The reference itself, on a board worked out by hand (a ko and a suicide point)."""
    ref = FloodFillGo(5, "simple-ko")
    ref.board[:] = np.array(
        [[0, 1, 2, 0, 0], [1, 2, 0, 2, 0], [0, 1, 2, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]]
    )
    s = ref.successors()  # Black to move: C4 (point 7) takes B4 (point 6)
    assert s.taken[7] == 1 and s.after[7][6] == EMPTY and s.legal[7]
    ref.play(7, s)
    s = ref.successors()  # White may not retake at once, and A5 (0) is suicide
    assert not s.legal[6] and s.ko_bans == 1
    assert not s.legal[0] and s.suicides >= 1
    assert area_owner(np.array([[1, 0], [0, 2]], np.int8)).tolist() == [[1, 0], [0, -1]]


def test_kernel_agrees_with_flood_fill_reference_9x9():
    tally = run_games(9, 240, ("simple-ko", "superko", "nogo"), seed0=0)
    # The games must have exercised the rules being compared.
    assert tally.captures > 1000 and tally.suicides > 100 and tally.ko_bans > 20
    assert tally.nogo_capture_bans > 100


def test_kernel_agrees_with_flood_fill_reference_19x19():
    tally = run_games(19, 8, ("simple-ko", "superko"), seed0=100)
    assert tally.captures > 100


@pytest.mark.slow
def test_kernel_agrees_with_flood_fill_reference_1000_games_9x9():
    tally = run_games(9, 1000, ("simple-ko", "superko", "nogo"), seed0=10_000)
    assert tally.games == 1000 and tally.superko_bans > 0


@pytest.mark.slow
def test_kernel_agrees_with_flood_fill_reference_1000_games_19x19():
    tally = run_games(19, 1000, ("simple-ko", "superko"), seed0=20_000)
    assert tally.games == 1000
