"""The moves a search may consider, on the device.

The rules' legal moves (:func:`harness.jaxgo.rules.legal_mask`) limited the
way the harness's own search limits them (``search.leaves.restrict_moves``):
no move into the side to move's own true eye unless ``fill_eyes``, and under
the ``finished`` pass rule no pass while a point other than an own eye is
playable, unless the opponent has just passed and passing now wins. Without
these limits self-play passes whenever it thinks it is ahead and fills its
own eyes; both turn games and value targets into noise (docs/results.md,
"Why the losses to GNU Go end with every stone dead"). NoGo is left alone:
its eyes are the game and it has no pass.
"""

from __future__ import annotations

import jax.numpy as jnp

from harness.game import board as K
from harness.game.geometry import BLACK
from harness.jaxgo import rules
from harness.jaxgo.rules import GoState
from harness.search.leaves import PASS_RULES

__all__ = ["PASS_RULES", "mover_margin", "search_moves"]


def mover_margin(state: GoState):
    """float32 (B,): the area score with komi from the side to move's view."""
    margin = rules.score(state)
    return jnp.where(state.to_play == BLACK, margin, -margin)


def search_moves(state: GoState, pass_rule: str = "finished", fill_eyes: bool = False):
    """bool (B, P + 1): the moves a search may play, pass last.

    ``pass_rule`` and ``fill_eyes`` are ``[mcts]``'s (static: they choose
    what is traced)."""
    if pass_rule not in PASS_RULES:
        raise ValueError(f"pass_rule must be one of {tuple(PASS_RULES)}, got {pass_rule!r}")
    legal = rules.legal_mask(state)
    points, passing = legal[:, :-1], legal[:, -1]
    playable = points & ~rules.own_eyes(state)
    if not fill_eyes:
        points = playable
    if pass_rule == "finished":
        nothing_else = ~playable.any(axis=1)
        winning_end = (state.passes == 1) & (mover_margin(state) > 0)
        passing = passing & (nothing_else | winning_end)
    limited = jnp.concatenate([points, passing[:, None]], axis=1)
    return jnp.where((state.rule == K.NOGO)[:, None], legal, limited)
