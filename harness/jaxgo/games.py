"""Self-play games searched on the device, recorded as the host path records them.

All games of a batch start together and move together: one
:meth:`DeviceSearch.search` call a move for the whole batch, the moves then
played on the device's state and mirrored into the harness's own
:class:`~harness.game.position.Game` per game on the host. The mirror costs
one compiled ``play`` per move and gives each record the harness's own game
(its SGF, result and training positions), so the replay buffer, learner and
stats read device games exactly as they read the host path's. Finished games
wait for the batch's last (their slots keep being searched, as a GPU batch
has a fixed shape), so games of very different lengths waste device time.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from harness.game.position import DEFAULT_KOMI, Game, move_cap
from harness.game.result import GameResult
from harness.jaxgo import rules
from harness.jaxgo.search import DeviceSearch, Params, choose_moves
from harness.search.game_driver import SelfPlayGame


def play_batch(
    search: DeviceSearch,
    params: Params,
    count: int,
    size: int,
    *,
    komi: float = DEFAULT_KOMI,
    rules_name: str = "superko",
    max_moves: int | None = None,
    seed: int = 0,
    on_move: Callable[[int], None] | None = None,
) -> tuple[list[SelfPlayGame], int]:
    """Play ``count`` games at once to their ends; (records, network
    evaluations: one a game per simulation and one at each root).

    ``on_move(moves_played)`` sees the batch after each move (progress)."""
    mcts = search.mcts
    limit = move_cap(size, max_moves)
    rng = np.random.default_rng(seed)
    key = jax.random.PRNGKey(seed)
    state = rules.init(count, size, rules_name, komi, limit)
    records = [SelfPlayGame(Game(size, komi, rules_name), GameResult(0, "unknown"), number=i)
               for i in range(count)]
    evaluations = 0
    over = np.zeros(count, bool)
    while not over.all():
        full = mcts.fast_playouts is None or rng.random() < mcts.full_search_prob
        simulations = mcts.playouts if full else mcts.fast_playouts
        key, subkey = jax.random.split(key)
        root = jax.tree.map(np.asarray, search.search(params, state, subkey, simulations))
        evaluations += count * (simulations + 1)
        played = np.array([len(r.game.moves) for r in records])
        moves = choose_moves(root, played, mcts, rng)
        moves = np.where(over, 0, moves)
        for g in np.flatnonzero(~over):
            record = records[g]
            record.policies.append(root.target[g].astype(np.float32) if full else None)
            record.root_values.append(float(root.value[g]))
            record.full.append(bool(full))
            record.game.play(int(moves[g]))
        state = rules.step(state, jnp.asarray(moves, jnp.int32))
        now_over = np.asarray(state.over)
        for g in np.flatnonzero(now_over & ~over):
            record = records[g]
            record.truncated = not record.game.is_over
            record.result = record.game.result()
        over = now_over
        if on_move is not None:
            on_move(int(played.max()) + 1)
    return records, evaluations
