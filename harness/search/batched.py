"""PUCT search over many games at once, one network call per step.

:class:`BatchedSearch` holds G search slots. Each step gathers up to K leaves
from every slot that is searching (compiled), evaluates them all in one
evaluator call, and expands and backs them up (compiled). Two ways to drive it:

- ``search(games)``: search a list of games to completion (players, GTP,
  tests; a single-game search is just G = 1);
- ``start(i, game)`` then ``step()`` until slot ``i`` appears among the
  finished results: self-play keeps every slot busy by starting the next
  move's search as soon as one finishes, so the batch never runs half empty.

Trees are reused between moves: ``advance(i, move)`` keeps the played move's
subtree, and ``start`` also follows moves played since the slot's last search
(the opponent's reply in a two-player match) when they lie inside the tree.

With ``config.overlap`` the slots form two groups, each with its own leaf
buffer, and ``step()`` pipelines them: each group's leaves are evaluated on a
worker thread of their own while the main thread lands the other group's
evaluation (expand, back up, report finished searches) and gathers its next
leaves. On a CPU the tree work then runs beside the network instead of
between its calls, and two one-thread network passes run side by side (give
the evaluator ``threads = 1``). Each tree is searched as it would be alone,
but the two groups reach the evaluator's shared cache and random symmetries
in whichever order the threads arrive, so overlapped self-play is not
bit-for-bit reproducible from its seed.

With ``config.host_threads`` above one, each group's gathering of leaves
(the descents, each leaf's position and legal moves) is spread over that
many threads, each on a contiguous share of the group's slots
(:mod:`harness.search.shares`).
That changes nothing but the host's time: the shares' leaves are packed in
slot order, so the evaluator sees the batch a single thread would build.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from harness.game import board as K
from harness.game.geometry import geometry
from harness.game.position import Game
from harness.search import tree as T
from harness.search.config import MCTSConfig
from harness.search.evaluator import Evaluator
from harness.search.gumbel import sample_noise
from harness.search.leaves import PASS_RULES, history_rows, root_moves
from harness.search.moves import SearchResult, choose_full_search, dirichlet_alpha
from harness.search.shares import HostThreads, Share, pack, split_group
from harness.search.step import (
    Leaves,
    conclude,
    finish,
    gather,
    new_leaves,
    new_slots,
    reached_target,
)


@dataclass
class _SlotInfo:
    """What the tree in a slot stands for, to decide whether it can be reused."""

    moves: list = field(default_factory=list)  # game.moves at the tree's root
    history_len: int = -1  # len(game.history) at the root (setup edits change it)
    hash: int = 0
    to_play: int = 0
    rules: str = ""
    komi: float = 0.0
    valid: bool = False
    full: bool = True
    searching: bool = False


def _params(config: MCTSConfig) -> np.ndarray:
    params = np.zeros(T.PARAM_COUNT, np.float64)
    params[T.C_PUCT] = config.c_puct
    params[T.C_BASE] = config.c_base
    params[T.FPU] = config.fpu_reduction
    params[T.FPU_ROOT] = config.root_fpu_reduction
    params[T.VIRTUAL_LOSS] = config.virtual_loss
    params[T.NOISE_EPSILON] = config.noise_epsilon
    params[T.PASS_RULE] = PASS_RULES[config.pass_rule]
    params[T.ROOT_RULE] = T.ROOT_GUMBEL if config.gumbel else T.ROOT_PUCT
    params[T.GUMBEL_K] = config.gumbel_k
    params[T.C_VISIT] = config.c_visit
    params[T.C_SCALE] = config.c_scale
    params[T.Q_MINMAX] = config.q_normalisation == "minmax"
    params[T.FILL_EYES] = config.fill_eyes
    return params


class BatchedSearch:
    """G concurrent PUCT (or Gumbel AlphaZero) searches sharing one evaluator."""

    def __init__(
        self,
        evaluator: Evaluator,
        config: MCTSConfig | None = None,
        games: int = 1,
        seed: int | None = None,
    ):
        self.evaluator = evaluator
        self.config = config or MCTSConfig()
        self.size = int(evaluator.size)
        self.history = int(evaluator.history)
        self.games = int(games)
        if self.games < 1:
            raise ValueError(f"games must be >= 1, got {games}")
        geo = geometry(self.size)
        self._nbr, self._zob = geo.neighbours, geo.zobrist
        self._geo = (geo.neighbours, geo.diagonals, geo.zobrist)
        self._work = K.new_work(self.size * self.size)
        self.points = self.size * self.size
        self.rng = np.random.default_rng(seed)
        self.params = _params(self.config)
        # Gumbel searches start afresh: their halving schedule counts one search's visits.
        self._reuse = self.config.reuse_tree and not self.config.gumbel
        self.per_game = self.config.leaves_per_game
        self._playouts_room = 0
        self.tree = T.new_tree(self.games, 1)
        self._spare = T.new_tree(1, 1)
        self._order = np.zeros(1, np.int32)
        # Slot groups: one, or two halves that take turns on the network; each
        # group's tree work in shares, one per host thread.
        halves = 2 if self.config.overlap and self.games >= 2 else 1
        bounds = [-(-h * self.games // halves) for h in range(halves + 1)]
        self._groups = [np.arange(self.games) * halves // self.games == h for h in range(halves)]
        self._shares = [
            split_group(first, stop, self.config.host_threads, self.games, self.per_game,
                        self.points)
            for first, stop in pairwise(bounds)
        ]
        self._host = HostThreads(self.config.host_threads)
        self._group_leaves: list[Leaves] = [
            new_leaves(int(group.sum()) * self.per_game, 2, self.history, self.points)
            for group in self._groups
        ]
        self._inflight: list[Future | None] = [None] * halves
        self._worker = ThreadPoolExecutor(halves, "search-eval") if halves > 1 else None
        self._ensure_room(self.config.max_playouts)
        self.slots = new_slots(self.games, self.points)
        self.roots = K.new_boards(self.games, self.size)
        self.root_rows = np.zeros((self.games, self.history, self.points), np.int8)
        self.scratch = K.new_boards(self.games * self.per_game, self.size)
        self._info = [_SlotInfo() for _ in range(self.games)]
        self._done: list[tuple[int, SearchResult]] = []
        self.evaluations = 0  # leaves sent to the evaluator
        self.steps = 0  # evaluator calls
        self.searches = 0  # searches completed

    # --- capacity ---------------------------------------------------------
    def _ensure_room(self, playouts: int) -> None:
        """Grow node arrays and path buffers so a search of ``playouts`` fits."""
        if playouts <= self._playouts_room:
            return
        self._playouts_room = playouts
        self.drain()  # no group may be in flight while its buffers are replaced
        capacity = self.config.max_nodes or T.node_capacity(playouts, self.points)
        if self.tree.move.shape[1] < capacity:
            self.tree = T.grow_tree(self.tree, capacity)
            self._spare = T.new_tree(1, capacity)
            self._order = np.zeros(capacity, np.int32)
        depth = playouts + 2  # a path adds at most one new node per visit
        for i, leaves in enumerate(self._group_leaves):
            if leaves.path.shape[1] < depth:
                count = leaves.game.shape[0]
                self._group_leaves[i] = new_leaves(count, depth, self.history, self.points)

    # --- slots --------------------------------------------------------------
    def reset(self, index: int | None = None) -> None:
        """Forget the tree of one slot (or all)."""
        for i in range(self.games) if index is None else (index,):
            T.clear(self.tree, i)
            self._info[i].valid = False

    def advance(self, index: int, move: int) -> None:
        """``move`` was played in slot ``index``'s game: keep its subtree."""
        info = self._info[index]
        if info.searching:
            raise RuntimeError(f"slot {index} is still searching")
        if not (self._reuse and info.valid):
            self.reset(index)
            return
        if K.check_move(self.roots, index, move, info.to_play, self._nbr, self._zob) != K.LEGAL:
            self.reset(index)
            return
        child = T.find_child(self.tree, index, T.ROOT, move)
        T.reroot(self.tree, index, child, self._spare, self._order)  # clears if nothing to keep
        K.play(self.roots, index, move, self._nbr, self._zob)
        info.moves = [*info.moves, (info.to_play, move)]
        info.history_len += 1
        info.hash = int(self.roots.hash[index])
        info.to_play = int(self.roots.meta[index, K.TO_PLAY])

    def _sync(self, index: int, game: Game) -> None:
        """Keep the slot's tree if it describes ``game`` (following any moves
        played since), otherwise clear it."""
        info = self._info[index]
        reusable = (
            self._reuse
            and info.valid
            and info.rules == game.rules
            and info.komi == game.komi
            and len(game.moves) >= len(info.moves)
            and len(game.history) - len(game.moves) == info.history_len - len(info.moves)
            and game.moves[: len(info.moves)] == info.moves
        )
        if reusable:
            for color, move in game.moves[len(info.moves) :]:
                if color != info.to_play:
                    reusable = False
                    break
                self.advance(index, move)
                if not info.valid:
                    break
        if not (reusable and info.valid and info.hash == game.position_hash
                and info.to_play == game.to_play):
            self.reset(index)

    def start(
        self,
        index: int,
        game: Game,
        playouts: int | None = None,
        add_noise: bool | None = None,
        full: bool | None = None,
    ) -> None:
        """Begin searching ``game`` in slot ``index``; ``step()`` reports the result.

        ``full`` None draws the playout-cap decision from the config; the
        budget defaults to ``playouts`` for full searches and ``fast_playouts``
        for fast ones; noise defaults to ``config.add_noise`` on full searches
        only (Dirichlet), or on every search under the Gumbel root, whose
        noise is how self-play explores. The game is read, never changed.
        """
        if game.size != self.size:
            raise ValueError(
                f"game is {game.size}x{game.size}, the search is {self.size}x{self.size}"
            )
        info = self._info[index]
        if info.searching:
            raise RuntimeError(f"slot {index} is already searching")
        if full is None:
            full = choose_full_search(self.rng, self.config)
        if playouts is None:
            playouts = self.config.playouts if full else (self.config.fast_playouts or 1)
        if add_noise is None:
            add_noise = self.config.add_noise and (full or self.config.gumbel)
        self._ensure_room(int(playouts))
        self._sync(index, game)

        history_rows(game, self.history, self.root_rows[index])
        info.moves = list(game.moves)
        info.history_len = len(game.history)
        info.hash = game.position_hash
        info.to_play = game.to_play
        info.rules = game.rules
        info.komi = game.komi
        info.valid = True
        info.full = bool(full)

        s = self.slots
        s.komi[index] = game.komi
        s.target[index] = int(playouts)
        s.new_playouts[index] = 0
        s.noise_on[index] = False
        legal = np.empty(self.points + 1, np.bool_)
        count = root_moves(game.boards, self.roots, index, game.komi, *self._geo, legal,
                           self._work, int(self.params[T.PASS_RULE]), self.config.fill_eyes)
        if not count or game.is_over:
            self._done.append((index, self._empty_result(legal, bool(full))))
            return
        if self.config.gumbel:
            s.noise[index] = 0.0
            if add_noise:
                sample_noise(self.rng, legal, s.noise[index])
        elif add_noise:
            moves = np.flatnonzero(legal)
            alpha = dirichlet_alpha(moves.size, self.config)
            s.noise[index] = 0.0
            s.noise[index, moves] = self.rng.dirichlet(np.full(moves.size, alpha))
            s.noise_on[index] = True
            if self.tree.first[index, T.ROOT] >= 0:
                epsilon = self.config.noise_epsilon
                T.mix_root_noise(self.tree, index, s.noise[index], epsilon, s.clean_prior[index])
        s.active[index] = True
        info.searching = True

    def _empty_result(self, legal: np.ndarray, full: bool) -> SearchResult:
        moves = self.points + 1
        prior = legal / max(legal.sum(), 1)
        return SearchResult(
            visits=np.zeros(moves, np.int32),
            q=np.full(moves, np.nan, np.float32),
            prior=prior.astype(np.float32),
            root_value=0.0,
            best_move=self.points,
            full=full,
        )

    def stop(self, index: int) -> SearchResult:
        """End slot ``index``'s search now and return what it has found (time
        controls: step until the clock runs out, then stop)."""
        if not self._info[index].searching:
            raise RuntimeError(f"slot {index} is not searching")
        self.drain()
        for k, (slot, result) in enumerate(self._done):
            if slot == index:  # it finished in the evaluation just landed
                del self._done[k]
                return result
        return self._finish_slot(index)

    def abandon(self) -> None:
        """Stop every search in progress without results (trees are cleared)."""
        self.drain()
        for g in np.flatnonzero(self.slots.active):
            self.slots.active[g] = False
            self._info[g].searching = False
            self.reset(int(g))
        self._done = []

    # --- stepping -----------------------------------------------------------
    @property
    def searching(self) -> int:
        """Searches still running or finished but not yet reported by ``step``."""
        return int(self.slots.active.sum()) + len(self._done)

    def step(self) -> list[tuple[int, SearchResult]]:
        """One batched evaluation per slot group; returns (slot, result) for
        searches that ended."""
        for group in range(len(self._groups)):
            self._land_inflight(group)
            n = self._gather(group)
            if n and self._worker is not None:
                self._inflight[group] = self._worker.submit(self._evaluate, group, n)
            else:
                self._land(group, n, self._evaluate(group, n) if n else None)
        self.steps += 1
        done, self._done = self._done, []
        return done

    def _gather(self, group: int) -> int:
        """Collect the group's leaves into its buffer, share by share on the
        host threads, packed in slot order; returns how many need the network."""
        if not self._group_active(group).any():
            return 0
        leaves, shares = self._group_leaves[group], self._shares[group]
        counts = self._host.map(lambda share: self._gather_share(leaves, share), shares)
        return pack(leaves, shares, counts)

    def _gather_share(self, leaves: Leaves, share: Share) -> int:
        """One share's leaves into its stretch of ``leaves`` (and of the
        scratch boards); returns how many. It may run beside the other
        shares' gathers."""
        active = self.slots.active & share.slots
        if not active.any():
            return 0
        stop = gather(
            self.tree, self.slots._replace(active=active), self.roots, self.root_rows,
            self.scratch, leaves, share.offset, share.offset + share.capacity,
            self.params, self.per_game, self._geo, share.work,
        )
        return stop - share.offset

    def _group_active(self, group: int) -> np.ndarray:
        """The searching slots of ``group`` (all of them when there is one group)."""
        active = self.slots.active
        return active if len(self._groups) == 1 else active & self._groups[group]

    def _evaluate(self, group: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The network's answer for the group's first ``n`` leaves. It reads
        only the group's leaf buffer, so it may run beside tree work on the
        other group's slots and beside the other group's evaluation."""
        leaves = self._group_leaves[group]
        policy, value = self.evaluator.evaluate(
            leaves.rows[:n], leaves.to_play[:n], leaves.legal[:n]
        )
        return np.ascontiguousarray(policy, np.float32), np.ascontiguousarray(value, np.float64)

    def _land(self, group: int, n: int, outputs: tuple[np.ndarray, np.ndarray] | None) -> None:
        """Expand and back up the group's evaluated leaves (if any), then queue
        the group's searches that reached their target (a step without leaves
        can finish searches too: terminal leaves are backed up while gathering)."""
        if n:
            # On the calling thread: expansion and backup cost a few
            # microseconds a leaf, less than handing half of them to another
            # thread (docs/results.md, issue #63 item 2).
            policy, value = outputs
            finish(self.tree, self.slots, self._group_leaves[group], 0, n, policy, value,
                   self.params)
            self.evaluations += n
        for g in reached_target(self.tree, self.slots, self._group_active(group)):
            self._done.append((int(g), self._finish_slot(int(g))))

    def _land_inflight(self, group: int) -> None:
        future = self._inflight[group]
        if future is not None:
            self._inflight[group] = None
            policy, value = future.result()
            self._land(group, policy.shape[0], (policy, value))

    def drain(self) -> None:
        """Land every evaluation in flight; the searches they finish wait in
        ``_done`` for the next ``step``."""
        for group in range(len(self._inflight)):
            self._land_inflight(group)

    def close(self) -> None:
        """Land what is in flight and stop the evaluation and host threads;
        later steps run on the calling thread alone."""
        self.drain()
        if self._worker is not None:
            self._worker.shutdown()
            self._worker = None
        self._host.close()

    def _finish_slot(self, g: int) -> SearchResult:
        moves = self.points + 1
        visits = np.empty(moves, np.int32)
        q = np.empty(moves, np.float64)
        prior = np.empty(moves, np.float32)
        improved = np.empty(moves, np.float64)
        move, root_value, gumbel = conclude(self.tree, self.slots, g, self.params,
                                            visits, q, prior, improved)
        info = self._info[g]
        info.searching = False
        self.searches += 1
        return SearchResult(
            visits=visits,
            q=q.astype(np.float32),
            prior=prior,
            root_value=float(root_value),
            best_move=int(move),
            full=info.full,
            new_playouts=int(self.slots.new_playouts[g]),
            improved_policy=improved.astype(np.float32) if gumbel else None,
        )

    def search(
        self,
        games: Sequence[Game],
        playouts: int | Sequence[int] | None = None,
        add_noise: bool | Sequence[bool] | None = None,
        full: bool | Sequence[bool] | None = None,
    ) -> list[SearchResult]:
        """Search every game (game ``i`` in slot ``i``) and return their results."""
        if len(games) > self.games:
            raise ValueError(f"{len(games)} games but only {self.games} search slots")

        def each(value, i):
            return value[i] if isinstance(value, (list, tuple, np.ndarray)) else value

        for i, game in enumerate(games):
            self.start(i, game, each(playouts, i), each(add_noise, i), each(full, i))
        results: list[SearchResult | None] = [None] * len(games)
        pending = len(games)
        while pending:
            for i, result in self.step():
                results[i] = result
                pending -= 1
        return results  # type: ignore[return-value]

