"""PUCT search trees for many games as preallocated arrays, and their kernels.

Every game owns one row of each array; a node is a column. When a node is
expanded its children (one per legal move) are allocated as one contiguous
block, so a node only needs the index of its first child and a count. Nothing
here creates Python objects: selection, expansion, backup and re-rooting are
compiled loops over integers and floats.

Values: ``value[g, n]`` sums the evaluations backed up through node ``n`` seen
from the player who *made the move into* ``n``, so a parent compares its
children's means directly. The root's own entry is therefore from the
opponent's side, and the root value for the side to move is
``-value / visits``.

Virtual loss: ``inflight[g, n]`` counts descents through ``n`` still waiting
for their network evaluation; each counts as ``virtual_loss`` extra visits that
were all lost, steering the next descent of the same step elsewhere.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

# Kernels run per descent or per leaf are compiled without numba's reference
# counting (like the rules kernels): each call would otherwise incref and
# decref every array of the ``Tree`` and ``Boards`` tuples it is passed. They
# must never allocate (no new arrays, no slice copies: write element loops)
# and may only call kernels compiled the same way: numba compiles callees
# under the caller's flags, so e.g. ``legal_mask`` or ``area_score`` (which
# allocate) are called from ordinary kernels only; their ``*_into`` forms take
# scratch arrays instead. They release the GIL:
# with overlapped self-play a worker thread evaluates leaves meanwhile.
HOT = {"cache": True, "_nrt": False, "nogil": True}

# ``first`` holds a child index when expanded, or one of these states.
UNEXPANDED, TERMINAL, PENDING = -1, -2, -3
ROOT = 0

# Indices into the ``params`` float64 vector the kernels take.
C_PUCT, C_BASE, FPU, FPU_ROOT, VIRTUAL_LOSS, NOISE_EPSILON, PASS_RULE = range(7)
ROOT_RULE, GUMBEL_K, C_VISIT, C_SCALE, Q_MINMAX, FILL_EYES = range(7, 13)
PARAM_COUNT = 13
# Values of params[ROOT_RULE].
ROOT_PUCT, ROOT_GUMBEL = 0, 1


class Tree(NamedTuple):
    move: np.ndarray  # int16 (G, N): move into the node (pass = P)
    prior: np.ndarray  # float32 (G, N): policy prior of that move
    visits: np.ndarray  # int32 (G, N): completed backups through the node
    value: np.ndarray  # float64 (G, N): sum of values for the player who moved into it
    inflight: np.ndarray  # int32 (G, N): descents waiting for evaluation (virtual loss)
    first: np.ndarray  # int32 (G, N): first child, or UNEXPANDED / TERMINAL / PENDING
    count: np.ndarray  # int32 (G, N): number of children
    term: np.ndarray  # float32 (G, N): exact value of a TERMINAL node for its side to move
    raw: np.ndarray  # float32 (G, N): the node's own evaluation for its side to move
    used: np.ndarray  # int32 (G,): nodes allocated in the row


def node_capacity(playouts: int, points: int) -> int:
    """Nodes a search of ``playouts`` visits can need: every expansion adds at
    most P + 1 children, and a tree only holds ``playouts`` + 1 expansions
    because reused visits count towards the budget."""
    return 1 + (playouts + 1) * (points + 1)


def new_tree(games: int, capacity: int) -> Tree:
    tree = Tree(
        move=np.full((games, capacity), -1, np.int16),
        prior=np.zeros((games, capacity), np.float32),
        visits=np.zeros((games, capacity), np.int32),
        value=np.zeros((games, capacity), np.float64),
        inflight=np.zeros((games, capacity), np.int32),
        first=np.full((games, capacity), UNEXPANDED, np.int32),
        count=np.zeros((games, capacity), np.int32),
        term=np.zeros((games, capacity), np.float32),
        raw=np.zeros((games, capacity), np.float32),
        used=np.ones(games, np.int32),
    )
    return tree


def grow_tree(tree: Tree, capacity: int) -> Tree:
    """A copy of ``tree`` with room for ``capacity`` nodes per game."""
    old = tree.move.shape[1]
    if capacity <= old:
        return tree
    fresh = new_tree(tree.move.shape[0], capacity)
    for name in Tree._fields:
        if name != "used":
            getattr(fresh, name)[:, :old] = getattr(tree, name)
    fresh.used[:] = tree.used
    return fresh


@njit(**HOT)
def clear(t, g):
    """Forget game ``g``'s tree: only an unexpanded root remains."""
    t.used[g] = 1
    t.move[g, ROOT] = -1
    t.prior[g, ROOT] = 1.0
    t.visits[g, ROOT] = 0
    t.value[g, ROOT] = 0.0
    t.inflight[g, ROOT] = 0
    t.first[g, ROOT] = UNEXPANDED
    t.count[g, ROOT] = 0
    t.term[g, ROOT] = 0.0
    t.raw[g, ROOT] = 0.0


@njit(**HOT, inline="always")
def select_child(t, g, node, c_puct, c_base, fpu_reduction, vloss):
    """The child maximising Q + U (AlphaZero PUCT with first-play urgency).

    Ties go to the larger prior, so a position and its mirror image pick
    mirrored moves whenever the priors tell moves apart.
    """
    f = t.first[g, node]
    n = t.count[g, node]
    parent_n = t.visits[g, node] + vloss * t.inflight[g, node]
    parent_q = 0.0
    if t.visits[g, node] > 0:
        parent_q = -t.value[g, node] / t.visits[g, node]
    mass = 0.0
    for c in range(f, f + n):
        if t.visits[g, c] + t.inflight[g, c] > 0:
            mass += t.prior[g, c]
    fpu = parent_q - fpu_reduction * math.sqrt(mass)
    cs = c_puct
    if c_base > 0:
        cs += math.log((1.0 + parent_n + c_base) / c_base)
    scale = cs * math.sqrt(max(parent_n, 1.0))
    best = f
    best_score = -np.inf
    best_prior = -1.0
    for c in range(f, f + n):
        virtual = vloss * t.inflight[g, c]
        nc = t.visits[g, c] + virtual
        q = (t.value[g, c] - virtual) / nc if nc > 0 else fpu
        p = t.prior[g, c]
        score = q + scale * p / (1.0 + nc)
        if score > best_score or (score == best_score and p > best_prior):
            best = c
            best_score = score
            best_prior = p
    return best


@njit(**HOT)
def expand(t, g, node, legal, policy):
    """Give ``node`` one child per legal move with its prior; False when full."""
    moves = legal.shape[0]
    n = 0
    for m in range(moves):
        if legal[m]:
            n += 1
    start = t.used[g]
    if start + n > t.move.shape[1]:
        return False
    c = start
    for m in range(moves):
        if legal[m]:
            t.move[g, c] = m
            t.prior[g, c] = policy[m]
            t.visits[g, c] = 0
            t.value[g, c] = 0.0
            t.inflight[g, c] = 0
            t.first[g, c] = UNEXPANDED
            t.count[g, c] = 0
            t.term[g, c] = 0.0
            t.raw[g, c] = 0.0
            c += 1
    t.used[g] = c
    t.first[g, node] = start
    t.count[g, node] = n
    return True


@njit(**HOT)
def backup(t, g, path, depth, value):
    """Add ``value`` (for the leaf's side to move) along the path, alternating
    sides, and release the path's virtual loss."""
    v = -value
    for i in range(depth - 1, -1, -1):
        node = path[i]
        t.visits[g, node] += 1
        t.value[g, node] += v
        t.inflight[g, node] -= 1
        v = -v


@njit(**HOT)
def release(t, g, path, depth):
    """Take back a descent that will not be evaluated (a collision)."""
    for i in range(depth):
        t.inflight[g, path[i]] -= 1


@njit(**HOT)
def mix_root_noise(t, g, noise, epsilon, clean):
    """Blend Dirichlet noise (indexed by move) into the root children's priors,
    saving the clean priors (indexed by move) so they can be restored."""
    f = t.first[g, ROOT]
    for c in range(f, f + t.count[g, ROOT]):
        m = t.move[g, c]
        clean[m] = t.prior[g, c]
        t.prior[g, c] = (1.0 - epsilon) * t.prior[g, c] + epsilon * noise[m]


@njit(**HOT)
def restore_root_priors(t, g, clean):
    f = t.first[g, ROOT]
    for c in range(f, f + t.count[g, ROOT]):
        t.prior[g, c] = clean[t.move[g, c]]


@njit(**HOT)
def find_child(t, g, node, move):
    f = t.first[g, node]
    if f < 0:
        return -1
    for c in range(f, f + t.count[g, node]):
        if t.move[g, c] == move:
            return c
    return -1


@njit(**HOT)
def reroot(t, g, child, spare, order):
    """Make ``child`` the root of game ``g``'s tree, keeping its subtree.

    The subtree is copied breadth first into row 0 of ``spare`` (a one-game
    tree) and back, which also compacts it: the discarded siblings' nodes are
    freed. ``order`` is int32 scratch of the row's capacity. Returns False
    (and clears the tree) when the child has no subtree worth keeping.
    """
    if child < 0 or t.first[g, child] < 0:
        clear(t, g)
        return False
    order[0] = child
    used = 1
    j = 0
    while j < used:
        o = order[j]
        spare.move[0, j] = t.move[g, o]
        spare.prior[0, j] = t.prior[g, o]
        spare.visits[0, j] = t.visits[g, o]
        spare.value[0, j] = t.value[g, o]
        spare.count[0, j] = t.count[g, o]
        spare.term[0, j] = t.term[g, o]
        spare.raw[0, j] = t.raw[g, o]
        f = t.first[g, o]
        if f >= 0:
            spare.first[0, j] = used
            for i in range(t.count[g, o]):
                order[used + i] = f + i
            used += t.count[g, o]
        else:
            spare.first[0, j] = f
        j += 1
    for j in range(used):
        t.move[g, j] = spare.move[0, j]
        t.prior[g, j] = spare.prior[0, j]
        t.visits[g, j] = spare.visits[0, j]
        t.value[g, j] = spare.value[0, j]
        t.inflight[g, j] = 0
        t.first[g, j] = spare.first[0, j]
        t.count[g, j] = spare.count[0, j]
        t.term[g, j] = spare.term[0, j]
        t.raw[g, j] = spare.raw[0, j]
    t.move[g, ROOT] = -1
    t.used[g] = used
    return True


@njit(**HOT)
def root_stats(t, g, visits, q, prior):
    """Fill per-move arrays (length P + 1) from the root's children.

    ``q`` is the mean value for the side to move at the root, NaN where the
    move was never visited; moves that are not children keep zero visits.
    """
    visits[:] = 0
    q[:] = np.nan
    prior[:] = 0.0
    f = t.first[g, ROOT]
    if f < 0:
        return
    for c in range(f, f + t.count[g, ROOT]):
        m = t.move[g, c]
        visits[m] = t.visits[g, c]
        prior[m] = t.prior[g, c]
        if t.visits[g, c] > 0:
            q[m] = t.value[g, c] / t.visits[g, c]
