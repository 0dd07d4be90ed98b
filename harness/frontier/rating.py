"""One pooled rating of every player of a self-play study, and which games it needs next.

Jones (2021) rates every snapshot of every run in one Bradley-Terry fit, so
that a network of one family and one of another are on the same scale even
if they never met. Here the fit is
:func:`harness.arena.ratings.bradley_terry` with the first anchor fixed at
``anchor_elo``; a player's interval is its rating's 95% interval from the
fit's covariance (relative to the fixed anchor, whose own width is 0).

Which games inform a rating most: those between players of near rating (a
game's information peaks at even odds; Jones pairs snapshots of similar
strength for the same reason). Each round therefore pairs the neighbours of
the current rating order, anchors included, where at least one of the two
still has an interval wider than the target, the widest first; play stops
when every interval is narrow enough or the games cap is reached (a round
is cut to the pairs that fit under it). With no games yet every rating is
equal and the order is the players' own, so the caller lists them in the
order it expects (weakest anchor, networks by compute, strongest anchor).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from harness.arena.ratings import Outcome, Ratings, bradley_terry

LEVEL = 0.95

STOP_REASONS = {
    "target": "every player's interval is narrower than the target",
    "game cap": "the games cap was reached",
    "playing": "not finished (run the same command again to go on)",
}


@dataclass(frozen=True)
class PoolRating:
    """The pooled rating: each player's Elo and its 95% interval."""

    ratings: Ratings  # Elo relative to the fixed anchor, shifted by anchor_elo

    @property
    def players(self) -> list[str]:
        return self.ratings.players

    def half_widths(self) -> np.ndarray:
        return norm.ppf(0.5 + LEVEL / 2) * self.ratings.stderr()

    def of(self, player: str) -> tuple[float, float, float]:
        """``player``'s Elo, low and high."""
        i = self.players.index(player)
        elo, half = float(self.ratings.elo[i]), float(self.half_widths()[i])
        return elo, elo - half, elo + half


def pool_rating(outcomes: Iterable[Outcome], players: Sequence[str], anchor: str,
                anchor_elo: float = 0.0) -> PoolRating:
    """Bradley-Terry over ``outcomes`` (games of other players are left out),
    ``anchor`` fixed at ``anchor_elo``."""
    known = set(players)
    games = [g for g in outcomes if g.black in known and g.white in known]
    fit = bradley_terry(games, list(players), anchor=anchor)
    return PoolRating(Ratings(fit.players, fit.elo + anchor_elo, fit.covariance,
                              fit.first_move_elo))


@dataclass(frozen=True)
class Round:
    """The pairs the next round plays (empty: stop, and ``status`` says why)."""

    pairs: tuple[tuple[str, str], ...]
    status: str  # "playing", "target" or "game cap"


def next_round(rating: PoolRating, target: float, played: int, max_games: int,
               pair_games: int) -> Round:
    """Neighbours of the rating order with an interval wider than ``target``
    (half-width, Elo), widest first, as many as fit under ``max_games`` with
    ``played`` games already played and ``pair_games`` a pair."""
    names = rating.players
    widths = rating.half_widths()
    order = rating.ratings.ranking()
    wanted = [(names[a], names[b], max(widths[a], widths[b]))
              for a, b in itertools.pairwise(order) if max(widths[a], widths[b]) >= target]
    if not wanted:
        return Round((), "target")
    room = max(0, max_games - played) // pair_games
    if room == 0:
        return Round((), "game cap")
    wanted.sort(key=lambda w: -w[2])  # stable: ties keep the rating order
    return Round(tuple((a, b) for a, b, _ in wanted[:room]), "playing")
