"""Invariants of the incremental rules kernel over many random games.

The kernel keeps groups, pseudo-liberties and the Zobrist hash up to date move
by move; here every one of those is recomputed from the stones alone (by the
kernel's ``rebuild`` and by a plain breadth-first search written in this file)
after every move, and must agree. Games come from two sources: Hypothesis
(small boards, shrinkable counterexamples) and seeded random games.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from harness.game import board as K
from harness.game.geometry import EMPTY, geometry
from harness.game.position import Game


def flood_groups(stones: np.ndarray, size: int) -> list[tuple[int, set[int], set[int]]]:
    """(colour, stones, liberties) of every group, by breadth-first search."""
    seen: set[int] = set()
    groups = []
    for start in range(size * size):
        color = int(stones[start])
        if color == EMPTY or start in seen:
            continue
        members, liberties, todo = {start}, set(), deque([start])
        seen.add(start)
        while todo:
            r, c = divmod(todo.popleft(), size)
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if not (0 <= rr < size and 0 <= cc < size):
                    continue
                q = rr * size + cc
                if stones[q] == EMPTY:
                    liberties.add(q)
                elif stones[q] == color and q not in members:
                    members.add(q)
                    seen.add(q)
                    todo.append(q)
        groups.append((color, members, liberties))
    return groups


def pseudo_liberties(members: set[int], size: int, stones: np.ndarray) -> list[int]:
    """One entry per (stone, empty neighbour) adjacency, as the kernel counts them."""
    out = []
    for s in members:
        r, c = divmod(s, size)
        for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= rr < size and 0 <= cc < size and stones[rr * size + cc] == EMPTY:
                out.append(rr * size + cc)
    return out


def zobrist_of(stones: np.ndarray, size: int) -> int:
    keys = geometry(size).zobrist
    h = 0
    for p in np.flatnonzero(stones):
        h ^= int(keys[p, stones[p]])
    return h


def check_incremental_state(game: Game) -> None:
    """Kernel state == state recomputed from the stones (by BFS and by ``rebuild``)."""
    b, size, geo = game.boards, game.size, game.geo
    stones = game.stones
    mark = np.zeros(size * size, np.int8)
    for _color, members, liberties in flood_groups(stones, size):
        assert liberties, "a group without liberties was left on the board"
        heads = {int(b.head[0, s]) for s in members}
        assert len(heads) == 1, "one group, one head"
        h = heads.pop()
        assert h in members
        ring, s = set(), h
        while True:  # the ring visits exactly the group's stones
            ring.add(s)
            s = int(b.nxt[0, s])
            if s == h:
                break
        assert ring == members
        pseudo = pseudo_liberties(members, size, stones)
        assert int(b.libs[0, h]) == len(pseudo)
        assert int(b.lib_sum[0, h]) == sum(q + 1 for q in pseudo)
        assert int(b.lib_sq[0, h]) == sum((q + 1) ** 2 for q in pseudo)
        assert int(b.group_size[0, h]) == len(members)
        assert K.count_liberties(b, 0, h, geo.neighbours, mark) == len(liberties)
        assert not mark.any(), "count_liberties must leave its scratch zeroed"
        assert K.in_atari(b, 0, h) == (len(liberties) == 1)
        if len(liberties) == 1:
            assert K.atari_point(b, 0, h) == next(iter(liberties))
    assert (b.head[0][stones == EMPTY] == -1).all()
    assert game.position_hash == zobrist_of(stones, size)
    fresh = K.new_boards(1, size, b.meta[0, K.RULE])
    fresh.stones[0] = stones
    K.rebuild(fresh, 0, geo.neighbours, geo.zobrist)
    assert fresh.hash[0] == b.hash[0]
    occupied = stones != EMPTY
    heads, fresh_heads = b.head[0][occupied], fresh.head[0][occupied]
    for field in ("libs", "lib_sum", "lib_sq", "group_size"):
        assert np.array_equal(getattr(b, field)[0][heads], getattr(fresh, field)[0][fresh_heads])


def random_game(size: int, rules: str, seed: int, max_moves: int, pass_rate: float = 0.02):
    """Yield the game after each uniformly random legal move (occasional passes)."""
    rng = np.random.default_rng(seed)
    game = Game(size, rules=rules)
    for _ in range(max_moves):
        if game.is_over:
            return
        legal = np.flatnonzero(game.legal_moves()[:-1])
        if rules != "nogo" and (len(legal) == 0 or rng.random() < pass_rate):
            game.pass_turn()
        elif len(legal) == 0:
            return
        else:
            game.play(int(rng.choice(legal)))
        yield game


def test_incremental_state_matches_recomputation_in_seeded_random_games():
    moves = 0
    captures = 0
    for seed, (size, rules) in enumerate([(5, "superko"), (7, "simple-ko"), (9, "superko"),
                                          (9, "nogo"), (13, "simple-ko")] * 2):
        for game in random_game(size, rules, seed, max_moves=3 * size * size):
            check_incremental_state(game)
            moves += 1
        captures += sum(game.captures)
    assert moves > 1500 and captures > 100  # the games did exercise captures


def test_legal_mask_agrees_with_checking_each_move_in_long_random_games():
    # The mask filters superko lookups through a bit set of the history's
    # hashes; checking one move scans the whole history. Long games on small
    # boards repeat stones often enough that some moves are superko-banned.
    banned = 0
    for seed, size in [(1, 5), (2, 5), (4, 5), (5, 7)]:
        for game in random_game(size, "superko", seed, max_moves=400, pass_rate=0.0):
            codes = [game.check(p) for p in range(size * size + 1)]
            expected = np.array([code == "legal" for code in codes])
            np.testing.assert_array_equal(game.legal_moves(), expected)
            banned += codes.count("positional superko")
    assert banned > 0  # the games did reach superko bans


@settings(max_examples=60, deadline=None)
@given(
    size=st.sampled_from([5, 6, 7]),
    rules=st.sampled_from(["superko", "simple-ko", "nogo"]),
    choices=st.lists(st.integers(0, 10_000), min_size=1, max_size=120),
)
def test_incremental_state_matches_recomputation_hypothesis(size, rules, choices):
    """Hypothesis picks the k-th legal move at each turn (k = 0 means pass in Go)."""
    game = Game(size, rules=rules)
    for k in choices:
        if game.is_over:
            break
        legal = np.flatnonzero(game.legal_moves())
        if rules != "nogo" and k % 50 == 0:
            game.pass_turn()
        else:
            game.play(int(legal[k % len(legal)]))
        check_incremental_state(game)


@settings(max_examples=50, deadline=None)
@given(data=st.data(), size=st.sampled_from([5, 9, 19]))
def test_hash_depends_on_the_position_not_the_move_order(data, size):
    """The same stones placed (without captures) in two orders give one hash."""
    points = data.draw(
        st.lists(st.integers(0, size * size - 1), min_size=1, max_size=size, unique=True)
    )
    colors = data.draw(
        st.lists(st.sampled_from([1, 2]), min_size=len(points), max_size=len(points))
    )
    order = data.draw(st.permutations(range(len(points))))
    games = []
    for sequence in (range(len(points)), order):
        game = Game(size, rules="simple-ko")
        for i in sequence:
            assume(game.check(points[i], colors[i]) == "legal")
            assume(game.play(points[i], colors[i]) == 0)  # a capture changes the position
        games.append(game)
    first, second = games
    assert np.array_equal(first.stones, second.stones)
    assert first.position_hash == second.position_hash == zobrist_of(first.stones, size)


def test_random_playouts_never_leave_a_group_without_liberties():
    """The kernel's own playout policy (random_move + play), checked after every move."""
    for size, games in ((9, 20), (19, 2)):
        geo = geometry(size)
        game = Game(size, rules="simple-ko")
        scratch = np.empty(size * size, np.int32)
        for seed in range(games):
            K.seed_rng(seed)
            K.reset(game.boards, 0, size, K.SIMPLE_KO)
            while game.passes < 2 and game.boards.meta[0, K.MOVES] < 3 * size * size:
                p = K.random_move(game.boards, 0, geo.neighbours, geo.diagonals, geo.zobrist,
                                  scratch)
                K.play(game.boards, 0, p, geo.neighbours, geo.zobrist)
                check_incremental_state(game)
