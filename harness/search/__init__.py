"""Search: batched PUCT (or Gumbel) MCTS over many games and the evaluators it asks.

Public API::

    from harness.search import (
        MCTSConfig, EvaluatorConfig,          # settings (dataclasses)
        Evaluator, NetworkEvaluator,          # priors + values for leaf batches
        BatchedSearch, SearchResult,          # G concurrent searches
        select_move, temperature_for,         # move choice
        resign_enabled, should_resign,        # resignation rule
        choose_full_search,                   # playout-cap randomisation
    )

    search = BatchedSearch(NetworkEvaluator(model, "agz17", 9), MCTSConfig(playouts=200), games=64)
    results = search.search(games)            # one SearchResult per game
    move = select_move(results[0], temperature=0.0)
    game.play(move); search.advance(0, move)  # keep the subtree

    search.start(i, game); search.step() -> [(slot, SearchResult), ...]; search.stop(i)
                                              # slot by slot (self-play, time controls)

``MCTSConfig(root="gumbel")`` switches the search to Gumbel AlphaZero
(``harness.search.gumbel``): the result's ``best_move`` is the sequential-halving
winner and ``target()`` the completed-Q improved policy.

``harness.search.game_driver.play_games`` drives self-play with every slot busy;
``harness.search.oracle.OracleEvaluator`` stands in for a network in tests.
"""

from harness.search.batched import BatchedSearch
from harness.search.config import EvaluatorConfig, MCTSConfig
from harness.search.evaluator import Evaluator, NetworkEvaluator, value_convention
from harness.search.moves import (
    SearchResult,
    best_move,
    choose_full_search,
    dirichlet_alpha,
    resign_enabled,
    select_move,
    should_resign,
    temperature_for,
)

__all__ = [
    "BatchedSearch",
    "Evaluator",
    "EvaluatorConfig",
    "MCTSConfig",
    "NetworkEvaluator",
    "SearchResult",
    "best_move",
    "choose_full_search",
    "dirichlet_alpha",
    "resign_enabled",
    "select_move",
    "should_resign",
    "temperature_for",
    "value_convention",
]
