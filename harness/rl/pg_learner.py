"""REINFORCE on a step's games: the loss, its targets and the network that learns.

For the learner's move ``a`` at position ``s`` with outcome ``z`` (+1 won, -1
lost, 0 drawn, for the side that moved) and baseline ``b``, the policy's loss
is, over the candidate moves only (the moves it could have picked),

    -(z - b) log pi(a | s)  +  beta * sum_m pi0(m | s) (-log pi(m | s))  -  eta * H(pi(. | s))

so a won game raises the probability of the moves played and a lost one
lowers it (Williams 1992; AlphaGo's RL policy), ``beta`` keeps the policy
near the supervised start network ``pi0`` (the KL's gradient: its constant
term is left out) and ``eta`` holds the entropy up. The value head learns
the outcome with the supervised loss (mse or bce), so ``baseline = "value"``
follows the games. All of it goes through ``model.train_on_batch`` with a
loss written in ``keras.ops``, so it trains on every Keras backend, and the
loss is registered, so a checkpoint restores compiled with its optimizer
state like the AlphaZero learner's.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import keras
import numpy as np

from harness.rl.config import RLConfig
from harness.rl.learner import LearnerBase, model_heads, resumed_model, start_model
from harness.train import with_family_defaults

NEG = -1e9  # a logit that no candidate can lose to


@keras.saving.register_keras_serializable(package="harness")
class PolicyGradientLoss(keras.losses.Loss):
    """The policy's loss above, on targets packed by :func:`pack_targets`:
    ``[(z - b) * onehot(a) | candidates | beta * pi0 | eta]`` along the last axis."""

    def __init__(self, name: str = "policy_gradient", reduction: str = "sum_over_batch_size",
                 dtype=None):
        super().__init__(name=name, reduction=reduction, dtype=dtype)

    def call(self, y_true, y_pred):
        ops = keras.ops
        logits = ops.cast(y_pred, "float32")
        y_true = ops.cast(y_true, "float32")
        moves = logits.shape[-1]
        weighted = y_true[:, :moves]
        allowed = y_true[:, moves:2 * moves] > 0.5
        anchor = y_true[:, 2 * moves:3 * moves]
        eta = y_true[:, 3 * moves]
        logp = ops.log_softmax(ops.where(allowed, logits, NEG), axis=-1)
        logp = ops.where(allowed, logp, 0.0)
        probs = ops.exp(logp) * ops.cast(allowed, "float32")
        entropy = -ops.sum(probs * logp, axis=-1)
        return -ops.sum(weighted * logp, axis=-1) - ops.sum(anchor * logp, axis=-1) - eta * entropy

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction}


def pack_targets(move: np.ndarray, advantage: np.ndarray, candidates: np.ndarray,
                 start_policy: np.ndarray | None, beta: float, eta: float) -> np.ndarray:
    """The policy head's targets for :class:`PolicyGradientLoss` (M, 3 (P + 1) + 1)."""
    m, moves = candidates.shape
    out = np.zeros((m, 3 * moves + 1), np.float32)
    out[np.arange(m), move] = advantage
    out[:, moves:2 * moves] = candidates
    if start_policy is not None and beta > 0:
        out[:, 2 * moves:3 * moves] = beta * start_policy
    out[:, 3 * moves] = eta
    return out


def value_targets(outcome: np.ndarray, value_loss: str) -> np.ndarray:
    """Outcomes in [-1, 1] as the value head's targets: as they are for a tanh
    head (mse), as win probabilities for a sigmoid one (bce)."""
    z = np.asarray(outcome, np.float32).reshape(-1, 1)
    return (z + 1.0) / 2.0 if value_loss == "bce" else z


def masked_entropy_kl(policy: np.ndarray, start: np.ndarray | None) -> tuple[float, float]:
    """Mean entropy of ``policy`` and mean KL(start || policy), in nats, over rows."""
    logp = np.log(np.maximum(policy, 1e-12))
    entropy = float(-(policy * logp).sum(axis=1).mean()) if len(policy) else float("nan")
    if start is None or not len(policy):
        return entropy, float("nan")
    kl = (start * (np.log(np.maximum(start, 1e-12)) - logp)).sum(axis=1)
    return entropy, float(kl.mean())


def compile_learner(model, config: RLConfig) -> None:
    """The policy-gradient loss on the policy head, the outcome's on the value
    head (``[train] loss_weights`` value, default 1), nothing on the others,
    and ``[train]``'s optimizer at a rate scheduled over the run's steps."""
    from harness.train import apply_jit_compile, keras_schedule, make_optimizer, model_value_loss

    t = with_family_defaults(config.train, model.name)
    value = (keras.losses.BinaryCrossentropy() if model_value_loss(model) == "bce"
             else keras.losses.MeanSquaredError())
    losses = {"policy": PolicyGradientLoss(), "value": value}
    weights = {"policy": 1.0, "value": float(t.loss_weights.get("value", 1.0))}
    for head in model_heads(model):
        if head not in losses:
            losses[head] = keras.losses.MeanSquaredError()
            weights[head] = 0.0
    rate = keras_schedule(t.schedule(config.pg.updates, config.generations))
    model.compile(optimizer=make_optimizer(t, rate), loss=losses, loss_weights=weights,
                  jit_compile="auto")
    apply_jit_compile(model, t)


def update_count(positions: int, pg) -> int:
    """Optimizer steps for a step of ``positions`` learner moves: ``[pg]
    updates``, or more where a share would exceed ``max_positions``."""
    if pg.max_positions:
        return max(pg.updates, -(-positions // pg.max_positions))
    return pg.updates


class PolicyGradientLearner(LearnerBase):
    """The network that learns, with the interface the run's loop shares with
    :class:`harness.rl.learner.Learner` (``model``, ``value_loss``, ``save``,
    ``averaged``, ``samples``)."""

    def __init__(self, name: str, model, config: RLConfig):
        super().__init__(name, model, config)
        self.average = None  # no moving average: the raw weights play

    @classmethod
    def fresh(cls, name: str, config: RLConfig) -> PolicyGradientLearner:
        """The start network: ``init``'s checkpoint, or a fresh zoo network."""
        model = start_model(config, config.model, config.init)
        compile_learner(model, config)
        model.optimizer.build(model.trainable_variables)
        return cls(name, model, config)

    @classmethod
    def load(cls, name: str, config: RLConfig, path: Path) -> PolicyGradientLearner:
        """The learner of a checkpoint this class saved, optimizer state included."""
        learner = cls(name, resumed_model(config, path), config)
        learner.checkpoint = Path(path)
        return learner

    def train(self, games, advantage: np.ndarray, start_policy: np.ndarray | None,
              beta: float, eta: float, rng: np.random.Generator) -> dict[str, float]:
        """:func:`update_count` optimizer steps on the learner's moves of
        ``games`` (a :class:`harness.rl.pg_games.StepGames`), each on a random
        share of them; mean losses."""
        from harness.features import get_encoder

        encoder = get_encoder(self.config.encoder)
        self.samples = 0
        m = len(games.move)
        if m == 0:
            return {}
        policy = pack_targets(games.move, advantage, games.candidates, start_policy, beta, eta)
        value = value_targets(games.outcome, self.value_loss)
        order = rng.permutation(m)
        sums: dict[str, float] = {}
        shares = np.array_split(order, min(m, update_count(m, self.config.pg)))
        for rows in shares:
            rows = np.sort(rows)
            x = encoder.encode(games.history[rows], games.to_play[rows], self.config.board_size)
            targets = {"policy": policy[rows], "value": value[rows]}
            for head in self.heads:
                if head not in targets:
                    shape = tuple(self.model.get_layer(head).output.shape[1:])
                    targets[head] = np.zeros((len(rows), *shape), np.float32)
            logs = self.model.train_on_batch(x, targets, return_dict=True)
            self.samples += len(rows)
            for key, val in logs.items():
                sums[key] = sums.get(key, 0.0) + float(val)
        return {k: v / len(shares) for k, v in sums.items()}

    @contextlib.contextmanager
    def averaged(self):
        yield self.model

    def save(self, path: Path, raw: Path | None = None) -> Path:
        from harness.nets import save_model

        self.checkpoint = save_model(self.model, path)
        return self.checkpoint
