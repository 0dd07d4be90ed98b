"""AlphaGo Zero's evaluator: the candidate network plays the best one, many games at once.

Both sides search with their own :class:`BatchedSearch` (one slot per game),
so every network call carries a batch from all games where that side is to
move. The first few moves of each game are drawn at temperature 1 so that the
games differ (searches are otherwise deterministic); colours alternate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.search import BatchedSearch, MCTSConfig, select_move

OPENING_MOVES = 4  # moves drawn at temperature 1 before play turns greedy


def win_rate(wins: float, games: int) -> float:
    """Points per game; draws count half (they are passed in as 0.5 wins)."""
    return wins / games if games else 0.0


def promote(wins: float, games: int, threshold: float) -> bool:
    """AlphaGo Zero's rule: the candidate replaces the best network when it
    scores at least ``threshold`` of the points (0.55 in the paper)."""
    return games > 0 and win_rate(wins, games) >= threshold


@dataclass
class MatchResult:
    games: int
    wins: float  # the candidate's points: 1 a win, 0.5 a draw
    moves: int

    @property
    def win_rate(self) -> float:
        return win_rate(self.wins, self.games)


def play_match(
    candidate,
    best,
    games: int,
    *,
    size: int,
    komi: float,
    rules: str,
    playouts: int,
    parallel: int = 8,
    max_moves: int | None = None,
    seed: int = 0,
) -> MatchResult:
    """Play ``games`` games between two evaluators; the candidate is Black in even games."""
    config = MCTSConfig(playouts=playouts, add_noise=False, reuse_tree=True)
    slots = max(1, min(parallel, games))
    rng = np.random.default_rng(seed)
    searches = {
        "candidate": BatchedSearch(candidate, config, games=slots, seed=seed),
        "best": BatchedSearch(best, config, games=slots, seed=seed + 1),
    }
    limit = max_moves if max_moves is not None else 2 * size * size
    wins, moves, started = 0.0, 0, 0
    running: dict[int, tuple[Game, int]] = {}  # slot -> (game, candidate's colour)

    def side(game: Game, colour: int) -> str:
        return "candidate" if game.to_play == colour else "best"

    def begin(slot: int) -> None:
        nonlocal started
        colour = BLACK if started % 2 == 0 else WHITE
        started += 1
        game = Game(size, komi, rules)
        running[slot] = (game, colour)
        for search in searches.values():
            search.reset(slot)
        searches[side(game, colour)].start(slot, game)

    for slot in range(min(slots, games)):
        begin(slot)
    while running:
        for search in searches.values():
            for slot, result in search.step():
                game, colour = running[slot]
                temperature = 1.0 if len(game.moves) < OPENING_MOVES else 0.0
                game.play(select_move(result, temperature, rng))
                if game.is_over or len(game.moves) >= limit:
                    winner = game.result().winner
                    wins += 1.0 if winner == colour else (0.5 if winner not in (BLACK, WHITE)
                                                          else 0.0)
                    moves += len(game.moves)
                    del running[slot]
                    if started < games:
                        begin(slot)
                else:
                    searches[side(game, colour)].start(slot, game)
    return MatchResult(games, wins, moves)
