"""Batched self-play search on the device: mctx over the JAX rules, with the
Keras model's stateless call as the network.

On a GPU the host path spends most of self-play's time on the host's per-batch
tree work while the card waits (docs/results.md, "On an NVIDIA H200 with
JAX": 0.26 of the bare network). Here the rules (:mod:`harness.jaxgo.rules`),
the encoder (:mod:`harness.jaxgo.encode`), the search (DeepMind's ``mctx``)
and the network are one jitted function of the whole batch of games, so a
move of every game is one call and nothing crosses to the host between
simulations.

The search follows ``[mcts]`` where mctx can, and says where it cannot:

- ``root = "gumbel"``: ``mctx.gumbel_muzero_policy`` with ``gumbel_k``
  considered moves, ``c_visit`` and ``c_scale``. The harness's ``range``
  normalisation maps Q from [-1, 1] to [0, 1] before scaling; mctx without
  rescaling scales Q itself, which differs by a constant shift (no effect on
  any argmax or softmax) and a factor 2, so it gets half the ``c_scale``.
  ``minmax`` is mctx's own rescaling.
- ``root = "puct"``: ``mctx.muzero_policy`` with ``c_puct`` and ``c_base``
  (the same exploration formula; ``c_base <= 0`` is a constant ``c_puct``),
  the harness's first-play urgency in place of mctx's default Q transform
  (:func:`first_play_urgency`: raw Q in [-1, 1], an unvisited child worth
  the parent's value less ``fpu_reduction`` times the root of the visited
  prior mass; ``fpu_root_reduction`` at the root), and Dirichlet noise at
  one alpha for the batch (``noise_alpha``, or ``noise_alpha_total`` over
  the board's points and pass, where the host path divides by each
  position's legal moves). Inside the tree ties go to the first move,
  where the host path prefers the larger prior; the move played follows the
  host's rule (:func:`choose_moves`).
- Playout-cap randomisation draws one coin a move for the whole batch (mctx
  searches a batch with one simulation count), so every game still gets a
  full search on ``full_search_prob`` of its moves on average.
- A move the search may not play (:func:`harness.jaxgo.moves.search_moves`)
  gets no prior; if a PUCT descent still picks one below the root, the
  position counts as lost for the side that played it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import mctx
import numpy as np

from harness.jaxgo import DEVICE_ENCODERS, encode, rules
from harness.jaxgo.moves import search_moves
from harness.jaxgo.rules import GoState
from harness.search.config import EvaluatorConfig, MCTSConfig
from harness.search.evaluator import value_convention
from harness.search.moves import best_move

NO_PRIOR = -1e9  # the logit of a move the search may not play: finite, so softmax stays defined
CONSTANT_C_BASE = 1e12  # mctx's c_base that makes log((1 + N + c_base) / c_base) zero

Params = tuple[list, list]
Network = Callable[[Params, GoState], tuple[jax.Array, jax.Array]]

ENCODERS = {"agz17": encode.agz17}  # harness.jaxgo.DEVICE_ENCODERS's functions
if set(ENCODERS) != set(DEVICE_ENCODERS):  # the config checks the names, this module runs them
    raise ImportError(f"device encoders {sorted(ENCODERS)} differ from {DEVICE_ENCODERS}")
_SEARCHES: dict = {}  # device_search's, by architecture and settings


def model_params(model) -> Params:
    """The model's current weights as the stateless call takes them."""
    return ([v.value for v in model.trainable_variables],
            [v.value for v in model.non_trainable_variables])


def network(model, encoder: str = "agz17", value_head: str = "value",
            policy_temperature: float = 1.0, convention: str | None = None) -> Network:
    """``apply(params, state) -> (logits (B, P + 1), value (B,) in [-1, 1])``
    for the side to move, as the harness's ``NetworkEvaluator`` reads the
    model (its ``policy_temperature`` divides the logits), but always in the
    board's own orientation: ``[evaluator] symmetry`` is a host-path setting."""
    if encoder not in ENCODERS:
        raise ValueError(f"the device path encodes {sorted(ENCODERS)} only, not {encoder!r}")
    encode_planes = ENCODERS[encoder]
    names = list(getattr(model, "output_names", None) or [])
    sigmoid = (convention or value_convention(model, value_head)) == "sigmoid"

    def pick(out, name):
        return out[name] if isinstance(out, dict) else out[names.index(name)]

    def apply(params: Params, state: GoState):
        out, _ = model.stateless_call(params[0], params[1], encode_planes(state), training=False)
        logits = pick(out, "policy").astype(jnp.float32) / policy_temperature
        value = pick(out, value_head).astype(jnp.float32).reshape(-1)
        if sigmoid:
            value = 2.0 * value - 1.0
        return logits, jnp.clip(jnp.nan_to_num(value), -1.0, 1.0)

    return apply


def first_play_urgency(tree, node_index, *, reduction: float, root_reduction: float):
    """The children's Q as the host's PUCT reads them (``search.tree.select_child``):
    a visited child's mean value, an unvisited one the node's own value less
    ``reduction`` x sqrt(prior mass of the visited children); no rescaling."""
    visits = tree.children_visits[node_index]
    prior = jax.nn.softmax(tree.children_prior_logits[node_index])
    mass = jnp.sum(jnp.where(visits > 0, prior, 0.0))
    cut = jnp.where(node_index == tree.ROOT_INDEX, root_reduction, reduction)
    urgency = tree.node_values[node_index] - cut * jnp.sqrt(mass)
    return jnp.where(visits > 0, tree.qvalues(node_index), urgency)


def device_search(model, encoder: str, evaluator: EvaluatorConfig,
                  mcts: MCTSConfig) -> DeviceSearch:
    """The search for ``model``, shared by every model of its architecture.

    ``jax.jit`` compiles per search object; an RL run hands self-play a new
    model object each generation, and compiling the whole search again (tens
    of seconds) would cost more than a small generation's games. The weights
    are arguments of the compiled call, so one search serves every model
    whose layers are the same."""
    key = (model.to_json(), encoder, evaluator.value_head, evaluator.policy_temperature,
           evaluator.value_convention, mcts)
    if key not in _SEARCHES:
        _SEARCHES[key] = DeviceSearch(
            network(model, encoder, evaluator.value_head, evaluator.policy_temperature,
                    evaluator.value_convention), mcts)
    return _SEARCHES[key]


class RootResult(NamedTuple):
    """What a search of a batch says at its roots, all (B, P + 1) but the two (B,)."""

    target: jax.Array  # the training target: Gumbel's improved policy, or the visit shares
    value: jax.Array  # (B,) the root's value for the side to move
    move: jax.Array  # (B,) Gumbel's own choice (the halving's winner)
    visits: jax.Array
    q: jax.Array  # children's mean value, NaN unvisited (ties of the most visited)
    prior: jax.Array


@dataclass(frozen=True)
class DeviceSearch:
    """One move of every game of a batch, as a jitted function of
    ``(params, state, key, simulations)``; ``simulations`` is static."""

    apply: Network
    mcts: MCTSConfig

    def allowed(self, state: GoState) -> jax.Array:
        return search_moves(state, self.mcts.pass_rule, self.mcts.fill_eyes)

    def _evaluate(self, params: Params, state: GoState):
        logits, value = self.apply(params, state)
        allowed = self.allowed(state)
        return jnp.where(allowed, logits, NO_PRIOR), value, allowed

    def _recurrent(self, params: Params, key, action, state: GoState):
        del key
        played_allowed = jnp.take_along_axis(self.allowed(state), action[:, None], axis=1)[:, 0]
        after = rules.step(state, action)
        logits, value, _ = self._evaluate(params, after)
        ended = after.over & ~state.over
        # The mover's reward: the game's result for it when this move ended the
        # game (the side to move after it is the loser's opposite), a loss for
        # a move it may not play, else nothing until the end.
        reward = jnp.where(ended, -rules.outcome(after), 0.0)
        reward = jnp.where(played_allowed | state.over, reward, -1.0)
        stop = after.over | ~played_allowed
        output = mctx.RecurrentFnOutput(
            reward=reward.astype(jnp.float32),
            discount=jnp.where(stop, 0.0, -1.0).astype(jnp.float32),
            prior_logits=logits,
            value=jnp.where(stop, 0.0, value),
        )
        return output, after

    @partial(jax.jit, static_argnums=(0, 4))
    def search(self, params: Params, state: GoState, key, simulations: int) -> RootResult:
        logits, value, allowed = self._evaluate(params, state)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=state)
        m = self.mcts
        if m.root == "gumbel":
            rescale = m.q_normalisation == "minmax"
            qtransform = partial(mctx.qtransform_completed_by_mix_value,
                                 value_scale=m.c_scale if rescale else m.c_scale / 2.0,
                                 maxvisit_init=m.c_visit, rescale_values=rescale)
            out = mctx.gumbel_muzero_policy(
                params, key, root, self._recurrent, num_simulations=simulations,
                invalid_actions=~allowed, max_num_considered_actions=m.gumbel_k,
                gumbel_scale=1.0 if m.add_noise else 0.0, qtransform=qtransform)
        else:
            points = allowed.shape[1]
            alpha = m.noise_alpha if m.noise_alpha is not None else m.noise_alpha_total / points
            qtransform = partial(
                first_play_urgency, reduction=m.fpu_reduction,
                root_reduction=(m.fpu_reduction if m.fpu_root_reduction is None
                                else m.fpu_root_reduction))
            out = mctx.muzero_policy(
                params, key, root, self._recurrent, num_simulations=simulations,
                invalid_actions=~allowed, qtransform=qtransform, pb_c_init=m.c_puct,
                pb_c_base=m.c_base if m.c_base > 0 else CONSTANT_C_BASE,
                dirichlet_fraction=m.noise_epsilon if m.add_noise else 0.0,
                dirichlet_alpha=alpha, temperature=0.0)
        summary = out.search_tree.summary()
        prior = jax.nn.softmax(logits)
        visits = summary.visit_counts.astype(jnp.float32)
        return RootResult(out.action_weights, summary.value, out.action, visits,
                          jnp.where(visits > 0, summary.qvalues, jnp.nan), prior)


def choose_moves(root: RootResult, moves_played: np.ndarray, mcts: MCTSConfig,
                 rng: np.random.Generator) -> np.ndarray:
    """The moves to play (``root``'s fields as numpy arrays): Gumbel's own
    choice; under PUCT the host path's rule, the most visited move (ties to
    the higher value, then the higher prior) or, for each game's first
    ``temperature_moves`` moves, a draw from the visits raised to
    1/temperature."""
    if mcts.root == "gumbel":
        return np.asarray(root.move)
    moves = np.empty(len(moves_played), np.int64)
    for g in range(len(moves_played)):
        if moves_played[g] < mcts.temperature_moves:
            p = np.power(root.visits[g].astype(np.float64), 1.0 / mcts.temperature)
            moves[g] = rng.choice(len(p), p=p / p.sum())
        else:
            moves[g] = best_move(root.visits[g], root.q[g], root.prior[g])
    return moves
