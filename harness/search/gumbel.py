"""Gumbel AlphaZero's search rules (Danihelka et al., ICLR 2022), compiled.

PUCT needs many simulations per move before its visit counts improve on the
network's policy; Gumbel AlphaZero improves the policy even at 2-16. Its
pieces, all read off one node's children in the batched tree:

- **Completed Q.** A child's Q is its mean value, or the node's *mixed value*
  when it was never visited (the network value blended with the visited
  children's prior-weighted Q, paper appendix D). The completed values are
  mapped to [0, 1], by the value range [-1, 1] (default) or by their min and
  max over the node's children (``q_normalisation = "minmax"``, DeepMind
  ``mctx``'s rescaling), and scaled by ``(c_visit + max visits) * c_scale``:
  that is ``sigma(completed Q)``.
- **Root: Gumbel-top-k and sequential halving.** With Gumbel noise ``g`` per
  move, the root visits the children whose visit count equals the one the
  halving schedule (:func:`considered_visits`) gives for the current
  simulation, best ``g + log prior + sigma(completed Q)`` first. At count 0
  this samples ``min(gumbel_k, moves)`` moves without replacement; later
  phases keep the better half, so the budget is spent as the paper's
  schedule says: ``floor(n / (ceil(log2 k) * |considered|))`` visits per
  considered move and phase.
- **The move** is the best of the most visited children by the same score,
  and the **training target** is the improved policy
  ``softmax(log prior + sigma(completed Q))`` over every child.
- **Below the root** the choice is deterministic: the child maximising
  ``improved policy - visits / (1 + total visits)``, which makes the visit
  distribution track the improved policy.

In-flight descents (several leaves per game per network call) count as
visits for the schedule and the non-root rule, so parallel descents spread
out as they would one after another; Q uses completed visits only. The
min-max normalisation runs over the node's legal children (the tree holds no
others), where ``mctx`` also counts the illegal actions' completed values.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harness.search import tree as T
from harness.search.tree import HOT

# Priors are floored before taking logs: a legal move's prior can underflow
# to zero in float32 and must stay a candidate with a finite score.
PRIOR_FLOOR = 1e-30
# Smallest max - min range of completed Q values the rescaling divides by.
Q_RANGE_FLOOR = 1e-8


@njit(**HOT)
def considered_visits(m, n, index):
    """Visits every considered root move has when simulation ``index`` (0-based)
    of ``n`` starts, among ``m`` sampled moves.

    The phases of sequential halving: ``m`` moves, then half as many (at
    least 2), each phase giving every remaining move
    ``max(1, floor(n / (ceil(log2 m) * remaining)))`` visits, one round
    of the remaining moves at a time, until the budget is spent. One move
    (``m <= 1``) takes every simulation.
    """
    if m <= 1:
        return index
    log2m = 0
    while (1 << log2m) < m:
        log2m += 1
    considered = m
    visits = 0
    start = 0
    while True:
        rounds = max(1, n // (log2m * considered))
        span = rounds * considered
        if index < start + span:
            return visits + (index - start) // considered
        start += span
        visits += rounds
        considered = max(2, considered // 2)


@njit(**HOT)
def completed_q(t, g, child, mixed):
    """Mean value of ``child`` for its parent's side to move, ``mixed`` if unvisited."""
    visits = t.visits[g, child]
    return t.value[g, child] / visits if visits > 0 else mixed


@njit(**HOT)
def sigma_terms(t, g, node, params):
    """(mixed value, low, scale) of ``node``'s children.

    ``sigma(c) = (completed_q(c) - low) * scale`` with ``scale = (c_visit +
    max visits) * c_scale / (high - low)``: the completed values mapped to
    [0, 1], times the paper's visit factor. ``low, high`` are the value range
    -1, 1, or with ``params[Q_MINMAX]`` the extreme completed values among
    the children. The mixed value is
    ``(raw + N * sum_visited(p q) / sum_visited(p)) / (N + 1)`` with N the
    children's total visits (appendix D).
    """
    f = t.first[g, node]
    count = t.count[g, node]
    total = 0
    most = 0
    mass = 0.0
    weighted = 0.0
    for c in range(f, f + count):
        visits = t.visits[g, c]
        if visits > 0:
            p = max(t.prior[g, c], PRIOR_FLOOR)
            total += visits
            most = max(most, visits)
            mass += p
            weighted += p * t.value[g, c] / visits
    raw = t.raw[g, node]
    mixed = raw if total == 0 else (raw + total * weighted / mass) / (total + 1)
    low, high = -1.0, 1.0
    if params[T.Q_MINMAX]:
        low, high = np.inf, -np.inf
        for c in range(f, f + count):
            q = completed_q(t, g, c, mixed)
            low = min(low, q)
            high = max(high, q)
    visit_factor = (params[T.C_VISIT] + most) * params[T.C_SCALE]
    return mixed, low, visit_factor / max(high - low, Q_RANGE_FLOOR)


@njit(**HOT)
def improved_logit(t, g, child, mixed, low, scale):
    """``log prior + sigma(completed Q)`` of one child (``scale`` includes the
    visit factor and the range)."""
    prior = max(t.prior[g, child], PRIOR_FLOOR)
    return math.log(prior) + (completed_q(t, g, child, mixed) - low) * scale


@njit(**HOT)
def root_child(t, g, noise, params, considered):
    """The root child to visit: among children with ``considered`` visits (in
    flight included), the best ``g + log prior +
    sigma(completed Q)``. Children off the schedule are the fallback."""
    f = t.first[g, T.ROOT]
    mixed, low, scale = sigma_terms(t, g, T.ROOT, params)
    best = -1
    best_score = -np.inf
    fallback = f
    fallback_visits = 1 << 30
    fallback_score = -np.inf
    for c in range(f, f + t.count[g, T.ROOT]):
        score = noise[g, t.move[g, c]] + improved_logit(t, g, c, mixed, low, scale)
        visits = t.visits[g, c] + t.inflight[g, c]
        if visits == considered and score > best_score:
            best, best_score = c, score
        if visits < fallback_visits or (visits == fallback_visits and score > fallback_score):
            fallback, fallback_visits, fallback_score = c, visits, score
    return best if best >= 0 else fallback


@njit(**HOT)
def interior_child(t, g, node, params):
    """The deterministic non-root rule (paper section 5): the child maximising
    ``improved policy - visits / (1 + total visits)``."""
    f = t.first[g, node]
    count = t.count[g, node]
    mixed, low, scale = sigma_terms(t, g, node, params)
    top = -np.inf
    total_visits = 0
    for c in range(f, f + count):
        top = max(top, improved_logit(t, g, c, mixed, low, scale))
        total_visits += t.visits[g, c] + t.inflight[g, c]
    norm = 0.0
    for c in range(f, f + count):
        norm += math.exp(improved_logit(t, g, c, mixed, low, scale) - top)
    best = f
    best_score = -np.inf
    for c in range(f, f + count):
        policy = math.exp(improved_logit(t, g, c, mixed, low, scale) - top) / norm
        visits = t.visits[g, c] + t.inflight[g, c]
        score = policy - visits / (1.0 + total_visits)
        if score > best_score:
            best, best_score = c, score
    return best


@njit(**HOT)
def select_child(t, g, node, params, noise, budget):
    """Gumbel AlphaZero's child of ``node`` for a simulation of a ``budget``-simulation search."""
    if node != T.ROOT:
        return interior_child(t, g, node, params)
    f = t.first[g, T.ROOT]
    m = min(int(params[T.GUMBEL_K]), t.count[g, T.ROOT])
    done = 0
    for c in range(f, f + t.count[g, T.ROOT]):
        done += t.visits[g, c] + t.inflight[g, c]
    index = min(done, max(budget, 1) - 1)
    considered = considered_visits(m, max(budget, 1), index)
    return root_child(t, g, noise, params, considered)


@njit(cache=True)
def root_decision(t, g, noise, params, policy):
    """The move a finished search plays, and its improved policy by move.

    The move is the best ``g + log prior + sigma(completed Q)`` among the most
    visited root children (the sequential-halving winner); ``policy`` (length
    P + 1, zero off the children) receives ``softmax(log prior + sigma)``.
    Returns -1 when the root has no children.
    """
    policy[:] = 0.0
    f = t.first[g, T.ROOT]
    if f < 0:
        return -1
    count = t.count[g, T.ROOT]
    most = 0
    for c in range(f, f + count):
        most = max(most, t.visits[g, c])
    child = root_child(t, g, noise, params, most)
    mixed, low, scale = sigma_terms(t, g, T.ROOT, params)
    top = -np.inf
    for c in range(f, f + count):
        top = max(top, improved_logit(t, g, c, mixed, low, scale))
    norm = 0.0
    for c in range(f, f + count):
        e = math.exp(improved_logit(t, g, c, mixed, low, scale) - top)
        policy[t.move[g, c]] = e
        norm += e
    for c in range(f, f + count):
        policy[t.move[g, c]] /= norm
    return t.move[g, child]


def sample_noise(rng: np.random.Generator, legal: np.ndarray, out: np.ndarray) -> None:
    """Write a standard Gumbel sample for every legal move into ``out`` (zeros elsewhere)."""
    out[:] = 0.0
    moves = np.flatnonzero(legal)
    out[moves] = rng.gumbel(size=moves.size)
