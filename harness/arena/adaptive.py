"""Tournaments that stop when they know: which pairs play the next round, and why to stop.

A tournament plays in rounds. Round 0 is the round robin of
``games_per_pair`` games per pair. After each round the decision below looks
at every rated game of the rounds so far and names the pairs that play
``round_games`` more games (colours alternating, so an even number gives
each player both colours equally), or says why the tournament is over:

- ``until_separated``: fit Bradley-Terry and rank the players. An adjacent
  pair of that ranking is *resolved* when the likelihood of superiority of
  the higher over the lower is at least ``los``. The next round plays every
  unresolved adjacent pair, strongest first, that has fewer than
  ``max_games_per_pair`` games. Games between the two players of a boundary
  are the ones that inform it most (a game's information peaks at even
  odds), and lopsided pairs far apart in the ranking get none. When games
  reorder the ranking, the new neighbours become the pairs to check. Stop
  when no adjacent pair is unresolved (``separated``), when every
  unresolved one has reached its cap (``pair cap``), or when the next round
  would exceed ``max_games`` in total (``game cap``); pairs that fit are
  still played, strongest first.
- ``sprt`` (two players): the match goes on until the SPRT of
  :mod:`harness.arena.sprt` accepts a hypothesis or the pair reaches
  ``max_games_per_pair``.

The decision depends only on the games of the rounds so far, and the games
of a round are fixed by the seed, so a killed tournament that resumes from
``results.jsonl`` takes the same decisions and plays the same games.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.arena.ratings import Outcome, Ratings, bradley_terry
from harness.arena.sprt import sprt_from_mapping

if TYPE_CHECKING:
    from harness.arena.tournament import TournamentConfig

Pair = tuple[int, int]  # player indices, lower first (the order of the config)


@dataclass(frozen=True)
class Unresolved:
    """Two neighbours of the ranking whose order is not yet known at the wanted LOS."""

    higher: str
    lower: str
    los: float  # likelihood that ``higher`` is the stronger
    games: int  # games between them (rated or not)


@dataclass(frozen=True)
class SprtState:
    wins: int  # of the first player against the second
    draws: int
    losses: int
    llr: float
    lower: float
    upper: float
    decision: str | None  # "H0", "H1" or None


@dataclass(frozen=True)
class Decision:
    pairs: tuple[Pair, ...]  # to play in the next round; empty: the tournament is over
    status: str  # "playing", "round robin", "separated", "pair cap", "game cap", "sprt H1"...
    unresolved: tuple[Unresolved, ...] = ()
    sprt: SprtState | None = None


def unresolved_pairs(
    ratings: Ratings, los: float, games: Mapping[Pair, int] | None = None
) -> list[Unresolved]:
    """Adjacent pairs of the ranking, strongest first, whose LOS is below ``los``."""
    order = ratings.ranking()
    names = ratings.players
    out = []
    for upper, lower in itertools.pairwise(order):
        p = ratings.likelihood_of_superiority(names[upper], names[lower])
        if p < los:
            played = (games or {}).get((min(upper, lower), max(upper, lower)), 0)
            out.append(Unresolved(names[upper], names[lower], p, played))
    return out


def sprt_state(config: TournamentConfig, outcomes: Sequence[Outcome]) -> SprtState:
    """The SPRT of the first player against the second on the games so far."""
    test = sprt_from_mapping(config.sprt)
    first, second = (name for name, _ in config.named_players())
    wins = draws = losses = 0
    for g in outcomes:
        if {g.black, g.white} != {first, second}:
            continue
        score = g.score if g.black == first else 1 - g.score
        wins += score == 1
        draws += score == 0.5
        losses += score == 0
    lower, upper = test.bounds()
    return SprtState(wins, draws, losses, test.llr(wins, draws, losses), lower, upper,
                     test.decide(wins, draws, losses))


def next_round(
    config: TournamentConfig, outcomes: Sequence[Outcome], games: Mapping[Pair, int]
) -> Decision:
    """The pairs of the next round (see the module docstring), from the rounds so far.

    ``outcomes`` are the rated games, ``games`` the games scheduled per pair
    (error games included: they count against the caps).
    """
    names = [name for name, _ in config.named_players()]
    ratings = bradley_terry(outcomes, names, anchor=config.anchor)
    unresolved = tuple(unresolved_pairs(ratings, config.los, games))
    if config.sprt:
        state = sprt_state(config, outcomes)
        if state.decision is not None:
            return Decision((), f"sprt {state.decision}", unresolved, state)
        if games.get((0, 1), 0) >= config.max_games_per_pair:
            return Decision((), "pair cap", unresolved, state)
        return _within_total(config, ((0, 1),), games, unresolved, state)
    if not config.until_separated:
        return Decision((), "round robin", unresolved)
    if not unresolved:
        return Decision((), "separated")
    index = {name: i for i, name in enumerate(names)}
    wanted = []
    for pair in unresolved:
        i, j = sorted((index[pair.higher], index[pair.lower]))
        if games.get((i, j), 0) < config.max_games_per_pair:
            wanted.append((i, j))
    if not wanted:
        return Decision((), "pair cap", unresolved)
    return _within_total(config, tuple(wanted), games, unresolved, None)


def _within_total(config, wanted, games, unresolved, state) -> Decision:
    """The wanted pairs that fit under ``max_games`` (0: no total cap)."""
    if config.max_games:
        room = config.max_games - sum(games.values())
        wanted = wanted[: max(0, room // config.round_games)]
    if not wanted:
        return Decision((), "game cap", unresolved, state)
    return Decision(tuple(wanted), "playing", unresolved, state)


STOP_REASONS = {
    "round robin": "a fixed round robin, every pair played its games",
    "separated": "every neighbour pair of the ranking was separated",
    "pair cap": "each unresolved pair reached max_games_per_pair",
    "game cap": "the tournament reached max_games",
    "sprt H1": "the SPRT accepted H1",
    "sprt H0": "the SPRT accepted H0",
    "unfinished": "not finished (rerun the same command to go on)",
}


def stopping_sentences(summary: Mapping) -> list[str]:
    """Why a tournament stopped and what it left open, from its ``summary.json``."""
    los = 100 * summary["los"]
    if summary["unresolved"]:
        pairs = "; ".join(f"{a} over {b}: {100 * p:.1f}% after {n} games between them"
                          for a, b, p, n in summary["unresolved"])
        lines = [f"Neighbours not separated (likelihood of superiority below {los:g}%): "
                 f"{pairs}."]
    else:
        lines = [f"Every neighbour pair of the ranking is separated (likelihood of "
                 f"superiority at least {los:g}%)."]
    test = summary.get("sprt")
    if test:
        elo = {"H1": test["elo1"], "H0": test["elo0"]}
        record = f"{test['first']} +{test['wins']} ={test['draws']} -{test['losses']}"
        if test["decision"]:
            other = "H0" if test["decision"] == "H1" else "H1"
            verdict = (f"{test['decision']} accepted: {test['first']} - {test['second']} = "
                       f"{elo[test['decision']]:+g} Elo rather than {elo[other]:+g}")
        else:
            verdict = "no decision"
        lines.append(f"SPRT of {elo['H0']:+g} against {elo['H1']:+g} Elo: {record}, "
                     f"log-likelihood ratio {test['llr']:.2f} within bounds "
                     f"[{test['lower']:.2f}, {test['upper']:.2f}]: {verdict}.")
    lines.append(f"Play stopped: {STOP_REASONS.get(summary['stopped'], summary['stopped'])}.")
    return lines
