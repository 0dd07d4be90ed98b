"""AlphaGo Zero's evaluator: the candidate network plays the best one, many games at once.

Both sides search with their own :class:`BatchedSearch` (one slot per game),
so every network call carries a batch from all games where that side is to
move; the games are the self-play driver's, given a search per side. The
first few moves of each game are drawn at temperature 1 so that the games
differ (searches are otherwise deterministic); colours alternate.

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

from harness.arena.sprt import H1, SPRT
from harness.game.geometry import BLACK, WHITE
from harness.game.position import Game
from harness.search import BatchedSearch, MCTSConfig
from harness.search.evaluator import reseed_symmetries
from harness.search.game_driver import SelfPlayGame, play_games
from harness.train import derive_seed

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

    The games are the self-play driver's (:func:`harness.search.game_driver.play_games`)
    with a search per side. With ``sprt`` the match ends at the first finished
    game after which the test decides; the games still running then are
    dropped. ``on_game(number, game, colour)`` sees each counted game as it
    ends: its number in the order games start and the candidate's colour.
    """
    config = MCTSConfig(playouts=playouts, add_noise=False, reuse_tree=True,
                        temperature_moves=GATING_OPENING_MOVES)
    slots = max(1, min(parallel, games))
    reseed_symmetries(candidate, derive_seed(seed, CANDIDATE_SYMMETRY_STREAM))
    reseed_symmetries(best, derive_seed(seed, BEST_SYMMETRY_STREAM))
    searches = (BatchedSearch(candidate, config, games=slots, seed=seed),
                BatchedSearch(best, config, games=slots, seed=seed + 1))
    tally = MatchResult(0, 0.0, 0, 0)

    def count(record: SelfPlayGame) -> None:
        colour, winner = record.first_colour, record.result.winner  # the candidate's colour
        drawn = winner not in (BLACK, WHITE)
        tally.wins += 1.0 if winner == colour else (0.5 if drawn else 0.0)
        tally.draws += drawn
        tally.games += 1
        tally.moves += record.length
        if on_game is not None:
            on_game(record.number, record.game, colour)

    def decided() -> bool:
        won = round(tally.wins - tally.draws / 2)
        return sprt.decide(won, tally.draws, tally.games - won - tally.draws) is not None

    play_games(searches, games, komi=komi, rules=rules, max_moves=max_moves, seed=seed,
               on_record=count, until=None if sprt is None else decided)
    return tally
