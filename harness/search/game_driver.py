"""Games driven by :class:`BatchedSearch`, every slot always busy.

Each slot plays its own game. When a slot's search ends, its move is chosen
(temperature for the opening, then greedy), played, the tree is advanced, and
the slot's next search starts at once, so the network batch stays full while
other slots are still mid-search. Finished games are replaced by new ones
until the requested number is reached. One search plays both colours
(self-play: the RL loop, ``harness bench selfplay``); two searches play a
match, each on its own moves with its own tree (RL gating,
:func:`harness.rl.gating.play_match`). Records carry everything training
needs. Games between arbitrary players (a GTP engine, UCT, a policy) are the
referee's (:mod:`harness.arena.referee`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from harness.game.geometry import BLACK, WHITE
from harness.game.position import DEFAULT_KOMI, Game, move_cap
from harness.game.result import GameResult
from harness.search.batched import BatchedSearch
from harness.search.moves import (
    resign_enabled,
    select_move,
    should_resign,
    temperature_for,
)


@dataclass
class SelfPlayGame:
    """One finished self-play game and its training targets."""

    game: Game
    result: GameResult
    # Per move, in order: policy target of full searches (visit distribution,
    # or the Gumbel root's improved policy; None for the fast ones of
    # playout-cap randomisation, which are not training targets),
    # root value for the side to move, and whether the search was full.
    policies: list[np.ndarray | None] = field(default_factory=list)
    root_values: list[float] = field(default_factory=list)
    full: list[bool] = field(default_factory=list)
    resign_enabled: bool = False
    # In a game that could not resign: the first colour whose search wanted
    # to (0 if none), to count false resignations against the real result.
    would_resign: int = 0
    truncated: bool = False  # stopped at max_moves and scored as it stood
    number: int = 0  # the game's place in the order games started, from 0
    first_colour: int = BLACK  # the colour the first of a match's two searches plays


    @property
    def length(self) -> int:
        return len(self.game.moves)


def play_games(
    search: BatchedSearch | Sequence[BatchedSearch],
    count: int,
    *,
    komi: float = DEFAULT_KOMI,
    rules: str = "superko",
    max_moves: int | None = None,
    seed: int | None = None,
    on_record: Callable[[SelfPlayGame], None] | None = None,
    on_move: Callable[[int, SelfPlayGame], None] | None = None,
    stop_after: float | None = None,
    opening: Callable[[np.random.Generator], Sequence[int]] | None = None,
    until: Callable[[], bool] | None = None,
) -> list[SelfPlayGame]:
    """Play ``count`` games, as many at a time as the searches have slots.

    ``search`` is one search that plays both colours, or two, ``(first,
    second)``, that play a match: ``first`` is Black in the even games (in
    the order they start) and White in the odd ones, and each searches only
    on its own moves (``record.first_colour`` says which colour it had).
    Both take their move choice and resignation from the first's config.

    ``max_moves`` (default :func:`~harness.game.position.move_cap`) stops runaway games;
    they are scored as they stand. ``on_record`` sees each game as it ends
    (write it to disk there so a killed run loses no finished game);
    ``on_move`` sees (slot, record) after every move (progress bars).
    ``stop_after`` (seconds) abandons the games still running at that time.
    ``opening(rng)`` gives moves each game starts with (played unsearched:
    history rows without a training target). ``until()`` is asked after each
    finished game; once it is true the games still running are abandoned and
    the finished ones returned.
    """
    searches = tuple(search) if isinstance(search, list | tuple) else (search,)
    config = searches[0].config
    size = searches[0].size
    limit = move_cap(size, max_moves)
    rng = np.random.default_rng(seed)
    records: list[SelfPlayGame] = []
    slot_records: dict[int, SelfPlayGame] = {}
    started = 0

    def to_move(record: SelfPlayGame) -> BatchedSearch:
        first = len(searches) == 1 or record.game.to_play == record.first_colour
        return searches[0] if first else searches[1]

    def begin(slot: int) -> None:
        nonlocal started
        game = Game(size, komi, rules)
        record = SelfPlayGame(game, GameResult(0, "unknown"),
                              resign_enabled=resign_enabled(rng, config), number=started,
                              first_colour=BLACK if started % 2 == 0 else WHITE)
        started += 1
        for move in opening(rng) if opening is not None else ():
            game.play(move)
            record.policies.append(None)
            record.root_values.append(0.0)
            record.full.append(False)
        slot_records[slot] = record
        for each in searches:
            each.reset(slot)
        to_move(record).start(slot, game)

    def end(slot: int, record: SelfPlayGame) -> bool:
        """Record a finished game and refill its slot; True when ``until`` says stop."""
        record.result = record.game.result()
        records.append(record)
        del slot_records[slot]
        if on_record is not None:
            on_record(record)
        if until is not None and until():
            return True
        if started < count:
            begin(slot)
        return False

    def abandon() -> list[SelfPlayGame]:
        for each in searches:
            each.abandon()
        return records

    for slot in range(min(count, *(each.games for each in searches))):
        begin(slot)
    deadline = None if stop_after is None else time.perf_counter() + stop_after
    while slot_records:
        if deadline is not None and time.perf_counter() > deadline:
            return abandon()
        for mover in searches:
            for slot, result in mover.step():
                record = slot_records[slot]
                game = record.game
                move_number = len(game.moves)
                if should_resign(result, config, True, move_number):
                    if record.resign_enabled:
                        game.resign(game.to_play)
                        if end(slot, record):
                            return abandon()
                        continue
                    if not record.would_resign:
                        record.would_resign = game.to_play
                move = select_move(result, temperature_for(move_number, config), rng)
                record.policies.append(result.target() if result.full else None)
                record.root_values.append(result.root_value)
                record.full.append(result.full)
                game.play(move)
                mover.advance(slot, move)
                if on_move is not None:
                    on_move(slot, record)
                if game.is_over or len(game.moves) >= limit:
                    record.truncated = not game.is_over
                    if end(slot, record):
                        return abandon()
                else:
                    to_move(record).start(slot, game)
    return records
