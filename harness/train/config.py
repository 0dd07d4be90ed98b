"""Training configuration: one frozen dataclass, read from TOML and flags.

Every check that needs no TensorFlow and no data happens here, so a typo in a
config stops the run in milliseconds with one line naming the problem. Checks
against the world (model registry, dataset file, encoder) live in
:mod:`harness.train.preflight`.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.config_io import ConfigError, from_mapping, setting
from harness.cpu import PRECISIONS as CPU_PRECISIONS
from harness.devices import DeviceSettings
from harness.metrics import MetricsSettings
from harness.nets.names import HEADS
from harness.nets.plugins import PluginSettings
from harness.train.distribute import STRATEGIES
from harness.train.pace import BudgetPace, EpochPace, Pace
from harness.train.schedules import SCHEDULES, ScheduleSpec

OPTIMIZERS = ("sgd", "adam")
VALUE_LOSSES = ("auto", "mse", "bce")
# The training step's XLA compilation: Keras's own choice, or forced on or off.
JIT_COMPILE = ("auto", "on", "off")

# Keras dtype policies, or "auto": the CPU's native one (harness.cpu).
# mixed_bfloat16 runs the convolutions in bfloat16 with float32 weights:
# 1.3-1.7x the float32 speed on CPUs with AMX/AVX512-BF16, slower elsewhere.
PRECISIONS = CPU_PRECISIONS
# What a compute budget counts: training wall seconds, process CPU seconds
# (all threads), or training samples. Validation is never charged.
BUDGET_UNITS = ("wall_s", "cpu_s", "samples")
# With a budget, an epoch is a slice of it; the schedule runs over these
# nominal ticks per slice (its shape in fractions of the budget).
BUDGET_TICKS_PER_EPOCH = 1000


@dataclass(frozen=True)
class OptimizerSettings:
    """How the weights move, step by step: the one declaration of these settings
    for supervised training, a suite's ``[train]`` and self-play's ``[train]``.

    ``weight_decay`` is *decoupled* weight decay (the optimizer shrinks every
    kernel by ``lr * weight_decay`` per step, biases and normalisation
    parameters excluded), not an L2 term added to the loss. With plain SGD it
    equals an L2 penalty ``(weight_decay / 2) ||w||^2``; with Adam it is AdamW.
    The ``lr_*_epochs`` lengths count epochs (budget slices; self-play:
    generations).
    """

    batch_size: int = setting(128, "batch size")
    optimizer: str = setting("adam", "adam (AdamW with a weight decay) or sgd (with momentum)")
    momentum: float = setting(0.9, "SGD momentum")
    nesterov: bool = setting(False, "Nesterov momentum")
    lr: float | None = setting(
        None, "initial learning rate (default: the model family's, harness/train/family.py: "
        "0.002 for most)")
    lr_final: float = setting(2e-4, "final learning rate (cosine, cyclical)")
    lr_schedule: str = setting("constant", "constant, step, cosine, cyclical or wsd (warm-up, "
                               "stable, then a linear decay over lr_cooldown)")
    lr_step_epochs: float = setting(1.0, "step schedule: epochs between decays")
    lr_step_factor: float = setting(0.1, "step schedule: factor per decay")
    lr_cycle_epochs: float = setting(0.25, "cyclical schedule: period in epochs")
    lr_warmup: float = setting(
        0.0, "linear warm-up from 0 over this fraction of the run (or of the budget)")
    lr_cooldown: float = setting(
        0.2, "wsd schedule: the final fraction of the run (or of the budget) over which the "
        "rate falls linearly to lr_final")
    weight_decay: float = setting(1e-4, "decoupled weight decay on kernels")
    loss_weights: dict[str, float] = setting(
        {}, "loss weight of a head, e.g. value=0.25 (repeatable; missing heads get the "
        "model's defaults: 1, or Cazenave's valN for the value head)",
        flag="--loss-weight", metavar="HEAD=W")
    jit_compile: str = setting(
        "auto", "compile the training step with XLA: auto (Keras's choice: on with a GPU, off "
        "on CPU-only machines), on or off (measure the model here first with harness bench "
        "models --jit-compile: on CPUs it trained a0.4.32 1.3x faster, mobile.small 8x "
        "slower)", choices=JIT_COMPILE)

    def __post_init__(self) -> None:
        problems = list(_optimizer_problems(self))
        if problems:
            raise ConfigError(problems[0])
        getattr(super(), "__post_init__", lambda: None)()  # the next settings base, if any

    def schedule(self, steps_per_epoch: int, epochs: int) -> ScheduleSpec:
        """The learning-rate schedule over ``epochs`` of ``steps_per_epoch``
        positions (optimizer steps, or ticks of a budget)."""
        if self.lr is None:
            raise ConfigError("lr is left to the model's family: fill it with "
                              "harness.train.family.with_family_defaults first")
        spe = steps_per_epoch
        return ScheduleSpec(
            kind=self.lr_schedule,
            initial=self.lr,
            final=self.lr_final,
            total_steps=spe * epochs,
            step_every=max(1, round(self.lr_step_epochs * spe)),
            step_factor=self.lr_step_factor,
            period=max(1, round(self.lr_cycle_epochs * spe)),
            warmup=round(self.lr_warmup * spe * epochs),
            cooldown=round(self.lr_cooldown * spe * epochs),
        )


@dataclass(frozen=True)
class TrainingSettings(OptimizerSettings):
    """How long and how a supervised run trains, whatever the model and data:
    shared by :class:`TrainConfig` and a suite's ``[train]`` section."""

    epochs: int = setting(1, "number of epochs")
    epoch_samples: int = setting(1_000_000, "samples per epoch (Cazenave: 1000000)")
    val_samples: int = setting(0, "validate on at most this many samples (0: all)")
    window_parts: int = setting(
        1, "deliver each shuffle window of positions in this many parts spread over the "
        "epoch, so that one game's positions are not all seen within minutes")
    recalibrate_bn: int = setting(
        0, "before each validation and checkpoint, re-estimate every batch norm's "
        "statistics on this many training batches (short runs: the moving averages lag "
        "the weights); not charged to a budget")
    value_loss: str = setting("auto", "auto (whatever the model's value head was built for), "
                              "mse (tanh head) or bce (sigmoid head)")
    heads: tuple[str, ...] = setting(
        (), "extra heads to build, comma separated (ownership,score); default: the model's")
    precision: str = setting(
        "auto", "auto (mixed_bfloat16 on CPUs with AMX/AVX512-BF16, else float32), float32, "
        "mixed_bfloat16 or mixed_float16 (GPUs)")
    strategy: str = setting(
        "auto", "tf.distribute: auto (mirrored on 2+ GPUs), none, mirrored, multi-worker "
        "(TF_CONFIG)")
    # With a budget the run trains until it is spent, in ``epochs`` equal
    # slices each ending with validation and a checkpoint, and the
    # learning-rate schedule follows the fraction of the budget used, so runs
    # of models of any speed get the same schedule shape and the same compute.
    budget: float = setting(
        0.0, "compute budget: train until spent, in --epochs slices (0: none, train epochs x "
        "epoch_samples; unit --budget-unit)")
    budget_unit: str = setting(
        "wall_s", "wall_s (training wall seconds), cpu_s (process CPU seconds) or samples")
    seeds: tuple[int, ...] = setting(
        (), "repeat the run with each seed (runs RUN-seedS); default: seed only",
        metavar="S,S,...")

    def __post_init__(self) -> None:
        problems = list(_training_problems(self))
        if problems:
            raise ConfigError(problems[0])
        super().__post_init__()

    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(self.epoch_samples / self.batch_size)

    @property
    def pace(self) -> Pace:
        """Epochs of ``epoch_samples``, or slices of a compute budget."""
        if self.budget:
            # The schedule runs over nominal ticks of the budget, so runs of
            # models of any speed get the same shape; every length in it must
            # be in ticks (a warm-up in ticks against a total in steps once
            # stretched a 2% warm-up over a third of a budgeted run).
            return BudgetPace(self.epochs, self.schedule(BUDGET_TICKS_PER_EPOCH, self.epochs),
                              self.budget, self.budget_unit)
        return EpochPace(self.epochs, self.schedule(self.steps_per_epoch, self.epochs),
                         self.steps_per_epoch)


@dataclass(frozen=True)
class RunSettings(PluginSettings, DeviceSettings, MetricsSettings):
    """Where a training run (supervised or self-play) lives, what it starts
    from (a checkpoint, the plugins its network comes from), the Keras
    backend it computes with and its live metrics (``harness.metrics``)."""

    run: str = setting("", "run name: files go to RUNS_DIR/RUN/")
    runs_dir: str = setting("models", "where runs live")
    init: str = setting("", "start from this checkpoint's weights (e.g. a supervised "
                        "best.keras; a new optimizer)")

    def __post_init__(self) -> None:
        if self.run and (os.sep in self.run or "/" in self.run or self.run in (".", "..")):
            raise ConfigError(f"run name {self.run!r} must be a plain directory name")
        getattr(super(), "__post_init__", lambda: None)()  # the next settings base, if any

    @property
    def run_dir(self) -> Path:
        return Path(self.runs_dir) / self.run


@dataclass(frozen=True)
class DataSplitSettings:
    """The positions a supervised network learns from and is measured on: a
    ``harness ingest`` file, its training and held-out splits and the input
    encoder; shared by :class:`TrainConfig` and a compute-frontier study."""

    data: str = setting("", "positions file made by harness ingest")
    train_split: str = setting("train", "split to train on")
    val_split: str = setting(
        "val", "held-out split: validated after each epoch ('' for none); a frontier study "
        "evaluates every savepoint on it")
    encoder: str = setting("", "input encoder (default: the dataset's)")


@dataclass(frozen=True)
class TrainConfig(TrainingSettings, DataSplitSettings, RunSettings):
    """A supervised training run: a model, a dataset and where the run lives
    (its name defaults to the model's), trained as its
    :class:`TrainingSettings` say."""

    model: str = setting("", "model name from the zoo, e.g. a0.small")
    seed: int = setting(0, "random seed")

    def __post_init__(self) -> None:
        problems = list(_run_problems(self))
        if problems:
            raise ConfigError(problems[0])
        super().__post_init__()

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["heads"] = list(self.heads)
        d["seeds"] = list(self.seeds)
        return d

    def replace(self, **changes: Any) -> TrainConfig:
        return from_mapping(TrainConfig, {**self.to_dict(), **changes}, "overrides")


def _run_problems(c: TrainConfig):
    if not c.model:
        yield "no model given (set model = '...' or --model)"
    if not c.data:
        yield "no dataset given (set data = '...' or --data)"


def _optimizer_problems(c: OptimizerSettings):
    if c.optimizer not in OPTIMIZERS:
        yield f"unknown optimizer {c.optimizer!r} (choose from {', '.join(OPTIMIZERS)})"
    if c.lr_schedule not in SCHEDULES:
        yield f"unknown lr_schedule {c.lr_schedule!r} (choose from {', '.join(SCHEDULES)})"
    if c.batch_size < 1:
        yield f"batch_size must be at least 1, got {c.batch_size}"
    for name in ("lr", "lr_step_epochs", "lr_cycle_epochs"):
        if getattr(c, name) is not None and not getattr(c, name) > 0:
            yield f"{name} must be positive, got {getattr(c, name)}"
    if not 0 <= c.lr_warmup < 1:
        yield f"lr_warmup must be a fraction in [0, 1), got {c.lr_warmup}"
    if not 0 < c.lr_cooldown <= 1:
        yield f"lr_cooldown must be a fraction in (0, 1], got {c.lr_cooldown}"
    for name in ("lr_final", "weight_decay"):
        if getattr(c, name) < 0:
            yield f"{name} must not be negative, got {getattr(c, name)}"
    if not 0 <= c.momentum < 1:
        yield f"momentum must be in [0, 1), got {c.momentum}"
    if c.jit_compile not in JIT_COMPILE:
        yield f"unknown jit_compile {c.jit_compile!r} (choose from {', '.join(JIT_COMPILE)})"
    for head, w in c.loss_weights.items():
        if head not in HEADS:
            yield f"unknown head {head!r} in loss_weights (choose from {', '.join(HEADS)})"
        elif not isinstance(w, int | float) or w < 0:
            yield f"loss weight for {head} must be a non-negative number, got {w!r}"


def _training_problems(c: TrainingSettings):
    if c.value_loss not in VALUE_LOSSES:
        yield f"unknown value_loss {c.value_loss!r} (choose from {', '.join(VALUE_LOSSES)})"
    if c.strategy not in STRATEGIES:
        yield f"unknown strategy {c.strategy!r} (choose from {', '.join(STRATEGIES)})"
    if c.budget_unit not in BUDGET_UNITS:
        yield f"unknown budget_unit {c.budget_unit!r} (choose from {', '.join(BUDGET_UNITS)})"
    if c.window_parts < 1:
        yield f"window_parts must be at least 1, got {c.window_parts}"
    if not c.budget >= 0 or not math.isfinite(c.budget):
        yield f"budget must be a non-negative number, got {c.budget}"
    if len(set(c.seeds)) != len(c.seeds):
        yield f"seeds must be distinct, got {list(c.seeds)}"
    if c.precision not in PRECISIONS:
        yield f"unknown precision {c.precision!r} (choose from {', '.join(PRECISIONS)})"
    for name in ("epochs", "epoch_samples"):
        if getattr(c, name) < 1:
            yield f"{name} must be at least 1, got {getattr(c, name)}"
    for name in ("val_samples", "recalibrate_bn"):
        if getattr(c, name) < 0:
            yield f"{name} must not be negative, got {getattr(c, name)}"
    for head in c.heads:
        if head not in HEADS:
            yield f"unknown head {head!r} in heads (choose from {', '.join(HEADS)})"
