"""A network with PUCT search as a player, on the search stage's batched MCTS (G = 1).

``evaluator`` may replace the network (any :class:`harness.search.Evaluator`,
e.g. the rules-based oracles), which is how the player is tested without
training anything.

The tree is kept between moves: the search follows the moves played since
its last search (ours and the opponent's) and reuses the subtree it reaches,
so no ``notify`` is needed. With ``randomize`` the move is chosen by
Cazenave's tournament rule (:func:`harness.players.choice.tournament_choice`)
so that repeated games between the same networks differ.

With ``value_model`` the search's value comes from that network and only the
prior from ``model`` (AlphaGo's supervised prior with a value network:
:class:`harness.search.combined.SplitEvaluator`).

A time budget (``set_limits(move_time=...)``) is met by sizing the next
search from the speed of the previous ones, since a search always runs to
its playout count.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from harness.game.endgame import sensible_moves
from harness.game.position import Game
from harness.players.base import RESIGN, SearchBudget
from harness.players.choice import no_losing_pass, tournament_choice
from harness.players.network import Network, load_network

MIN_TIMED_PLAYOUTS = 8


class MCTSPlayer(SearchBudget):
    def __init__(
        self,
        model: str | Path | Network | None = None,
        *,
        evaluator=None,
        playouts: int = 200,
        randomize: bool = False,
        leaves_per_step: int = 8,
        resign_threshold: float | None = None,
        encoder: str | None = None,
        root: str = "puct",
        gumbel_k: int = 16,
        fill_eyes: bool = False,
        score_utility: float = 0.0,
        value_model: str | Path | Network | None = None,
        config=None,
        seed: int | None = None,
        name: str | None = None,
    ):
        from harness.search import MCTSConfig

        if (model is None) == (evaluator is None):
            raise ValueError("MCTSPlayer needs a model or an evaluator (not both)")
        self.network = None
        if model is not None:
            self.network = model if isinstance(model, Network) else load_network(model)
        self.value_network = None
        if value_model is not None:
            if self.network is None:
                raise ValueError("MCTSPlayer takes a value_model only beside a model")
            self.value_network = (value_model if isinstance(value_model, Network)
                                  else load_network(value_model))
            if self.value_network.size != self.network.size:
                raise ValueError(f"{self.value_network.path}: the value network plays "
                                 f"{self.value_network.size}x{self.value_network.size}, "
                                 f"{self.network.path} {self.network.size}x{self.network.size}")
        self._evaluator = evaluator
        self.board_size = self.network.size if self.network else int(evaluator.size)
        self.config = config or MCTSConfig(
            playouts=playouts,
            leaves_per_game=leaves_per_step,
            resign_threshold=resign_threshold,
            resign_disabled_fraction=0.0,
            root=root,
            gumbel_k=gumbel_k,
            fill_eyes=fill_eyes,
        )
        self.playouts = self.config.playouts
        self.randomize = randomize
        self.score_utility = score_utility
        self.encoder = encoder
        source = self.network.path if self.network else type(evaluator).__name__
        value = f",value={self.value_network.path}" if self.value_network else ""
        self.name = name or f"mcts:{source}@{self.playouts}{value}"
        self.move_time: float | None = None
        self._rng = np.random.default_rng(seed)
        self._searches: dict[str, object] = {}
        self._rate: float | None = None  # playouts per second seen so far
        self.last_result = None

    def reset(self, size: int, komi: float, rules: str) -> None:
        for search in self._searches.values():
            search.reset()

    def _search(self, rules: str):
        from harness.search import BatchedSearch, EvaluatorConfig, NetworkEvaluator

        if self.network is None:
            encoder, evaluator = "", self._evaluator
        else:
            encoder = self.network.encoder_for(rules, self.encoder)
        if encoder not in self._searches:
            if self.network is not None:
                batch = max(8, self.config.leaves_per_game)
                # The score utility is part of the value: the value network's, when given.
                utility = 0.0 if self.value_network is not None else self.score_utility
                evaluator = NetworkEvaluator(
                    self.network.model, encoder, self.network.size,
                    EvaluatorConfig(batch_size=batch, score_utility=utility),
                )
                if self.value_network is not None:
                    from harness.search.combined import SplitEvaluator

                    value = NetworkEvaluator(
                        self.value_network.model, self.value_network.encoder_for(rules),
                        self.value_network.size,
                        EvaluatorConfig(batch_size=batch, score_utility=self.score_utility))
                    evaluator = SplitEvaluator(evaluator, value)
            self._searches[encoder] = BatchedSearch(
                evaluator, self.config, games=1, seed=int(self._rng.integers(2**31))
            )
        return self._searches[encoder]

    def searcher(self, game: Game):
        """The batched search this player uses for ``game``, tree kept between
        calls: analysis commands (``lz-analyze``) search it in small steps
        and read the root's children and principal variations."""
        if self.network is not None:
            self.network.check_game(game)
        return self._search(game.rules)

    def _budget(self) -> int:
        if self.move_time is None or self._rate is None:
            return self.playouts
        return max(MIN_TIMED_PLAYOUTS, min(self.playouts, int(self._rate * self.move_time)))

    def select_move(self, game: Game) -> int:
        from harness.search import should_resign

        if self.network is not None:
            self.network.check_game(game)
        search = self._search(game.rules)
        started = time.perf_counter()
        # A Gumbel search varies its move through its Gumbel noise (randomize),
        # a PUCT one through the tournament choice below.
        noise = self.randomize and self.config.gumbel
        result = search.search([game], playouts=self._budget(), add_noise=noise, full=True)[0]
        elapsed = time.perf_counter() - started
        if result.new_playouts > 0 and elapsed > 0:
            self._rate = result.new_playouts / elapsed
        self.last_result = result
        if result.visits.sum() == 0:
            return game.pass_move if game.rules != "nogo" else RESIGN
        if should_resign(result, self.config, enabled=True, move_number=len(game.moves)):
            return RESIGN
        randomized = self.randomize and not self.config.gumbel
        move = tournament_choice(result.visits, self._rng) if randomized else result.best_move
        if self.config.pass_rule == "free":  # "finished" already keeps losing passes out
            return no_losing_pass(game, int(move), result.visits, sensible_moves(game))
        return int(move)

    def close(self) -> None:
        self._searches.clear()
