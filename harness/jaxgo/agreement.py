"""Random games played by the numba rules and the JAX rules side by side.

The numba rules are the reference: moves are drawn from *their* legal mask,
so a move the JAX side would wrongly refuse is still played, and a wrong JAX
mask shows up as a difference instead of steering the games away from it.
After every move the two states are compared, and at the end the scores.
A game whose state differs (board, hash, captures, side to move, ko point,
end) is counted once and not followed further: its later differences would
be echoes of the first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import jax
import numpy as np
from numba import njit

from harness.features.encoders import get_encoder
from harness.game import board as K
from harness.game.geometry import BLACK, EMPTY, WHITE, geometry
from harness.game.position import DEFAULT_KOMI, RULE_NAMES, move_cap
from harness.jaxgo import rules as R
from harness.jaxgo.encode import agz17

# What may differ, in the order the table lists it. The state kinds end the
# comparison of their game; "legal moves" and "agz17 planes" do not.
STATE_KINDS = ("board", "hash", "captures", "to play", "ko point", "game over")
KINDS = ("legal moves", "own eyes", *STATE_KINDS, "score", "winner", "agz17 planes")


@dataclass
class Agreement:
    """Counts of one comparison run; ``examples`` describes the first differences."""

    size: int
    rules: str
    games: int = 0
    moves: int = 0  # moves played and compared
    masks: int = 0  # legal masks compared (one a position, the start included)
    encoded: int = 0  # positions whose agz17 planes were compared
    differences: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    diverged: int = 0  # games whose comparison stopped at a state difference
    refusals: np.ndarray = field(default_factory=lambda: np.zeros(len(K.ILLEGAL_REASONS), np.int64))
    seconds: float = 0.0
    examples: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.differences.values())

    def note(self, kind: str, which: np.ndarray, move: int, first_game: int) -> None:
        """Count ``kind`` for the games ``which`` marks (at ``move``), keeping a few examples."""
        hits = np.flatnonzero(which)
        self.differences[kind] += len(hits)
        for g in hits[: max(0, 5 - len(self.examples))]:
            self.examples.append(f"game {first_game + g}, move {move}: {kind}")

    def rows(self) -> list[tuple]:
        board = f"{self.size}x{self.size}"
        counts = [("games", self.games), ("moves compared", self.moves),
                  ("legal masks compared", self.masks), ("agz17 positions compared", self.encoded)]
        counts += [(f"harness refusals: {K.ILLEGAL_REASONS[code]}", int(self.refusals[code]))
                   for code in REFUSALS]
        counts += [(f"differences: {kind}", self.differences[kind]) for kind in KINDS]
        counts += [("games diverged", self.diverged), ("seconds", round(self.seconds, 1))]
        return [(board, self.rules, what, value) for what, value in counts]


HEADER = ("board", "rules", "measure", "value")

# Compiled once a process (and once a batch shape), not once a batch.
_step = jax.jit(R.step)
_planes = jax.jit(agz17)
_outcome = jax.jit(lambda state: (R.score(state), R.winner(state)))
_eyes = jax.jit(R.own_eyes)


# The harness's reasons for refusing a move on an empty point (or a pass),
# tallied to show which rules the compared games exercised.
REFUSALS = (K.KO_BAN, K.SUICIDE, K.SUPERKO, K.NOGO_CAPTURE, K.NO_PASS)


@njit(cache=True)
def _harness_masks(b, active, nbr, zob, out, seen, refusals):
    """The legal masks of the active games, and a tally of why moves were refused."""
    points = b.stones.shape[1]
    for g in range(active.shape[0]):
        if not active[g]:
            continue
        K.legal_into(b, g, nbr, zob, out[g], seen)
        color = b.meta[g, K.TO_PLAY]
        for p in range(points + 1):
            if not out[g, p] and (p == points or b.stones[g, p] == EMPTY):
                refusals[K.check_move(b, g, p, color, nbr, zob)] += 1


@njit(cache=True)
def _harness_eyes(b, active, nbr, diag, out):
    for g in range(active.shape[0]):
        if active[g]:
            color = b.meta[g, K.TO_PLAY]
            for p in range(b.stones.shape[1]):
                out[g, p] = b.stones[g, p] == EMPTY and K.is_eye(b, g, p, color, nbr, diag)


@njit(cache=True)
def _harness_play(b, moves, active, nbr, zob):
    for g in range(active.shape[0]):
        if active[g]:
            K.play(b, g, moves[g], nbr, zob)


@njit(cache=True)
def _harness_scores(b, nbr, komi, out):
    owner = np.empty(b.stones.shape[1], np.int32)
    for g in range(out.shape[0]):
        out[g] = K.area_score(b, g, nbr, owner) - komi


def _state_pairs(got: R.GoState, boards: K.Boards) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(JAX, numba) arrays of every state kind but the end, game by game."""
    meta = boards.meta
    return {
        "board": (got.board, boards.stones),
        "hash": (R.join_words(got.hash), boards.hash),
        "captures": (got.captures, meta[:, [K.CAPS_BLACK, K.CAPS_WHITE]]),
        "to play": (got.to_play, meta[:, K.TO_PLAY]),
        "ko point": (got.ko, meta[:, K.KO]),
    }


def _harness_outcome(boards: K.Boards, nbr: np.ndarray, komi: float):
    """Each game's area score with komi and winner by the harness's rules
    (``Game.score`` and ``Game.result``; NoGo: the side not to move)."""
    scores = np.zeros(len(boards.meta))
    _harness_scores(boards, nbr, komi, scores)
    by_score = np.where(scores > 0, BLACK, np.where(scores < 0, WHITE, 0))
    nogo = boards.meta[:, K.RULE] == K.NOGO
    return scores, np.where(nogo, 3 - boards.meta[:, K.TO_PLAY], by_score)


def random_moves(legal: np.ndarray, rng: np.random.Generator, pass_prob: float) -> np.ndarray:
    """One move a game, uniform over the legal points; pass (when legal) with
    probability ``pass_prob`` or when no point is legal."""
    points = legal.shape[1] - 1
    draws = np.where(legal[:, :points], rng.random(legal[:, :points].shape), -1.0)
    moves = draws.argmax(axis=1)
    passing = legal[:, points] & ((rng.random(len(legal)) < pass_prob) | (draws.max(axis=1) < 0))
    return np.where(passing, points, moves).astype(np.int32)


def compare_games(
    count: int,
    size: int,
    rules: str,
    seed: int = 0,
    pass_prob: float = 0.05,
    komi: float = DEFAULT_KOMI,
    encode_every: int = 7,
    encode_games: int = 256,
    move_limit: int | None = None,
    result: Agreement | None = None,
    first_game: int = 0,
) -> Agreement:
    """Play ``count`` random games in one batch on both sides; add the counts to ``result``.

    Every ``encode_every`` moves the agz17 planes of up to ``encode_games``
    games are compared too (the harness encodes its own boards' history).
    Games stop at ``move_limit`` (default ``position.move_cap``); one past
    ``board.history_capacity`` checks that both sides stop recording alike.
    """
    if rules not in RULE_NAMES:
        raise ValueError(f"unknown rules {rules!r} (expected one of {sorted(RULE_NAMES)})")
    result = result or Agreement(size, rules)
    start = time.perf_counter()
    geo = geometry(size)
    points = size * size
    limit = move_cap(size, move_limit)
    rng = np.random.default_rng(seed)
    encoder = get_encoder("agz17")
    boards = K.new_boards(count, size, RULE_NAMES[rules])
    work = K.new_work(points)
    state = R.init(count, size, rules, komi, limit)
    recent = np.zeros((count, encoder.history, points), np.int8)  # the harness's boards
    legal = np.zeros((count, points + 1), bool)
    eyes = np.zeros((count, points), bool)
    over = np.zeros(count, bool)  # by the harness
    diverged = np.zeros(count, bool)

    def diff(kind, which, move):
        result.note(kind, which, move, first_game)
        if kind in STATE_KINDS:
            diverged[which] = True

    move = 0
    while True:
        meta = boards.meta
        over |= (meta[:, K.PASSES] >= 2) | (meta[:, K.MOVES] >= limit)
        _harness_masks(boards, ~over & ~diverged, geo.neighbours, geo.zobrist, legal, work.superko,
                       result.refusals)
        over |= (meta[:, K.RULE] == K.NOGO) & ~legal.any(axis=1)
        got = jax.device_get(state)
        diff("game over", (got.over != over) & ~diverged, move)
        live = ~over & ~diverged
        result.masks += int(live.sum())
        diff("legal moves", (got.legal != legal).any(axis=1) & live, move)
        _harness_eyes(boards, live, geo.neighbours, geo.diagonals, eyes)
        diff("own eyes", (np.asarray(_eyes(state)) != eyes).any(axis=1) & live, move)
        if not live.any():
            break
        if move % encode_every == 0:
            sample = np.flatnonzero(live)[:encode_games]
            mine = encoder.encode(recent[sample], meta[sample, K.TO_PLAY], size)
            theirs = np.asarray(_planes(state))[sample]
            wrong = np.zeros(count, bool)
            wrong[sample] = (mine != theirs).reshape(len(sample), -1).any(axis=1)
            diff("agz17 planes", wrong, move)
            result.encoded += len(sample)
        actions = random_moves(legal, rng, pass_prob)
        _harness_play(boards, actions, live, geo.neighbours, geo.zobrist)
        state = _step(state, actions)
        move += 1
        result.moves += int(live.sum())
        recent[live] = np.concatenate([recent[live, 1:], boards.stones[live, None]], axis=1)
        for kind, (theirs, mine) in _state_pairs(jax.device_get(state), boards).items():
            differs = (theirs != mine).reshape(count, -1).any(axis=1) & live & ~diverged
            diff(kind, differs, move)

    scores, winners = _harness_outcome(boards, geo.neighbours, komi)
    got_scores, got_winners = jax.device_get(_outcome(state))
    nogo = boards.meta[:, K.RULE] == K.NOGO
    diff("score", (got_scores != scores.astype(np.float32)) & ~nogo & ~diverged, move)
    diff("winner", (got_winners != winners) & ~diverged, move)
    result.games += count
    result.diverged = int(result.diverged + diverged.sum())
    result.seconds += time.perf_counter() - start
    return result


def agreement(
    games: int,
    size: int,
    rules: str,
    batch: int = 1000,
    seed: int = 0,
    pass_prob: float = 0.05,
    komi: float = DEFAULT_KOMI,
    move_limit: int | None = None,
) -> Agreement:
    """:func:`compare_games` over ``games`` games in batches of ``batch`` (seeds
    ``seed``, ``seed + 1``, ...; a batch's JAX functions compile once)."""
    result = Agreement(size, rules)
    done = 0
    while done < games:
        count = min(batch, games - done)
        compare_games(count, size, rules, seed + done // batch, pass_prob, komi,
                      move_limit=move_limit, result=result, first_game=done)
        done += count
    return result
