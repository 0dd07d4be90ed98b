"""Sequential probability ratio test for a two-player match, as fishtest runs it.

A match between A and B tests H0: A is ``elo0`` Elo stronger than B against
H1: A is ``elo1`` stronger, game by game, and stops as soon as the evidence
crosses a bound: Wald's ``log(beta / (1 - alpha))`` (accept H0) or
``log((1 - beta) / alpha)`` (accept H1). So a clear winner is found in a few
dozen games and a coin flip is not played for ever.

The statistic is fishtest's generalized SPRT (GSPRT) on the trinomial
(loss, draw, win) with logistic Elo: H_k says A's expected score per game is
``s_k = 1 / (1 + 10 ** (-elo_k / 400))``; the log-likelihood ratio is
``N * sum_i f_i * log(p1_i / p0_i)``, where ``f`` are the observed frequencies
and ``p_k`` the maximum-likelihood distribution over {0, 1/2, 1} whose mean is
``s_k``. It needs no draw model, so the draws of Go (rare: a jigo under an
integer komi, a move cap) count as half a point each and their absence
changes nothing. Without draws it is the classical binomial SPRT,
``W log(s1/s0) + L log((1-s1)/(1-s0))`` (up to the regularisation below).
As fishtest does, an outcome never observed counts as 0.001 games, so the
maximum-likelihood distributions exist when one side won everything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SCORES = np.array([0.0, 0.5, 1.0])  # loss, draw, win
EMPTY = 1e-3  # games counted for an outcome never seen (fishtest's regularisation)
H0, H1 = "H0", "H1"


def expected_score(elo: float) -> float:
    """The logistic model: expected score of a player ``elo`` points stronger."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def llr(wins, draws, losses, elo0: float, elo1: float) -> np.ndarray:
    """Log-likelihood ratio of H1 (``elo1``) over H0 (``elo0``); counts may be arrays."""
    counts = np.stack(np.broadcast_arrays(*(np.asarray(c, dtype=float)
                                            for c in (losses, draws, wins))), axis=-1)
    counts = np.where(counts > 0, counts, EMPTY)
    n = counts.sum(axis=-1)
    freq = counts / n[..., None]
    s0, s1 = expected_score(elo0), expected_score(elo1)
    # With p_k = f / (1 + x_k (a - s_k)):
    # log(p1_i / p0_i) = log(1 + x0 (a_i - s0)) - log(1 + x1 (a_i - s1)).
    log_ratio = np.log1p(_multiplier(freq, s0)[..., None] * (SCORES - s0)) - np.log1p(
        _multiplier(freq, s1)[..., None] * (SCORES - s1)
    )
    return n * np.sum(freq * log_ratio, axis=-1)


def _multiplier(freq: np.ndarray, s: float, iterations: int = 64) -> np.ndarray:
    """Lagrange multiplier x of the distribution ``f / (1 + x (a - s))`` with mean ``s``.

    Solves ``sum_i f_i (a_i - s) / (1 + x (a_i - s)) = 0`` by bisection: the
    left side falls from +inf to -inf as x runs over (-1/(1-s), 1/s), where
    every probability stays positive.
    """
    u = SCORES - s
    lo = np.full(freq.shape[:-1], -1.0 / (1.0 - s))
    hi = np.full(freq.shape[:-1], 1.0 / s)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        g = np.sum(freq * u / (1.0 + mid[..., None] * u), axis=-1)
        lo, hi = np.where(g > 0, mid, lo), np.where(g > 0, hi, mid)
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class SPRT:
    """Hypotheses in Elo of the first player over the second, and the error rates."""

    elo0: float = 0.0
    elo1: float = 35.0
    alpha: float = 0.05  # P(accept H1 | H0 true)
    beta: float = 0.05  # P(accept H0 | H1 true)

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError(f"sprt needs elo1 > elo0, got elo0={self.elo0}, elo1={self.elo1}")
        for name in ("alpha", "beta"):
            if not 0.0 < getattr(self, name) < 0.5:
                raise ValueError(f"sprt {name} must be in (0, 0.5), got {getattr(self, name)}")

    def bounds(self) -> tuple[float, float]:
        """Wald's (lower, upper) bounds on the log-likelihood ratio."""
        return (math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha))

    def llr(self, wins: float, draws: float, losses: float) -> float:
        return float(llr(wins, draws, losses, self.elo0, self.elo1))

    def decide(self, wins: float, draws: float, losses: float) -> str | None:
        """``"H1"`` or ``"H0"`` once a bound is crossed, None while the match goes on."""
        if wins + draws + losses == 0:
            return None
        value = self.llr(wins, draws, losses)
        lower, upper = self.bounds()
        return H1 if value >= upper else H0 if value <= lower else None


def parse_sprt(text: str) -> dict[str, float]:
    """``"elo0=0,elo1=35,alpha=0.05"`` as a mapping (the ``--sprt`` flag's value)."""
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        try:
            if not sep:
                raise ValueError
            values[key.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--sprt wants KEY=NUMBER pairs such as elo0=0,elo1=35, got {part!r}"
                             ) from None
    return values


def sprt_from_mapping(values: dict[str, float]) -> SPRT:
    """An :class:`SPRT` from a TOML table or :func:`parse_sprt`; unknown keys are errors."""
    known = ("elo0", "elo1", "alpha", "beta")
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(f"unknown sprt key {unknown[0]!r} (known: {', '.join(known)})")
    return SPRT(**{k: float(v) for k, v in values.items()})
