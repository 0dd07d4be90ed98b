"""Live analysis of one position: the player's own tree search run in small
steps, read out as :class:`~harness.gtp.analysis.Snapshot` objects.

A GUI asks for an ``info`` line every interval until it sends another
command, so the search must grow in steps that can stop at any time. Each
step asks the player's :class:`~harness.search.BatchedSearch` for a few
more playouts on the same position; the search keeps its tree between calls
(PUCT root), so the steps add up to one long search. Under the Gumbel root a
search always starts afresh, so each step re-searches with the larger budget.

Ownership and score come straight from the network's ``ownership`` and
``score`` heads (side to move's view) when it has them: the search itself
backs up only the value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.game.position import Game
from harness.gtp.analysis import (
    PV_LENGTH,
    AnalyzeRequest,
    MoveInfo,
    Snapshot,
    candidates,
    winrate_lcb,
)


@dataclass(frozen=True)
class AnalysisConfig:
    """How an analysis grows: playouts per step, and a ceiling that bounds the
    tree's memory (its capacity grows with the playouts)."""

    step_playouts: int = 16
    max_playouts: int = 5000


def game_for_player(game: Game) -> Game:
    """The game as a player may see it: a passed-out game has its pass count
    reset so that the player searches on instead of treating it as over
    (controllers continue such games for dead-stone cleanup, and GUIs
    analyse them)."""
    if game.rules != "nogo" and game.passes >= 2:
        from harness.game import board as K

        twin = game.copy()
        twin.boards.meta[0, K.PASSES] = 0
        return twin
    return game


def can_analyze(player) -> bool:
    """Whether ``player`` has a tree search the analysis commands can read."""
    return callable(getattr(player, "searcher", None))


def principal_variation(tree, slot: int, move: int, length: int = PV_LENGTH) -> tuple[int, ...]:
    """``move`` then, from its node down, the most visited child at each level
    (ties to the lower index, the higher prior), while visited."""
    from harness.search import tree as T

    pv = [int(move)]
    node = int(T.find_child(tree, slot, T.ROOT, move))
    while node >= 0 and len(pv) < length:
        first = int(tree.first[slot, node])
        if first < 0:
            break
        children = slice(first, first + int(tree.count[slot, node]))
        visits = tree.visits[slot, children]
        if visits.size == 0 or visits.max() <= 0:
            break
        best = first + int(np.argmax(visits))
        pv.append(int(tree.move[slot, best]))
        node = best
    return tuple(pv)


class NetworkHeads:
    """The network's ``ownership`` and ``score`` outputs for single positions,
    when the network has those heads (``available`` is empty otherwise)."""

    def __init__(self, player, rules: str):
        network = getattr(player, "network", None)
        names = list(getattr(getattr(network, "model", None), "output_names", None) or [])
        self.available = {h for h in ("ownership", "score") if h in names}
        self._network = network
        self._encoder = None
        if self.available:
            from harness.features import get_encoder

            name = network.encoder_for(rules, getattr(player, "encoder", None))
            self._encoder = get_encoder(name)

    def __call__(self, games: list[Game]) -> dict[str, np.ndarray]:
        """Head outputs for each game (side to move's view): ``ownership``
        (N, P) in [-1, 1] and ``score`` (N,) in points."""
        if not self.available or not games:
            return {}
        planes = np.stack([self._encoder.encode_game(g) for g in games]).astype(np.float32)
        out = self._network.model(planes, training=False)
        return {h: np.asarray(out[h]).reshape(len(games), -1) for h in self.available}


class Analyzer:
    """A growing search of ``game`` for the side ``color`` (default: to move)."""

    def __init__(
        self, player, game: Game, color: int | None = None, config: AnalysisConfig | None = None
    ):
        self.config = config or AnalysisConfig()
        self.game = game_for_player(game).copy()
        if color is not None and color != self.game.to_play:
            self.game.to_play = color
        self.search = player.searcher(self.game)
        self.heads = NetworkHeads(player, self.game.rules)
        self.playouts = 0
        self.result = None
        self._root_heads: dict[str, np.ndarray] | None = None
        self._child_scores: dict[int, float] = {}

    @property
    def exhausted(self) -> bool:
        return self.playouts >= self.config.max_playouts

    def grow(self) -> None:
        """Search ``step_playouts`` more (up to the ceiling)."""
        if self.exhausted and self.result is not None:
            return
        self.playouts = min(self.playouts + self.config.step_playouts, self.config.max_playouts)
        self.result = self.search.search(
            [self.game], playouts=self.playouts, add_noise=False, full=True
        )[0]

    def snapshot(self, request: AnalyzeRequest, *, scores: bool = False) -> Snapshot:
        """The candidates so far (``grow`` first); ``scores`` adds each move's
        score lead from the score head, when there is one."""
        if self.result is None:
            self.grow()
        r = self.result
        rows = candidates(
            r.visits, r.q, r.prior, r.root_value, int(r.best_move),
            minmoves=request.minmoves, maxmoves=request.maxmoves,
        )
        leads = self._scores([m for m, *_ in rows]) if scores else {}
        moves = tuple(
            MoveInfo(
                move=m, visits=n, winrate=w, prior=p, lcb=winrate_lcb(w, n), order=k,
                pv=principal_variation(self.search.tree, 0, m), score_lead=leads.get(m),
            )
            for k, (m, n, w, p) in enumerate(rows)
        )
        return Snapshot(self.game.size, moves, self.ownership())

    def ownership(self) -> np.ndarray | None:
        """Predicted final owner of every point (+1 the side to move's), or None."""
        heads = self._root()
        return heads["ownership"][0] if "ownership" in heads else None

    def _root(self) -> dict[str, np.ndarray]:
        if self._root_heads is None:
            self._root_heads = self.heads([self.game])
        return self._root_heads

    def _scores(self, moves: list[int]) -> dict[int, float]:
        """Score lead after each move for the side that plays it: the score
        head of the position after the move, negated (it speaks for the
        opponent). Cached: a raw network output does not change with visits."""
        if "score" not in self.heads.available:
            return {}
        fresh = [m for m in moves if m not in self._child_scores]
        children = []
        for m in fresh:
            child = self.game.copy()
            child.play(m)
            children.append(child)
        if children:
            scores = self.heads(children)["score"][:, 0]
            for m, s in zip(fresh, scores, strict=True):
                self._child_scores[m] = -float(s)
        return {m: self._child_scores[m] for m in moves}
