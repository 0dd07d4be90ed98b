"""AlphaGo Zero's evaluator: the candidate network plays the best one, many games at once.

Both sides search with their own :class:`BatchedSearch` (one slot per game),
so every network call carries a batch from all games where that side is to
move. The first few moves of each game are drawn at temperature 1 so that the
games differ (searches are otherwise deterministic); colours alternate.

The decision is AlphaGo Zero's (a win rate of at least ``threshold``) or,
with ``[gating] sprt = true``, Leela Zero's: the match stops as soon as an
SPRT (:mod:`harness.arena.sprt`) accepts H1 (promote) or H0 (keep the best),
and a match that reaches ``games`` undecided keeps the best network. Games
still running when the SPRT decides are abandoned, not counted, so the
decision is the one taken at the crossing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from harness.arena.sprt import H1, SPRT
from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game, move_cap
from harness.search import BatchedSearch, MCTSConfig, select_move
from harness.search.evaluator import reseed_symmetries
from harness.train.sources import derive_seed

GATING_OPENING_MOVES = 4  # moves drawn at temperature 1 before play turns greedy
# Salts of the two evaluators' symmetry streams, apart from each other and
# from the match's own generator, so the two sides never draw the same symmetries.
CANDIDATE_SYMMETRY_STREAM = 2
BEST_SYMMETRY_STREAM = 3


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
    draws: int = 0

    @property
    def win_rate(self) -> float:
        return win_rate(self.wins, self.games)

    @property
    def record(self) -> tuple[int, int, int]:
        """The candidate's wins, draws and losses."""
        won = round(self.wins - self.draws / 2)
        return won, self.draws, self.games - won - self.draws


def gate_sprt(gating) -> SPRT | None:
    """The SPRT of a ``GatingConfig`` with ``sprt = true``, else None."""
    return SPRT(gating.elo0, gating.elo1, gating.alpha, gating.beta) if gating.sprt else None


def passes(result: MatchResult, gating) -> bool:
    """Whether the candidate replaces the best network (``gating``: a GatingConfig)."""
    test = gate_sprt(gating)
    if test is None:
        return promote(result.wins, result.games, gating.threshold)
    return test.decide(*result.record) == H1


def play_match(
    candidate,
    best,
    games: int,
    *,
    size: int,
    komi: float,
    rules: str,
    playouts: int,
    parallel: int,
    max_moves: int | None = None,
    seed: int = 0,
    sprt: SPRT | None = None,
    on_game: Callable[[int, Game, int], None] | None = None,
) -> MatchResult:
    """Play ``games`` games between two evaluators; the candidate is Black in even games.

    With ``sprt`` the match ends at the first finished game after which the
    test decides; the games still running then are dropped. ``on_game(number,
    game, colour)`` sees each counted game as it ends: its number in the order
    games start and the candidate's colour.
    """
    config = MCTSConfig(playouts=playouts, add_noise=False, reuse_tree=True)
    slots = max(1, min(parallel, games))
    rng = np.random.default_rng(seed)
    reseed_symmetries(candidate, derive_seed(seed, CANDIDATE_SYMMETRY_STREAM))
    reseed_symmetries(best, derive_seed(seed, BEST_SYMMETRY_STREAM))
    searches = {
        "candidate": BatchedSearch(candidate, config, games=slots, seed=seed),
        "best": BatchedSearch(best, config, games=slots, seed=seed + 1),
    }
    limit = move_cap(size, max_moves)
    wins, moves, started, draws, finished = 0.0, 0, 0, 0, 0
    running: dict[int, tuple[Game, int, int]] = {}  # slot -> (game, candidate's colour, number)

    def side(game: Game, colour: int) -> str:
        return "candidate" if game.to_play == colour else "best"

    def begin(slot: int) -> None:
        nonlocal started
        colour = BLACK if started % 2 == 0 else WHITE
        started += 1
        game = Game(size, komi, rules)
        running[slot] = (game, colour, started - 1)
        for search in searches.values():
            search.reset(slot)
        searches[side(game, colour)].start(slot, game)

    for slot in range(min(slots, games)):
        begin(slot)
    def decided() -> bool:
        won = round(wins - draws / 2)
        return sprt is not None and sprt.decide(won, draws, finished - won - draws) is not None

    while running:
        for search in searches.values():
            for slot, result in search.step():
                game, colour, number = running[slot]
                temperature = 1.0 if len(game.moves) < GATING_OPENING_MOVES else 0.0
                game.play(select_move(result, temperature, rng))
                if game.is_over or len(game.moves) >= limit:
                    winner = game.result().winner
                    drawn = winner not in (BLACK, WHITE)
                    wins += 1.0 if winner == colour else (0.5 if drawn else 0.0)
                    draws += drawn
                    finished += 1
                    moves += len(game.moves)
                    del running[slot]
                    if on_game is not None:
                        on_game(number, game, colour)
                    if decided():
                        return MatchResult(finished, wins, moves, draws)
                    if started < games:
                        begin(slot)
                else:
                    searches[side(game, colour)].start(slot, game)
    return MatchResult(finished, wins, moves, draws)
