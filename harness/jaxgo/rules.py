"""Batched Go and NoGo as pure JAX functions of a :class:`GoState`.

The semantics are the harness's numba rules (:mod:`harness.game.board`),
including their corners: suicide is illegal; the simple-ko ban also binds
under positional superko; positional superko forbids any move (not only a
capture) whose position, by its Zobrist hash, occurred before in the game,
and the hash keys are the harness's own, so the two sides agree bit for
bit; a history that has filled ``history_capacity`` stops recording, as
the harness's does; NoGo forbids captures, suicide and passing, and the
side to move without a legal move has lost.

Every array has the batch as its first axis and a static shape, so one
compiled :func:`step` serves every game of any of the three rules (the rule
is data, per game). Inside, the functions are written for one game and
mapped with ``jax.vmap``; there is no Python loop over points, only the
score's flood fill is a ``lax.while_loop`` (run at the end of a game).

Chains (strings of stones) are kept incrementally, as the harness keeps its
rings: each stone holds its chain's id, which is always one of the chain's
stones, and each id its chain's hash (the XOR of the stones' keys). A move
relabels the chains it joins to its own point, so ids never collide, and a
capture removes whole chains, so an id never outlives its stones. Liberties
are counted afresh after every move (one scatter-add over the board), which
is what lets :func:`legal_mask` judge all points at once: a candidate's
superko hash is the current hash, its stone's key and the hashes of the
opponent chains in atari beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from harness.features.encoders import history_window
from harness.game import board as K
from harness.game.geometry import BLACK, EMPTY, WHITE, geometry
from harness.game.position import DEFAULT_KOMI, RULE_NAMES, Game, move_cap

OFF_BOARD = 3  # the colour a neighbour table's padding point reads as
RECENT = 8  # boards kept for the encoders (agz17's history)


class GoState(NamedTuple):
    """A batch of games; every field's first axis is the game (``B``), ``P`` points.

    A pytree of arrays: it passes through ``jax.jit``, ``vmap`` and ``lax``
    loops, and a search may keep one per node.
    """

    board: jax.Array  # int8 (B, P): EMPTY, BLACK or WHITE (the harness's colours)
    chain: jax.Array  # int32 (B, P): id of the point's chain (one of its stones); P if empty
    chain_hash: jax.Array  # uint32 (B, P + 1, 2): a chain's hash by id (row P: zero)
    liberties: jax.Array  # int32 (B, P + 1): a chain's distinct liberties by id (row P: zero)
    to_play: jax.Array  # int32 (B,): BLACK or WHITE
    ko: jax.Array  # int32 (B,): the point the side to move may not retake; -1 if none
    passes: jax.Array  # int32 (B,): consecutive passes just played
    moves: jax.Array  # int32 (B,): moves played (passes included)
    last_move: jax.Array  # int32 (B,): the last move (P is pass), -1 before the first
    captures: jax.Array  # int32 (B, 2): stones taken by Black, by White
    rule: jax.Array  # int32 (B,): board.SIMPLE_KO, POSITIONAL_SUPERKO or NOGO
    komi: jax.Array  # float32 (B,)
    move_limit: jax.Array  # int32 (B,): moves after which the game stops and is scored
    hash: jax.Array  # uint32 (B, 2): low and high words of the harness's Zobrist hash
    history: jax.Array  # uint32 (B, H, 2): hashes of the positions so far, oldest first
    history_len: jax.Array  # int32 (B,): entries of ``history`` in use
    recent: jax.Array  # int8 (B, RECENT, P): the last boards, oldest first, empty before
    legal: jax.Array  # bool (B, P + 1): the side to move's legal moves, pass last
    over: jax.Array  # bool (B,): two passes, the move limit, or a NoGo player without a move


class Tables(NamedTuple):
    """What a board size fixes, as arrays the traced functions close over."""

    neighbours: np.ndarray  # int32 (P, 4): a neighbour point, P off the board
    diagonals: np.ndarray  # int32 (P, 4): a diagonal point, P off the board
    keys: np.ndarray  # uint32 (P, 3, 2): the harness's Zobrist key by colour, as two words


@cache
def tables(size: int) -> Tables:
    geo = geometry(size)
    points = geo.points
    def padded(table):
        return np.where(table < 0, points, table).astype(np.int32)

    return Tables(padded(geo.neighbours), padded(geo.diagonals), split_words(geo.zobrist))


def split_words(values: np.ndarray) -> np.ndarray:
    """uint64 values as (low, high) uint32 words: JAX keeps 64-bit integers only
    with ``jax_enable_x64``, which would change every array a Keras model makes."""
    values = np.asarray(values, np.uint64)
    low = (values & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    high = (values >> np.uint64(32)).astype(np.uint32)
    return np.stack([low, high], axis=-1)


def join_words(words: np.ndarray) -> np.ndarray:
    """The uint64 values of :func:`split_words`' pairs."""
    words = np.asarray(words, np.uint64)
    return words[..., 0] | (words[..., 1] << np.uint64(32))


def history_length(size: int, move_limit: int) -> int:
    """Room for a game's position hashes: one a move and the start, but no more
    than the harness keeps (``board.history_capacity``), so both stop alike."""
    return min(move_limit + 1, K.history_capacity(size * size))


def board_size(state: GoState) -> int:
    points = state.board.shape[-1]
    size = math.isqrt(points)
    if size * size != points:
        raise ValueError(f"a state of {points} points is not a square board")
    return size


def _tables_of(points: int) -> Tables:
    """The tables of a board by its points (a static shape under ``jit``)."""
    return tables(math.isqrt(points))


# --- one game ---------------------------------------------------------------


def _first_occurrence(ids: jax.Array) -> jax.Array:
    """True where ``ids[..., k]`` differs from every ``ids[..., j]``, j < k: a
    chain beside a point on two sides must be counted (or XORed) once."""
    a, b, c, d = (ids[..., k] for k in range(4))
    return jnp.stack(
        [jnp.ones_like(a, bool), b != a, (c != a) & (c != b), (d != a) & (d != b) & (d != c)],
        axis=-1,
    )


def _xor_over_sides(words: jax.Array) -> jax.Array:
    """XOR of (..., 4, 2) words over the four sides."""
    return words[..., 0, :] ^ words[..., 1, :] ^ words[..., 2, :] ^ words[..., 3, :]


def _count_liberties(board: jax.Array, chain: jax.Array, nbr: jax.Array) -> jax.Array:
    """Distinct liberties by chain id (P + 1): each empty point counts once for
    each distinct chain beside it."""
    points = board.shape[0]
    beside = jnp.append(chain, points)[nbr]
    counted = (board == EMPTY)[:, None] & (beside < points) & _first_occurrence(beside)
    target = jnp.where(counted, beside, points)
    ones = counted.ravel().astype(jnp.int32)
    return jnp.zeros(points + 1, jnp.int32).at[target.ravel()].add(ones)


def _legal_one(s: GoState) -> jax.Array:
    """The harness's ``legal_mask`` for one game: every point judged at once."""
    points = s.board.shape[0]
    t = _tables_of(points)
    nbr = jnp.asarray(t.neighbours)
    me = s.to_play
    opp = 3 - me
    colour = jnp.append(s.board, OFF_BOARD)[nbr]  # (P, 4)
    beside = jnp.append(s.chain, points)[nbr]
    libs = s.liberties[beside]
    into_atari = (colour == opp) & (libs == 1)  # the chains this move would capture
    captures = into_atari.any(axis=1)
    breathes = (colour == EMPTY).any(axis=1) | ((colour == me) & (libs > 1)).any(axis=1)
    nogo = s.rule == K.NOGO
    legal = (s.board == EMPTY) & (breathes | captures)
    legal &= ~(nogo & captures)
    legal &= ~(~nogo & (jnp.arange(points) == s.ko))
    # Positional superko: the hash each move would reach, looked up in the history.
    taken = jnp.where(
        (into_atari & _first_occurrence(beside))[..., None], s.chain_hash[beside], jnp.uint32(0)
    )
    after = s.hash ^ jnp.asarray(t.keys)[:, me] ^ _xor_over_sides(taken)  # (P, 2)
    recorded = jnp.arange(s.history.shape[0]) < s.history_len
    # Both words compared in one elementwise expression, so that XLA fuses it
    # into the reduction instead of writing out a (P, H) array per game.
    same = (
        (after[:, None, 0] == s.history[None, :, 0])
        & (after[:, None, 1] == s.history[None, :, 1])
        & recorded
    )
    legal &= ~((s.rule == K.POSITIONAL_SUPERKO) & same.any(axis=1))
    return jnp.append(legal, ~nogo)


def _finish_one(s: GoState) -> GoState:
    """Liberties, the legal moves and the end of the game, from the stones."""
    t = _tables_of(s.board.shape[0])
    s = s._replace(liberties=_count_liberties(s.board, s.chain, jnp.asarray(t.neighbours)))
    legal = _legal_one(s)
    stuck = (s.rule == K.NOGO) & ~legal.any()
    over = (s.passes >= 2) | (s.moves >= s.move_limit) | stuck
    return s._replace(legal=legal, over=over)


def _step_one(s: GoState, action: jax.Array) -> GoState:
    """The harness's ``play`` for one game, then :func:`_finish_one`."""
    points = s.board.shape[0]
    t = _tables_of(points)
    nbr = jnp.asarray(t.neighbours)
    keys = jnp.asarray(t.keys)
    is_pass = action == points
    p = jnp.minimum(action, points - 1)  # a safe index; a pass changes no stone below
    me = s.to_play
    opp = 3 - me
    none = -2  # an id no point holds (chain ids are 0..P)

    around = nbr[p]
    colour = jnp.append(s.board, OFF_BOARD)[around]
    beside = jnp.append(s.chain, points)[around]
    first = _first_occurrence(beside)
    taken = (colour == opp) & (s.liberties[beside] == 1) & ~is_pass
    joined = (colour == me) & ~is_pass

    removed = (s.chain[:, None] == jnp.where(taken, beside, none)[None, :]).any(axis=1)
    board = jnp.where(removed, EMPTY, s.board)
    chain = jnp.where(removed, points, s.chain)
    merged = (chain[:, None] == jnp.where(joined, beside, none)[None, :]).any(axis=1)
    placed = (jnp.arange(points) == p) & ~is_pass
    chain = jnp.where(merged | placed, p, chain)
    board = jnp.where(placed, me, board).astype(jnp.int8)

    def keys_of(chains_taken):
        words = jnp.where((chains_taken & first)[:, None], s.chain_hash[beside], jnp.uint32(0))
        return _xor_over_sides(words)

    stone_key = jnp.where(is_pass, jnp.uint32(0), keys[p, me])
    chain_hash = s.chain_hash.at[p].set(
        jnp.where(is_pass, s.chain_hash[p], stone_key ^ keys_of(joined))
    )
    position = s.hash ^ stone_key ^ keys_of(taken)

    captured = removed.sum(dtype=jnp.int32)
    # Simple ko: one stone taken by a lone stone left with one liberty.
    lone = ~joined.any()
    one_liberty = (jnp.append(board, OFF_BOARD)[around] == EMPTY).sum() == 1
    ko = jnp.where(
        (captured == 1) & lone & one_liberty & ~is_pass, jnp.argmax(removed).astype(jnp.int32), -1
    )

    moved = s._replace(
        board=board,
        chain=chain,
        chain_hash=chain_hash,
        to_play=opp,
        ko=ko,
        passes=jnp.where(is_pass, s.passes + 1, 0),
        moves=s.moves + 1,
        last_move=action.astype(jnp.int32),
        captures=s.captures.at[me - 1].add(captured),
        hash=position,
        history=s.history.at[s.history_len].set(position, mode="drop"),
        history_len=jnp.minimum(s.history_len + 1, s.history.shape[0]),
        recent=jnp.concatenate([s.recent[1:], board[None]], axis=0),
    )
    moved = _finish_one(moved)
    return jax.tree.map(lambda old, new: jnp.where(s.over, old, new), s, moved)


def _owner_one(board: jax.Array) -> jax.Array:
    """Tromp-Taylor owner by point (+1 Black, -1 White, 0 neither), as
    ``board.area_into``: an empty region belongs to the colour it alone touches."""
    points = board.shape[0]
    nbr = jnp.asarray(_tables_of(points).neighbours)
    empty = board == EMPTY

    def spread(reach):
        return reach | (empty & jnp.append(reach, False)[nbr].any(axis=1))

    def body(carry):
        black, white, _ = carry
        black2, white2 = spread(black), spread(white)
        return black2, white2, (black2 != black).any() | (white2 != white).any()

    black, white, _ = jax.lax.while_loop(
        lambda carry: carry[2], body, (board == BLACK, board == WHITE, jnp.bool_(True))
    )
    return black.astype(jnp.int32) - white.astype(jnp.int32)


def _own_eyes_one(board: jax.Array, me: jax.Array) -> jax.Array:
    """The harness's ``board.is_eye`` on every empty point: all neighbours
    ``me``'s, and not a false eye (opponent diagonals, the edge counting one)."""
    t = _tables_of(board.shape[0])
    padded = jnp.append(board, OFF_BOARD)
    beside = padded[jnp.asarray(t.neighbours)]
    corners = padded[jnp.asarray(t.diagonals)]
    enclosed = ((beside == me) | (beside == OFF_BOARD)).all(axis=1)
    false_marks = (corners == 3 - me).sum(axis=1) + (corners == OFF_BOARD).any(axis=1)
    return (board == EMPTY) & enclosed & (false_marks < 2)


# --- the batch --------------------------------------------------------------


def legal_mask(state: GoState) -> jax.Array:
    """bool (B, P + 1): the side to move's legal moves, pass last.

    Kept in the state (every :func:`step` computes it for the position it
    reaches, as a search expanding that node needs it), so this only reads it.
    """
    return state.legal


def step(state: GoState, action: jax.Array) -> GoState:
    """Play ``action`` (int, (B,); P is pass) in every game; finished games stay as they are.

    As the harness's ``board.play``, the move must be legal (:func:`legal_mask`):
    an illegal one is not refused but gives a position the rules never reach.
    """
    return jax.vmap(_step_one)(state, jnp.asarray(action, jnp.int32))


def own_eyes(state: GoState) -> jax.Array:
    """bool (B, P): the side to move's own true eyes, which the harness's
    searches and playouts never fill (``search.leaves.drop_own_eyes``); the
    search on the device applies its own move limits on top of the rules."""
    return jax.vmap(_own_eyes_one)(state.board, state.to_play)


def ownership(state: GoState) -> jax.Array:
    """int32 (B, P): the Tromp-Taylor owner of each point, +1 Black, -1 White, 0 neither."""
    return jax.vmap(_owner_one)(state.board)


def score(state: GoState) -> jax.Array:
    """float32 (B,): Black's area minus White's minus komi, the harness's ``Game.score``."""
    return ownership(state).sum(axis=1).astype(jnp.float32) - state.komi


def winner(state: GoState) -> jax.Array:
    """int32 (B,): BLACK, WHITE or 0, as the harness's ``Game.result`` would say now.

    Go: by :func:`score` (0 a draw), whether or not the game is over (a game
    stopped at its move limit is scored as it stands). NoGo: the side not to
    move once the game is over (the side to move has no legal move), else 0.
    """
    margin = score(state)
    go = jnp.where(margin > 0, BLACK, jnp.where(margin < 0, WHITE, 0))
    nogo = jnp.where(state.over, 3 - state.to_play, 0)
    return jnp.where(state.rule == K.NOGO, nogo, go).astype(jnp.int32)


def outcome(state: GoState) -> jax.Array:
    """float32 (B,): +1, 0 or -1 for the side to move, what a search backs up
    from a finished game (as the harness's ``leaves.area_value``; in NoGo the
    side to move has lost). Meaningful where ``state.over``."""
    won = winner(state)
    return jnp.where(won == 0, 0.0, jnp.where(won == state.to_play, 1.0, -1.0))


# --- making states ----------------------------------------------------------


def _per_game(value, batch: int, name: str) -> np.ndarray:
    values = np.asarray(value, np.float32)
    if values.ndim == 0:
        values = np.full(batch, values)
    if values.shape != (batch,):
        raise ValueError(f"{name} must be one value or one per game ({batch}), got {values.shape}")
    return values


def _rule_codes(rules: str | Sequence[str], batch: int) -> np.ndarray:
    names = [rules] * batch if isinstance(rules, str) else list(rules)
    if len(names) != batch:
        raise ValueError(f"rules must be one name or one per game ({batch}), got {len(names)}")
    unknown = sorted(set(names) - set(RULE_NAMES))
    if unknown:
        raise ValueError(f"unknown rules {unknown} (expected some of {sorted(RULE_NAMES)})")
    return np.array([RULE_NAMES[n] for n in names], np.int32)


def init(
    batch: int,
    size: int,
    rules: str | Sequence[str] = "superko",
    komi: float | Sequence[float] = DEFAULT_KOMI,
    move_limit: int | None = None,
) -> GoState:
    """``batch`` empty boards, Black to play.

    ``rules`` and ``komi`` are one value or one per game; ``move_limit``
    defaults to the harness's ``position.move_cap`` (twice the points).
    """
    limit = move_cap(size, move_limit)
    points = size * size
    codes = _rule_codes(rules, batch)
    state = GoState(
        board=np.zeros((batch, points), np.int8),
        chain=np.full((batch, points), points, np.int32),
        chain_hash=np.zeros((batch, points + 1, 2), np.uint32),
        liberties=np.zeros((batch, points + 1), np.int32),
        to_play=np.full(batch, BLACK, np.int32),
        ko=np.full(batch, -1, np.int32),
        passes=np.zeros(batch, np.int32),
        moves=np.zeros(batch, np.int32),
        last_move=np.full(batch, -1, np.int32),
        captures=np.zeros((batch, 2), np.int32),
        rule=codes,
        komi=_per_game(komi, batch, "komi"),
        move_limit=np.full(batch, limit, np.int32),
        hash=np.zeros((batch, 2), np.uint32),
        history=np.zeros((batch, history_length(size, limit), 2), np.uint32),
        history_len=np.ones(batch, np.int32),  # the empty board, hash 0
        recent=np.zeros((batch, RECENT, points), np.int8),
        legal=np.zeros((batch, points + 1), bool),
        over=np.zeros(batch, bool),
    )
    return _finish(state)


_finish_batch = jax.jit(jax.vmap(_finish_one))


def _finish(state: GoState) -> GoState:
    return _finish_batch(jax.tree.map(jnp.asarray, state))


def from_games(games: Sequence[Game], move_limit: int | None = None) -> GoState:
    """A batch holding the harness games' current positions, setups, kos,
    superko histories and last boards included (e.g. a search's roots).

    Chains are the harness's own groups (their head stones as ids). All games
    share one board size; ``move_limit`` is counted in moves since the start.
    """
    if not games:
        raise ValueError("from_games needs at least one game")
    size = games[0].size
    if any(g.size != size for g in games):
        raise ValueError("all games of a batch must have one board size")
    points = size * size
    limit = move_cap(size, move_limit)
    room = history_length(size, limit)
    keys = tables(size).keys
    rows = []
    for game in games:
        b = game.boards
        meta = b.meta[0]
        kept = int(meta[K.HIST_LEN])
        if kept > room:
            raise ValueError(f"a game of {kept} positions exceeds the history room ({room}) "
                             f"of a {limit}-move limit")
        stones = b.stones[0]
        chain = np.where(b.head[0] < 0, points, b.head[0]).astype(np.int32)
        chain_hash = np.zeros((points + 1, 2), np.uint32)
        for p in np.flatnonzero(stones):
            chain_hash[chain[p]] ^= keys[p, stones[p]]
        history = np.zeros((room, 2), np.uint32)
        history[:kept] = split_words(b.history[0, :kept])
        rows.append(GoState(
            board=stones.astype(np.int8),
            chain=chain,
            chain_hash=chain_hash,
            liberties=np.zeros(points + 1, np.int32),
            to_play=np.int32(meta[K.TO_PLAY]),
            ko=np.int32(meta[K.KO]),
            passes=np.int32(meta[K.PASSES]),
            moves=np.int32(meta[K.MOVES]),
            last_move=np.int32(meta[K.LAST]),
            captures=np.array([meta[K.CAPS_BLACK], meta[K.CAPS_WHITE]], np.int32),
            rule=np.int32(meta[K.RULE]),
            komi=np.float32(game.komi),
            move_limit=np.int32(limit),
            hash=split_words(b.hash[0]),
            history=history,
            history_len=np.int32(kept),
            recent=history_window(game.history, RECENT, points),
            legal=np.zeros(points + 1, bool),
            over=np.bool_(False),
        ))
    return _finish(jax.tree.map(lambda *fields: np.stack(fields), *rows))


__all__ = [
    "RECENT",
    "GoState",
    "from_games",
    "init",
    "legal_mask",
    "outcome",
    "own_eyes",
    "ownership",
    "score",
    "step",
    "winner",
]
