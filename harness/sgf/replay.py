"""Replay a record on the rules kernel: the check that its moves are Go.

Decisions (records are what they are; the replay says what it did with them):

- The same colour twice in a row is replayed as written (``Game.play`` takes
  the colour): servers drop the opponent's pass, old records place handicap
  stones as moves. ``strict_alternation=True`` rejects such records instead,
  for consumers that need strict turns.
- Passes are ordinary moves. Two passes in a row end a game in the kernel, but
  a record may go on (play resumed after a dispute): the replay resumes it
  rather than calling the later moves illegal.
- Setup stones are placed before the first move; mid-game setup events at
  their place. A setup that leaves a group without a liberty is rejected: no
  move sequence can reach such a position, so features from it are garbage.
- A resignation in the result is applied at the end, so ``game.result()``
  agrees with the record.

Two ways in: :func:`replay` gives a :class:`~harness.game.position.Game`
(everything the object API offers); :func:`replay_positions` runs the same
kernels over the whole move list in one compiled call and returns the stones
after each move, which is what dataset building needs (about 30 times faster
than a Python call per move).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
from numba import njit

from harness.game import board as K
from harness.game.geometry import BLACK, EMPTY, WHITE, geometry, point_to_gtp
from harness.game.position import RULE_NAMES, Game, IllegalMove
from harness.sgf.record import GameRecord, SetupEvent


class ReplayError(ValueError):
    """A record that does not replay; the message is the reject reason."""


def replay(record: GameRecord, rules: str = "superko", *, strict_alternation: bool = False) -> Game:
    """The game of ``record`` after all its moves; raises :class:`ReplayError`."""
    if record.reject is not None:
        raise ReplayError(record.reject)
    game = Game(record.size, record.komi, rules)
    if record.setup_black or record.setup_white:
        _setup(game, SetupEvent(0, record.setup_black, record.setup_white, record.setup_empty))
    events = record.setup_events
    e = 0
    previous = 0
    for i, (color, move) in enumerate(record.moves):
        while e < len(events) and events[e].before_move <= i:
            _setup(game, events[e])
            e += 1
        if strict_alternation and color == previous:
            side = "Black" if color == BLACK else "White"
            raise ReplayError(f"move {i + 1} {point_to_gtp(move, game.size)}: {side} moves twice")
        previous = color
        if game.passes >= 2 and rules != "nogo":
            game.boards.meta[0, K.PASSES] = 0  # play resumed after two passes
        try:
            game.play(move, color)
        except IllegalMove as exc:
            raise ReplayError(str(exc)) from None
    while e < len(events):
        _setup(game, events[e])
        e += 1
    if record.result.kind == "resign" and record.result.winner:
        game.resign(3 - record.result.winner)
    return game


def _setup(game: Game, event: SetupEvent) -> None:
    game.setup(event.black, event.white, event.empty)
    _check_setup(game.boards, game.size, event.before_move)


def _check_setup(boards: K.Boards, size: int, before_move: int) -> None:
    stones = boards.stones[0]
    heads = np.flatnonzero((stones != EMPTY) & (boards.head[0] == np.arange(stones.size)))
    dead = heads[boards.libs[0, heads] == 0]
    if dead.size:
        where = point_to_gtp(int(dead[0]), size)
        raise ReplayError(
            f"setup before move {before_move + 1} leaves a group without liberties at {where}"
        )


@njit(cache=True)
def _play_moves(b, colors, points, start, stop, nbr, zob, out):
    """Play moves ``start:stop`` on game 0, writing the stones after move i to out[i + 1].

    Returns -1, or the index of the first illegal move with its code in a tuple.
    """
    nogo = b.meta[0, K.RULE] == K.NOGO
    for i in range(start, stop):
        if not nogo and b.meta[0, K.PASSES] >= 2:
            b.meta[0, K.PASSES] = 0  # play resumed after two passes
        color = colors[i]
        if color != b.meta[0, K.TO_PLAY]:
            # As Game.play: the other side moving is an implied pass, which
            # lifts a ko ban.
            b.meta[0, K.TO_PLAY] = color
            b.meta[0, K.KO] = -1
        code = K.check_move(b, 0, points[i], color, nbr, zob)
        if code != K.LEGAL:
            return i, code
        K.play(b, 0, points[i], nbr, zob)
        out[i + 1, :] = b.stones[0, :]
    return -1, 0


def _play_span(boards, geo, colors, points, start, stop, out) -> int:
    if stop > start:
        bad, code = _play_moves(
            boards, colors, points, start, stop, geo.neighbours, geo.zobrist, out
        )
        if bad >= 0:
            where = point_to_gtp(int(points[bad]), geo.size)
            raise ReplayError(f"illegal move {bad + 1} {where} ({K.ILLEGAL_REASONS[code]})")
    return max(start, stop)


def replay_positions(
    record: GameRecord, rules: str = "superko", *, strict_alternation: bool = False
) -> np.ndarray:
    """Stones (int8, ``(n_moves + 1, size*size)``) before each move and after the last.

    Row 0 is the position after the initial setup; row i + 1 the position
    after move i. Mid-game setup events are applied before the move they
    precede, so row i is always the position move i was played in.
    Raises :class:`ReplayError` exactly when :func:`replay` does.
    """
    if record.reject is not None:
        raise ReplayError(record.reject)
    size = record.size
    geo = geometry(size)
    boards = K.new_boards(1, size, RULE_NAMES[rules])
    n = len(record.moves)
    colors = np.fromiter((c for c, _ in record.moves), np.int32, n)
    points = np.fromiter((p for _, p in record.moves), np.int32, n)
    if strict_alternation and n > 1:
        twice = np.flatnonzero(colors[1:] == colors[:-1])
        if twice.size:
            i = int(twice[0]) + 1
            side = "Black" if colors[i] == BLACK else "White"
            raise ReplayError(
                f"move {i + 1} {point_to_gtp(int(points[i]), size)}: {side} moves twice"
            )
    out = np.empty((n + 1, size * size), np.int8)
    out[0] = boards.stones[0]
    events = list(record.setup_events)
    if record.setup_black or record.setup_white:
        events.insert(0, SetupEvent(0, record.setup_black, record.setup_white, record.setup_empty))
    start = 0
    for event in events:
        start = _play_span(boards, geo, colors, points, start, min(event.before_move, n), out)
        dead = _apply_setup(boards, event.black, event.white, event.empty, geo.neighbours,
                            geo.zobrist)
        if dead >= 0:
            raise ReplayError(f"setup before move {event.before_move + 1} leaves a group "
                              f"without liberties at {point_to_gtp(dead, size)}")
        out[start] = boards.stones[0]  # the position the next move is played in
    _play_span(boards, geo, colors, points, start, n, out)
    return out


@njit(cache=True)
def _apply_setup(b, black, white, empty, nbr, zob):
    """Place a setup event's stones on game 0 and rebuild its groups: the
    first point of a group left without liberties, or -1. One compiled call
    per event: a record may set up the whole board after every move."""
    for p in black:
        b.stones[0, p] = BLACK
    for p in white:
        b.stones[0, p] = WHITE
    for p in empty:
        b.stones[0, p] = EMPTY
    K.rebuild(b, 0, nbr, zob)
    for p in range(b.stones.shape[1]):
        if b.stones[0, p] != EMPTY and b.head[0, p] == p and b.libs[0, p] == 0:
            return p
    return -1


def replay_records(
    records: Iterable[GameRecord], rules: str = "superko", *, strict_alternation: bool = False
) -> Iterator[tuple[GameRecord, Game | None]]:
    """Each record with its replayed game, or with ``None`` and ``reject`` set."""
    for record in records:
        if record.reject is not None:
            yield record, None
            continue
        try:
            yield record, replay(record, rules, strict_alternation=strict_alternation)
        except ReplayError as exc:
            record.reject = str(exc)
            yield record, None
