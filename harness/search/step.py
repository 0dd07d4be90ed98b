"""The two compiled halves of one batched search step, and a search's end.

``gather`` walks every searching game's tree and collects up to K leaves per
game (kept apart by virtual loss) with everything the evaluator needs; finished
games met on the way (two passes, NoGo dead ends) are scored exactly and backed
up at once. The network then evaluates all leaves in one call, and ``finish``
expands them and backs their values up. Each game's tree depends only on its
own evaluations, so searching games together or one at a time gives the same
trees.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from harness.game import board as K
from harness.search import gumbel as G
from harness.search import tree as T
from harness.search.leaves import leaf_outcome, load_leaf, replay_path
from harness.search.moves import best_move
from harness.search.tree import HOT


class Leaves(NamedTuple):
    """One step's leaves: capacity L = games x leaves per game."""

    game: np.ndarray  # int32 (L,)
    path: np.ndarray  # int32 (L, D): node indices from the root
    depth: np.ndarray  # int32 (L,)
    rows: np.ndarray  # int8 (L, T, P): encoder history rows, current position last
    to_play: np.ndarray  # int8 (L,)
    legal: np.ndarray  # bool (L, P + 1)


def new_leaves(capacity: int, depth: int, history: int, points: int) -> Leaves:
    return Leaves(
        game=np.zeros(capacity, np.int32),
        path=np.zeros((capacity, depth), np.int32),
        depth=np.zeros(capacity, np.int32),
        rows=np.zeros((capacity, history, points), np.int8),
        to_play=np.zeros(capacity, np.int8),
        legal=np.zeros((capacity, points + 1), np.bool_),
    )


class Slots(NamedTuple):
    """Per-game search control, indexed like the tree rows."""

    active: np.ndarray  # bool (G,): searching now
    target: np.ndarray  # int32 (G,): root child visits to reach
    komi: np.ndarray  # float64 (G,)
    noise: np.ndarray  # float32 (G, P + 1): Dirichlet sample by move (Gumbel root: Gumbel sample)
    noise_on: np.ndarray  # bool (G,): Dirichlet noise is mixed into the root priors
    clean_prior: np.ndarray  # float32 (G, P + 1): root priors before noise
    new_playouts: np.ndarray  # int32 (G,): visits added by the current search


def new_slots(games: int, points: int) -> Slots:
    return Slots(
        active=np.zeros(games, np.bool_),
        target=np.zeros(games, np.int32),
        komi=np.zeros(games, np.float64),
        noise=np.zeros((games, points + 1), np.float32),
        noise_on=np.zeros(games, np.bool_),
        clean_prior=np.zeros((games, points + 1), np.float32),
        new_playouts=np.zeros(games, np.int32),
    )


@njit(**HOT)
def remaining(t, s, g):
    """Visits game ``g`` still needs (root evaluation not counted)."""
    if t.first[g, T.ROOT] == T.UNEXPANDED:
        return max(s.target[g], 1)
    return s.target[g] - (t.visits[g, T.ROOT] - 1)


@njit(**HOT)
def descend(t, g, path, params, noise, budget):
    """Walk from the root to a node without children, adding virtual loss.

    Each node's child is PUCT's (``tree.select_child``) or Gumbel
    AlphaZero's (``gumbel.select_child``: ``noise[g]`` is the root's Gumbel
    sample by move, ``budget`` the search's simulations), as
    ``params[ROOT_RULE]`` says. A node's virtual loss is added after its
    child is chosen, so a descent only ever sees the other in-flight
    descents: with one leaf per step the search is exactly the sequential
    algorithm. Returns the path length; ``path[depth - 1]`` is the node
    reached, whose ``first`` says what it is (UNEXPANDED, TERMINAL or PENDING).
    """
    node = T.ROOT
    path[0] = T.ROOT
    depth = 1
    vloss = params[T.VIRTUAL_LOSS]
    gumbel = params[T.ROOT_RULE] == T.ROOT_GUMBEL
    while t.first[g, node] >= 0 and depth < path.shape[0]:
        if gumbel:
            child = G.select_child(t, g, node, params, noise, budget)
        else:
            fpu = params[T.FPU_ROOT] if node == T.ROOT else params[T.FPU]
            child = T.select_child(t, g, node, params[T.C_PUCT], params[T.C_BASE], fpu, vloss)
        t.inflight[g, node] += 1
        node = child
        path[depth] = node
        depth += 1
    t.inflight[g, node] += 1
    return depth


@njit(**HOT)
def _prepare(t, g, roots, root_rows, leaves, n, scratch, s, geo, work, rules):
    """Rebuild leaf ``n``'s position; returns True when it needs the network.

    A finished position is marked TERMINAL with its exact value and backed up
    here instead.
    """
    path = leaves.path[n]
    depth = leaves.depth[n]
    nbr, diag, zob = geo
    load_leaf(roots, g, root_rows, t.move[g], path, depth, scratch, n, leaves.rows)
    replay_path(t.move[g], path, depth, scratch, n, leaves.rows, nbr, zob)
    node = path[depth - 1]
    pass_rule, fill_eyes = rules
    over, value = leaf_outcome(scratch, n, s.komi[g], nbr, diag, zob, leaves.legal[n], work,
                               pass_rule, fill_eyes)
    if over and node != T.ROOT:
        t.first[g, node] = T.TERMINAL
        t.term[g, node] = value
        t.raw[g, node] = value
        T.backup(t, g, path, depth, value)
        s.new_playouts[g] += 1
        return False
    leaves.game[n] = g
    leaves.to_play[n] = scratch.meta[n, K.TO_PLAY]
    t.first[g, node] = T.PENDING
    return True


@njit(**HOT)  # releases the GIL: other threads may evaluate or gather meanwhile
def gather(t, s, roots, root_rows, scratch, leaves, start, capacity, params, per_game, geo,
           work):
    """Collect leaves from every active game into ``leaves`` (and ``scratch``)
    from index ``start``, below ``capacity``; returns the index after the last
    leaf that needs the network.

    Games write only their own tree rows, so callers gathering disjoint
    games into disjoint ranges may run side by side. ``geo`` is the board's
    (neighbours, diagonals, zobrist) arrays, ``work`` this caller's
    :class:`harness.game.board.Work`.
    """
    rules = (int(params[T.PASS_RULE]), params[T.FILL_EYES] != 0.0)
    n = start
    for g in range(t.move.shape[0]):
        if not s.active[g]:
            continue
        if n >= capacity:
            break
        if t.first[g, T.ROOT] == T.UNEXPANDED:
            # The root's own evaluation comes first and alone: its priors
            # (and root noise) must exist before any child is chosen.
            leaves.path[n, 0] = T.ROOT
            leaves.depth[n] = 1
            t.inflight[g, T.ROOT] += 1
            if _prepare(t, g, roots, root_rows, leaves, n, scratch, s, geo, work, rules):
                n += 1
            continue
        pending = 0
        while pending < per_game and n < capacity:
            if remaining(t, s, g) - pending <= 0:
                break
            depth = descend(t, g, leaves.path[n], params, s.noise, s.target[g])
            node = leaves.path[n, depth - 1]
            state = t.first[g, node]
            if state == T.TERMINAL:
                T.backup(t, g, leaves.path[n], depth, t.term[g, node])
                s.new_playouts[g] += 1
                continue
            if state != T.UNEXPANDED:
                # Another descent of this step is already evaluating this
                # leaf: stop here rather than evaluate it twice.
                T.release(t, g, leaves.path[n], depth)
                break
            leaves.depth[n] = depth
            if _prepare(t, g, roots, root_rows, leaves, n, scratch, s, geo, work, rules):
                n += 1
                pending += 1
    return n


@njit(**HOT)
def finish(t, s, leaves, start, stop, policy, value, params):
    """Expand the evaluated leaves ``start..stop - 1`` and back their values
    up (ranges holding disjoint games may be finished side by side)."""
    epsilon = params[T.NOISE_EPSILON]
    for i in range(start, stop):
        g = leaves.game[i]
        depth = leaves.depth[i]
        node = leaves.path[i, depth - 1]
        t.raw[g, node] = value[i]
        if not T.expand(t, g, node, leaves.legal[i], policy[i]):
            t.first[g, node] = T.UNEXPANDED  # tree full: keep the value, not the node
        elif node == T.ROOT and s.noise_on[g]:
            T.mix_root_noise(t, g, s.noise[g], epsilon, s.clean_prior[g])
        T.backup(t, g, leaves.path[i], depth, value[i])
        if node != T.ROOT:
            s.new_playouts[g] += 1


@njit(cache=True)
def reached_target(t, s, active):
    """The games of ``active`` whose search has all its visits (root expanded)."""
    out = np.empty(active.shape[0], np.int64)
    n = 0
    for g in range(active.shape[0]):
        if active[g] and t.first[g, T.ROOT] >= 0 and t.visits[g, T.ROOT] - 1 >= s.target[g]:
            out[n] = g
            n += 1
    return out[:n]


@njit(cache=True)
def conclude(t, s, g, params, visits, q, prior, improved):
    """End game ``g``'s search: its root statistics by move into ``visits``,
    ``q`` and ``prior`` (as ``tree.root_stats``, the priors with any noise
    the search used), the clean priors back in the tree, and the move. Under
    the Gumbel root the move is the sequential-halving winner and
    ``improved`` receives the improved policy; otherwise (or with no
    children) the most visited move. Returns (move, root value for the side
    to move, whether ``improved`` was written).

    One call per finished search, so that ending a search and starting the
    next cost a move one compiled call each rather than a dozen small ones.
    """
    T.root_stats(t, g, visits, q, prior)
    if s.noise_on[g]:
        T.restore_root_priors(t, g, s.clean_prior[g])
        s.noise_on[g] = False
    s.active[g] = False
    root_visits = t.visits[g, T.ROOT]
    root_value = -t.value[g, T.ROOT] / root_visits if root_visits else 0.0
    if params[T.ROOT_RULE] == T.ROOT_GUMBEL and t.first[g, T.ROOT] >= 0:
        return G.root_decision(t, g, s.noise, params, improved), root_value, True
    return best_move(visits, q, prior), root_value, False
