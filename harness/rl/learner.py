"""One network being trained on self-play windows, generation after generation.

The optimizer and losses are the supervised trainer's
(:func:`harness.train.trainer.compile_model`), from the run's ``[train]``
optimizer settings (the same :class:`~harness.train.config.OptimizerSettings`
a supervised run has), so the two stages cannot train differently. A
learner's checkpoint keeps the optimizer state, so momentum and the step
counter carry across generations and across a resumed run.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from harness.nets.names import HEADS
from harness.rl.anchor import anchor_beta, anchored_policy
from harness.rl.averaging import WeightAverage
from harness.rl.config import RLConfig
from harness.rl.mixing import SupervisedMix, concat_batches, mixed_rows
from harness.rl.samples import Sampler, window_columns
from harness.rl.warmup import value_head_only
from harness.train import (
    derive_seed,
    optimizer_step,
    predict_batch,
    to_head_targets,
    with_family_defaults,
)

NOGO_PLUS_WEIGHTS = {"ownership": 0.5, "score": 0.25}  # NoGoZero+ section 4 (c_d, c_s)
NOGO_PLUS_SCORE_RANGE = 5.0  # its score head's range, that c_s was chosen for
# KataGo's: the opponent's-reply policy at 0.15 (Wu 2019, its auxiliary policy
# targets), the soft policy at 8 (its methods page: a flattened target has
# small gradients).
KATAGO_WEIGHTS = {"reply": 0.15, "soft_policy": 8.0}


def model_heads(model) -> tuple[str, ...]:
    names = set(model.output_names)
    return tuple(h for h in HEADS if h in names)


def score_scale(model) -> float | None:
    """The score head's output range (``scale * tanh``), None without a score head."""
    if "score" not in model.output_names:
        return None
    return float(getattr(model.get_layer("score"), "scale", 1.0))


def loss_weights(config: RLConfig, model) -> dict[str, float]:
    """Per-head weights: the config's, else 1 for policy and value and NoGoZero+'s
    for ownership and score. Its score weight is for scores in [-5, 5]; the zoo's
    score heads span ``[-scale, scale]``, so the default is rescaled by
    ``(5 / scale)^2`` to weigh the same relative error the same."""
    weights = {"policy": 1.0, "value": 1.0}
    heads = model_heads(model)
    if "ownership" in heads:
        weights["ownership"] = NOGO_PLUS_WEIGHTS["ownership"]
    if "score" in heads:
        scale = score_scale(model) or NOGO_PLUS_SCORE_RANGE
        weights["score"] = NOGO_PLUS_WEIGHTS["score"] * (NOGO_PLUS_SCORE_RANGE / scale) ** 2
    weights.update({h: w for h, w in KATAGO_WEIGHTS.items() if h in heads})
    weights.update({h: float(w) for h, w in config.train.loss_weights.items() if h in heads})
    return weights


def learning_rate(config: RLConfig, model_name: str):
    """The optimizer's rate: the ``[train]`` schedule over the run's
    generations of ``steps`` each (its ``lr_*_epochs`` count generations),
    from the rate of the network's family (``model_name``, the network's own:
    a run that starts from a file trains what the file holds) unless
    ``[train]`` sets one."""
    from harness.train import keras_schedule

    t = with_family_defaults(config.train, model_name)
    return keras_schedule(t.schedule(max(1, t.steps), config.generations))


def value_weight_scale(initial: float, ramp: int, generation: int) -> float:
    """The value loss's scale in ``generation`` (1-based): ``initial`` at first,
    linearly up to 1 after ``ramp`` generations (at once without a ramp)."""
    if ramp <= 0:
        return 1.0
    done = min(1.0, (generation - 1) / ramp)
    return float(initial + (1.0 - initial) * done)


def start_model(config: RLConfig, model_name: str, init: str = ""):
    """The network a run starts from, not yet compiled: ``init``'s checkpoint
    (checked against the run's board and inputs) or a new zoo network."""
    from harness.features import get_encoder
    from harness.nets import build_model, load_model
    from harness.train import check_compatible

    planes = get_encoder(config.encoder).planes
    if init:
        model = load_model(init)
        check_compatible(model, config.board_size, planes, config.encoder, init)
        return model
    return build_model(model_name, config.board_size, planes,
                       heads=("policy", "value", *config.heads) if config.heads else None,
                       seed=config.seed)


def resumed_model(config: RLConfig, path: Path):
    """A learner's checkpoint compiled as it was saved, optimizer state included."""
    from harness.train import apply_jit_compile, exclude_from_decay, load_checkpoint

    model = load_checkpoint(path, compile=True)
    exclude_from_decay(model.optimizer)
    apply_jit_compile(model, config.train)
    return model


class LearnerBase:
    """What every self-play learner holds, whatever its update: the network
    (saying in its model info what feeds it, so it plays anywhere it is copied
    to), its value loss and heads, the file of its current raw weights and the
    samples its latest update trained on (its compute)."""

    def __init__(self, name: str, model, config: RLConfig):
        from harness.nets import model_info
        from harness.train import model_value_loss

        self.name = name
        self.model = model
        model.model_info = model_info(model, encoder=config.encoder, rules=config.rules)
        self.config = config
        self.value_loss = model_value_loss(model)
        self.heads = model_heads(model)
        self.checkpoint: Path | None = None
        self.samples = 0

    @property
    def step(self) -> int:
        return optimizer_step(self.model)


class Learner(LearnerBase):
    """A compiled model plus what it takes to train it on a window."""

    def __init__(self, name: str, model, config: RLConfig,
                 average: list[np.ndarray] | None = None):
        super().__init__(name, model, config)
        self._anchor = None
        # [train] ema_decay: the moving average of model.weights (get_weights
        # order), from ``average`` (a resumed run's) or the weights now.
        self.average: WeightAverage | None = (
            WeightAverage(model, config.train.ema_decay, initial=average)
            if config.train.ema_decay else None)

    @classmethod
    def fresh(cls, name: str, config: RLConfig, model_name: str, init: str = "") -> Learner:
        """A new network (zoo name, random weights) or one initialised from a checkpoint."""
        from harness.train import compile_model

        model = start_model(config, model_name, init)
        compile_model(model, config.train, learning_rate(config, model.name), _value_loss(model),
                      soft_policy=True, weights=loss_weights(config, model))
        # Build the optimizer's slots now so that the first checkpoint already
        # holds them (a checkpoint saved before any step would not).
        model.optimizer.build(model.trainable_variables)
        return cls(name, model, config)

    @classmethod
    def load(cls, name: str, config: RLConfig, path: Path,
             averaged: Path | None = None) -> Learner:
        """A learner from its checkpoint, optimizer state included, and its
        weights' moving average from ``averaged`` (the network it plays)."""
        from harness.nets import load_model

        model = resumed_model(config, path)
        average = (load_model(averaged).get_weights()
                   if config.train.ema_decay and averaged is not None else None)
        learner = cls(name, model, config, average)
        learner.checkpoint = Path(path)
        return learner

    def columns(self) -> tuple[str, ...]:
        return window_columns(self.heads)

    def train(self, window, steps: int, generation: int) -> dict[str, float]:
        """``steps`` optimizer steps on batches from ``window``; mean losses per head.

        The batches are a function of (run seed, generation, learner), so a
        generation whose training was killed replays exactly the same steps.
        """
        from harness.features import get_encoder

        t = self.config.train
        self.samples = 0
        sampler = Sampler(window, get_encoder(self.config.encoder), self.config.board_size,
                          value_mix=t.value_mix, heads=self.heads, augment=t.augment,
                          score_scale=score_scale(self.model))
        if steps <= 0 or len(sampler) == 0 or len(sampler) < t.min_positions:
            return {}
        salt = sum(map(ord, self.name))
        seed = derive_seed(self.config.seed, generation, salt)
        rng = np.random.default_rng(seed)
        mixed = mixed_rows(t.batch_size, t.mix_share)
        mix = None
        if mixed:
            mix = SupervisedMix(t.mix_dataset, mixed, encoder=self.config.encoder,
                                board_size=self.config.board_size, seed=seed)
        beta = anchor_beta(t.anchor_kl, t.anchor_kl_decay, generation)
        anchor = self.anchor() if beta > 0 else None
        warmup = window.n_games < t.value_warmup_games
        value_scale = value_weight_scale(t.value_weight_initial, t.value_weight_ramp, generation)
        sums: dict[str, float] = {}
        try:
            with value_head_only(self.model) if warmup else contextlib.nullcontext():
                for _ in range(steps):
                    batch = sampler.batch(rng, t.batch_size - mixed)
                    if mix is not None:
                        batch = concat_batches(batch, mix.next())
                    x, targets, weights = to_head_targets(batch, self.value_loss)
                    weights = dict(weights)
                    weights["value"] = weights["value"] * value_scale
                    if anchor is not None:
                        targets["policy"], weights["policy"] = anchored_policy(
                            targets["policy"], weights["policy"],
                            np.asarray(predict_batch(anchor, x)["policy"]), beta)
                    logs = self.model.train_on_batch(x, targets, sample_weight=weights,
                                                     return_dict=True)
                    self.samples += len(x)
                    self._average_step()
                    for key, value in logs.items():
                        sums[key] = sums.get(key, 0.0) + float(value)
        finally:
            if mix is not None:
                mix.close()
        logs = {k: v / steps for k, v in sums.items()}
        if beta > 0:
            logs["anchor_beta"] = beta
        if warmup:
            logs["value_warmup"] = 1.0
        if value_scale != 1.0:
            logs["value_weight_scale"] = value_scale
        return logs

    def anchor(self):
        """The frozen network of ``[train] anchor`` (loaded once)."""
        if self._anchor is None:
            from harness.features import get_encoder
            from harness.nets import load_model
            from harness.train import check_compatible

            name = self.config.train.anchor
            path = (self.config.run_dir / "models" / "gen-0000.keras" if name == "start"
                    else Path(name))
            model = load_model(path)
            check_compatible(model, self.config.board_size,
                             get_encoder(self.config.encoder).planes, self.config.encoder,
                             str(path))
            self._anchor = model
        return self._anchor

    def _average_step(self) -> None:
        if self.average is not None:
            self.average.update()

    @contextlib.contextmanager
    def averaged(self):
        """The model holding the moving average of its weights (its raw ones
        again afterwards); the raw model without ``[train] ema_decay``."""
        if self.average is None:
            yield self.model
            return
        raw = self.model.get_weights()
        self.model.set_weights(self.average.values())
        try:
            yield self.model
        finally:
            self.model.set_weights(raw)

    def save(self, path: Path, raw: Path | None = None) -> Path:
        """The network that plays to ``path``; with a moving average, the raw
        weights and optimizer (what training continues from) to ``raw``."""
        from harness.nets import save_model

        if self.average is None:
            self.checkpoint = save_model(self.model, path)
            return self.checkpoint
        self.checkpoint = save_model(self.model, raw)
        with self.averaged() as model:
            save_model(model, path)
        return Path(path)


def _value_loss(model) -> str:
    from harness.train import model_value_loss

    return model_value_loss(model)
