"""The device search against today's host search, position by position.

Item 3 of issue #63: with one network and no noise the two searches must
choose the same moves (or differ only in stated tie-breaks). The host search
plays games; the device search is asked at every position they reached, with
the same settings, and the moves and training targets are compared.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import jax
import numpy as np

from harness.game.position import Game
from harness.jaxgo import rules
from harness.jaxgo.search import DeviceSearch, choose_moves, model_params, network
from harness.search import BatchedSearch, EvaluatorConfig, NetworkEvaluator
from harness.search.config import MCTSConfig
from harness.search.game_driver import play_games


@dataclass(frozen=True)
class SearchAgreement:
    positions: int
    same_moves: int
    target_l1_max: float  # largest L1 distance between the two training targets
    target_l1_median: float


def search_agreement(model, mcts: MCTSConfig, size: int, *, games: int, max_moves: int,
                     komi: float, seed: int) -> SearchAgreement:
    """``games`` host self-play games of at most ``max_moves`` moves, then the
    device search at each of their positions. Noise is switched off and the
    tree is not reused (each search starts fresh, as the device's does)."""
    mcts = replace(mcts, add_noise=False, reuse_tree=False, fast_playouts=None,
                   temperature_moves=0)
    evaluator = NetworkEvaluator(model, "agz17", size,
                                 EvaluatorConfig(batch_size=16 * games, symmetry="none"),
                                 inference="keras")
    played = play_games(BatchedSearch(evaluator, mcts, games=games, seed=seed), games,
                        komi=komi, seed=seed, max_moves=max_moves)
    search, params = DeviceSearch(network(model), mcts), model_params(model)
    same, distances = 0, []
    for record in played:
        game = Game(size, komi)
        for (_, move), target in zip(record.game.moves, record.policies, strict=True):
            result = jax.tree.map(np.asarray, search.search(
                params, rules.from_games([game]), jax.random.PRNGKey(seed), mcts.playouts))
            same += int(choose_moves(result, np.array([len(game.moves)]), mcts, None)[0]) == move
            distances.append(float(np.abs(result.target[0] - target).sum()))
            game.play(move)
    return SearchAgreement(len(distances), same, max(distances), float(np.median(distances)))
