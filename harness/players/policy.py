"""The raw network policy as a player: no search, one forward pass per move.

This is how Cazenave's networks played on KGS (the best move of the policy),
and the cheapest way to compare architectures by strength. At temperature 0
the most probable legal move is played; above 0 the move is drawn from the
policy sharpened or flattened by the temperature, for varied games.

Either way the move is picked among :func:`~harness.players.choice.candidate_moves`:
with ``endgame`` (the default) the network never fills its own eyes nor hands
its strings over, and passes when nothing else is left; without it every
legal move is a candidate, as before 2026-11-29 (docs/players.md, "How raw
players end a game").
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.game.position import Game
from harness.players.choice import candidate_moves, fallback_moves, no_losing_pass
from harness.players.network import Network, load_network, softmax_choice


class PolicyPlayer:
    def __init__(
        self,
        model: str | Path | Network,
        *,
        temperature: float = 0.0,
        encoder: str | None = None,
        seed: int | None = None,
        name: str | None = None,
        endgame: bool = True,
    ):
        self.network = model if isinstance(model, Network) else load_network(model)
        self.board_size = self.network.size
        self.temperature = temperature
        self.encoder = encoder
        self.endgame = endgame
        self.name = name or f"policy:{self.network.path}"
        self._rng = np.random.default_rng(seed)
        self._evaluators: dict[str, object] = {}
        self.last_policy: np.ndarray | None = None

    def reset(self, size: int, komi: float, rules: str) -> None:
        pass

    def reseed(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def _evaluator(self, rules: str):
        from harness.search import EvaluatorConfig, NetworkEvaluator

        encoder = self.network.encoder_for(rules, self.encoder)
        if encoder not in self._evaluators:
            config = EvaluatorConfig(batch_size=1)
            self._evaluators[encoder] = NetworkEvaluator(
                self.network.model, encoder, self.network.size, config
            )
        return self._evaluators[encoder]

    def select_move(self, game: Game) -> int:
        from harness.search.leaves import history_rows

        self.network.check_game(game)
        evaluator = self._evaluator(game.rules)
        allowed = candidate_moves(game, self.endgame)
        if not allowed.any():
            return game.pass_move
        rows = history_rows(game, evaluator.history)[None]
        to_play = np.array([game.to_play], np.int8)
        policy, _ = evaluator.evaluate(rows, to_play, allowed[None])
        self.last_policy = policy[0]
        move = softmax_choice(policy[0], self.temperature, self._rng)
        return no_losing_pass(game, move, policy[0],
                              fallback_moves(game, self.endgame, allowed))

    def close(self) -> None:
        self._evaluators.clear()
