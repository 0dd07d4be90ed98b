"""Plain UCT with random playouts: the network-free baseline of the Mattisson thesis.

Each simulation walks down a UCB1 tree (mean result plus ``c * sqrt(ln N / n)``
with ``c = sqrt(2)``, the thesis' formula), adds one node, finishes the game
with random moves that never fill own eyes, scores the end by Tromp-Taylor area
with komi (NoGo: the side left without a move loses), and backs the result up.
``uct:1000`` means 1,000 such simulations per move.

The tree is a set of flat arrays (nodes and edges) and the whole simulation
loop is compiled; Python only decides how many simulations to run next, so a
time budget is checked between chunks. Tree moves obey the game's own rules
(superko included); playouts switch to simple ko because checking the whole
history at every random move would dominate the cost and the playouts are
noise anyway.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import numpy as np
from numba import njit

from harness.game import board as K
from harness.game.geometry import BLACK, EMPTY
from harness.game.position import DEFAULT_KOMI, Game
from harness.players.base import RESIGN, SearchBudget

UNEXPANDED = -1
CLOCK_CHECK_PLAYOUTS = 64  # simulations between two looks at the clock


class UCTTree(NamedTuple):
    node_edge_start: np.ndarray  # int64 (N,): first edge of the node's children
    node_edge_count: np.ndarray  # int32 (N,): children, UNEXPANDED until expanded
    node_visits: np.ndarray  # int32 (N,)
    edge_move: np.ndarray  # int32 (E,)
    edge_child: np.ndarray  # int32 (E,): node reached, -1 until first visit
    edge_visits: np.ndarray  # int32 (E,)
    edge_wins: np.ndarray  # float64 (E,): results for the player who made the move
    used: np.ndarray  # int64 (2,): nodes used, edges used


def new_tree(nodes: int, edges: int) -> UCTTree:
    tree = UCTTree(
        node_edge_start=np.zeros(nodes, np.int64),
        node_edge_count=np.full(nodes, UNEXPANDED, np.int32),
        node_visits=np.zeros(nodes, np.int32),
        edge_move=np.zeros(edges, np.int32),
        edge_child=np.full(edges, -1, np.int32),
        edge_visits=np.zeros(edges, np.int32),
        edge_wins=np.zeros(edges, np.float64),
        used=np.zeros(2, np.int64),
    )
    tree.used[0] = 1  # the root
    return tree


def _grown(tree: UCTTree, nodes: int, edges: int) -> UCTTree:
    """A copy of ``tree`` with room for at least ``nodes`` nodes and ``edges`` edges."""
    out = new_tree(max(nodes, len(tree.node_visits)), max(edges, len(tree.edge_move)))
    for old, new in zip(tree, out, strict=True):
        new[: len(old)] = old
    return out


@njit(cache=True)
def _expand(tree, node, b, g, nbr, diag, zob):
    """Create the edges of ``node``: every legal move, minus own-eye fills in Go.

    Pass is always an edge in Go (so the tree can end a won game) and never in NoGo.
    """
    points = b.stones.shape[1]
    color = b.meta[g, K.TO_PLAY]
    nogo = b.meta[g, K.RULE] == K.NOGO
    start = tree.used[1]
    n = 0
    for p in range(points):
        if b.stones[g, p] != EMPTY:
            continue
        if not nogo and K.is_eye(b, g, p, color, nbr, diag):
            continue
        if K.check_move(b, g, p, color, nbr, zob) == K.LEGAL:
            tree.edge_move[start + n] = p
            tree.edge_child[start + n] = -1
            tree.edge_visits[start + n] = 0
            tree.edge_wins[start + n] = 0.0
            n += 1
    if not nogo:
        tree.edge_move[start + n] = points
        tree.edge_child[start + n] = -1
        tree.edge_visits[start + n] = 0
        tree.edge_wins[start + n] = 0.0
        n += 1
    tree.node_edge_start[node] = start
    tree.node_edge_count[node] = n
    tree.used[1] = start + n


@njit(cache=True)
def _select_edge(tree, node, c):
    """UCB1 over the node's edges; an unvisited edge (chosen at random) goes first."""
    start = tree.node_edge_start[node]
    n = tree.node_edge_count[node]
    unvisited = 0
    for i in range(n):
        if tree.edge_visits[start + i] == 0:
            unvisited += 1
    if unvisited > 0:
        k = np.random.randint(unvisited)
        for i in range(n):
            if tree.edge_visits[start + i] == 0:
                if k == 0:
                    return start + i
                k -= 1
    log_n = math.log(max(tree.node_visits[node], 1))
    best = start
    best_score = -1.0
    for i in range(n):
        e = start + i
        v = tree.edge_visits[e]
        score = tree.edge_wins[e] / v + c * math.sqrt(log_n / v)
        if score > best_score:
            best_score = score
            best = e
    return best


@njit(cache=True)
def _black_result(b, g, nbr, komi, owner):
    """1 if Black wins the finished (or abandoned) game, 0 if White, 0.5 for a draw."""
    if b.meta[g, K.RULE] == K.NOGO:
        return 0.0 if b.meta[g, K.TO_PLAY] == BLACK else 1.0
    margin = K.area_score(b, g, nbr, owner) - komi
    if margin > 0:
        return 1.0
    if margin < 0:
        return 0.0
    return 0.5


@njit(cache=True)
def uct_simulate(tree, root, scratch, nbr, diag, zob, komi, c, simulations, rollout_cap):
    """Run ``simulations`` UCT simulations from game 0 of ``root`` into ``tree``.

    ``scratch`` is a one-game batch of the same size; the caller guarantees room
    for ``simulations`` new nodes and ``simulations * (P + 1)`` new edges.
    """
    points = root.stones.shape[1]
    nogo = root.meta[0, K.RULE] == K.NOGO
    owner = np.empty(points, np.int32)
    path_edges = np.empty(tree.node_visits.shape[0], np.int64)
    path_color = np.empty(tree.node_visits.shape[0], np.int32)
    for _ in range(simulations):
        K.copy_game(root, 0, scratch, 0)
        node = 0
        depth = 0
        while True:
            if not nogo and scratch.meta[0, K.PASSES] >= 2:
                break  # the game ended inside the tree: its score is exact
            if tree.node_edge_count[node] == UNEXPANDED:
                if node != 0 and tree.node_visits[node] == 0:
                    # A fresh leaf: finish the game at random.
                    if scratch.meta[0, K.RULE] == K.POSITIONAL_SUPERKO:
                        scratch.meta[0, K.RULE] = K.SIMPLE_KO
                    K.playout(scratch, 0, nbr, diag, zob, rollout_cap)
                    break
                _expand(tree, node, scratch, 0, nbr, diag, zob)
            if tree.node_edge_count[node] == 0:
                break  # NoGo: no legal move, the side to move has lost
            e = _select_edge(tree, node, c)
            path_edges[depth] = e
            path_color[depth] = scratch.meta[0, K.TO_PLAY]
            depth += 1
            K.play(scratch, 0, tree.edge_move[e], nbr, zob)
            child = tree.edge_child[e]
            if child < 0:
                child = tree.used[0]
                tree.used[0] += 1
                tree.node_edge_count[child] = UNEXPANDED
                tree.node_visits[child] = 0
                tree.edge_child[e] = child
            node = child
        black = _black_result(scratch, 0, nbr, komi, owner)
        tree.node_visits[0] += 1
        for i in range(depth):
            e = path_edges[i]
            tree.edge_visits[e] += 1
            tree.edge_wins[e] += black if path_color[i] == BLACK else 1.0 - black
            tree.node_visits[tree.edge_child[e]] += 1
    return simulations


class UCTPlayer(SearchBudget):
    """UCB1 tree search with random playouts; no network.

    ``playouts`` simulations per move, or as many as fit in ``move_time``
    seconds, whichever ends first. Resigns only if ``resign_below`` is set and
    the best move's win rate falls under it.
    """

    def __init__(
        self,
        playouts: int | None = 1000,
        *,
        move_time: float | None = None,
        exploration: float = math.sqrt(2.0),
        resign_below: float | None = None,
        seed: int | None = None,
        name: str | None = None,
    ):
        if playouts is None and move_time is None:
            raise ValueError("UCT needs a playout count or a time per move")
        if playouts is not None and playouts < 1:
            raise ValueError(f"UCT playouts must be at least 1, got {playouts}")
        self.playouts = playouts
        self.move_time = move_time
        self.exploration = exploration
        self.resign_below = resign_below
        self.name = name or (f"uct:{playouts}" if playouts else f"uct:{move_time}s")
        self._rng = np.random.default_rng(seed)
        self._tree: UCTTree | None = None
        self.last_simulations = 0
        self.last_win_rate = 0.5

    def reset(self, size: int, komi: float, rules: str) -> None:
        pass

    def select_move(self, game: Game) -> int:
        tree = self.search(game)
        start, count = int(tree.node_edge_start[0]), int(tree.node_edge_count[0])
        if count <= 0:
            return game.pass_move
        visits = tree.edge_visits[start : start + count]
        wins = tree.edge_wins[start : start + count]
        # Most visits; among equals the better mean; among those, chance. With
        # fewer playouts than moves every edge has one visit, and a fixed
        # tie-break would always play the lowest-numbered winning point (or
        # pass) instead of a random good one.
        means = wins / np.maximum(visits, 1)
        tied = np.flatnonzero(
            (visits == visits.max()) & (means == means[visits == visits.max()].max())
        )
        best = start + int(self._rng.choice(tied))
        self.last_win_rate = float(tree.edge_wins[best] / max(tree.edge_visits[best], 1))
        if self.resign_below is not None and self.last_win_rate < self.resign_below:
            return RESIGN
        return int(tree.edge_move[best])

    def search(self, game: Game) -> UCTTree:
        """Run the search for the side to move in ``game``; returns the tree."""
        geo = game.geo
        per_sim_edges = geo.points + 1
        budget = self.playouts if self.playouts is not None else 1 << 30
        chunk = min(CLOCK_CHECK_PLAYOUTS, budget)
        tree = self._tree
        if tree is None or len(tree.edge_move) < (chunk + 1) * per_sim_edges:
            tree = new_tree(chunk + 1, (chunk + 1) * per_sim_edges)
        else:
            tree = _cleared(tree)
        scratch = K.new_boards(1, game.size, K.POSITIONAL_SUPERKO)
        K.seed_rng(int(self._rng.integers(2**31 - 1)))
        cap = 3 * geo.points
        deadline = None if self.move_time is None else time.perf_counter() + self.move_time
        done = 0
        while done < budget:
            n = min(chunk, budget - done)
            need_nodes = int(tree.used[0]) + n + 1
            need_edges = int(tree.used[1]) + (n + 1) * per_sim_edges
            if need_nodes > len(tree.node_visits) or need_edges > len(tree.edge_move):
                tree = _grown(tree, 2 * need_nodes, 2 * need_edges)
            uct_simulate(
                tree,
                game.boards,
                scratch,
                geo.neighbours,
                geo.diagonals,
                geo.zobrist,
                float(game.komi),
                self.exploration,
                n,
                cap,
            )
            done += n
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self._tree = tree
        self.last_simulations = done
        return tree

    def close(self) -> None:
        self._tree = None


def _cleared(tree: UCTTree) -> UCTTree:
    """Reuse the arrays of an old tree for a fresh search (only counters reset)."""
    tree.used[0] = 1
    tree.used[1] = 0
    tree.node_edge_count[0] = UNEXPANDED
    tree.node_visits[0] = 0
    return tree


def uct_playout_rate(size: int = 9, seconds: float = 2.0, komi: float = DEFAULT_KOMI) -> float:
    """UCT simulations per second from the empty board (one core), for the bench."""
    game = Game(size, komi)
    player = UCTPlayer(playouts=None, move_time=0.05, seed=1)
    player.select_move(game)  # compile and warm up
    player.set_limits(move_time=seconds)
    start = time.perf_counter()
    player.search(game)
    return player.last_simulations / (time.perf_counter() - start)
