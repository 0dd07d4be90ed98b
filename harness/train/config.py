"""Training configuration: one frozen dataclass, read from TOML and flags.

Every check that needs no TensorFlow and no data happens here, so a typo in a
config stops the run in milliseconds with one line naming the problem. Checks
against the world (model registry, dataset file, encoder) live in
:mod:`harness.train.preflight`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.config_io import ConfigError  # one ConfigError for every config
from harness.cpu import PRECISIONS as CPU_PRECISIONS
from harness.train.distribute import STRATEGIES
from harness.train.schedules import SCHEDULES, ScheduleSpec

OPTIMIZERS = ("sgd", "adam")
VALUE_LOSSES = ("auto", "mse", "bce")
HEADS = ("policy", "value", "ownership", "score")
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
class TrainConfig:
    """A supervised training run.

    ``weight_decay`` is *decoupled* weight decay (the optimizer shrinks every
    kernel by ``lr * weight_decay`` per step, biases and normalisation
    parameters excluded), not an L2 term added to the loss. With plain SGD it
    equals an L2 penalty ``(weight_decay / 2) ||w||^2``; with Adam it is AdamW.
    """

    model: str = ""
    data: str = ""
    run: str = ""
    runs_dir: str = "models"
    train_split: str = "train"
    val_split: str = "val"
    encoder: str = ""  # empty: the dataset's default encoder
    init: str = ""  # start from this checkpoint's weights (fresh optimizer), e.g. fine-tuning
    epochs: int = 1
    epoch_samples: int = 1_000_000
    val_samples: int = 0  # 0: the whole validation split
    batch_size: int = 128
    optimizer: str = "sgd"
    momentum: float = 0.9
    nesterov: bool = False
    lr: float = 0.01
    lr_final: float = 2e-4
    lr_schedule: str = "constant"
    lr_step_epochs: float = 1.0
    lr_step_factor: float = 0.1
    lr_cycle_epochs: float = 0.25
    # Linear warm-up from 0 over this fraction of the run (of the budget with one).
    lr_warmup: float = 0.0
    weight_decay: float = 1e-4
    # Missing heads get the model's defaults (1, or Cazenave's "valN" for the value head).
    loss_weights: dict[str, float] = field(default_factory=dict)
    value_loss: str = "auto"  # auto: whatever the model's value head was built for
    heads: tuple[str, ...] = ()  # extra heads to build (ownership, score); empty: model default
    seed: int = 0
    tensorboard: bool = True
    precision: str = "auto"  # a Keras dtype policy or auto, see PRECISIONS
    # tf.distribute strategy (harness.train.distribute): auto, none, mirrored, multi-worker.
    strategy: str = "auto"
    # A compute budget (0: none, train ``epochs`` x ``epoch_samples``). With a
    # budget the run trains until it is spent, in ``epochs`` equal slices each
    # ending with validation and a checkpoint, and the learning-rate schedule
    # follows the fraction of the budget used, so runs of models of any speed
    # get the same schedule shape and the same compute.
    budget: float = 0.0
    budget_unit: str = "wall_s"
    # Repeat the run with each of these seeds (runs RUN-seed<S>); empty: ``seed`` only.
    seeds: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        problems = list(_problems(self))
        if problems:
            raise ConfigError(problems[0])

    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(self.epoch_samples / self.batch_size)

    @property
    def total_steps(self) -> int:
        return self.steps_per_epoch * self.epochs

    @property
    def run_dir(self) -> Path:
        return Path(self.runs_dir) / self.run

    def schedule(self) -> ScheduleSpec:
        """The learning-rate schedule: in optimizer steps, or in budget ticks with a budget."""
        spe = BUDGET_TICKS_PER_EPOCH if self.budget else self.steps_per_epoch
        return ScheduleSpec(
            kind=self.lr_schedule,
            initial=self.lr,
            final=self.lr_final,
            total_steps=self.total_steps,
            step_every=max(1, round(self.lr_step_epochs * spe)),
            step_factor=self.lr_step_factor,
            period=max(1, round(self.lr_cycle_epochs * spe)),
            warmup=round(self.lr_warmup * spe * self.epochs),
        )

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["heads"] = list(self.heads)
        d["seeds"] = list(self.seeds)
        return d

    def replace(self, **changes: Any) -> TrainConfig:
        return from_mapping({**self.to_dict(), **changes}, "overrides")


def _problems(c: TrainConfig):
    if not c.model:
        yield "no model given (set model = '...' or --model)"
    if not c.data:
        yield "no dataset given (set data = '...' or --data)"
    if c.optimizer not in OPTIMIZERS:
        yield f"unknown optimizer {c.optimizer!r} (choose from {', '.join(OPTIMIZERS)})"
    if c.lr_schedule not in SCHEDULES:
        yield f"unknown lr_schedule {c.lr_schedule!r} (choose from {', '.join(SCHEDULES)})"
    if c.value_loss not in VALUE_LOSSES:
        yield f"unknown value_loss {c.value_loss!r} (choose from {', '.join(VALUE_LOSSES)})"
    if c.strategy not in STRATEGIES:
        yield f"unknown strategy {c.strategy!r} (choose from {', '.join(STRATEGIES)})"
    if c.budget_unit not in BUDGET_UNITS:
        yield f"unknown budget_unit {c.budget_unit!r} (choose from {', '.join(BUDGET_UNITS)})"
    if not c.budget >= 0 or not math.isfinite(c.budget):
        yield f"budget must be a non-negative number, got {c.budget}"
    if len(set(c.seeds)) != len(c.seeds):
        yield f"seeds must be distinct, got {list(c.seeds)}"
    if c.precision not in PRECISIONS:
        yield f"unknown precision {c.precision!r} (choose from {', '.join(PRECISIONS)})"
    for name in ("epochs", "epoch_samples", "batch_size"):
        if getattr(c, name) < 1:
            yield f"{name} must be at least 1, got {getattr(c, name)}"
    for name in ("lr", "lr_step_epochs", "lr_cycle_epochs"):
        if not getattr(c, name) > 0:
            yield f"{name} must be positive, got {getattr(c, name)}"
    if not 0 <= c.lr_warmup < 1:
        yield f"lr_warmup must be a fraction in [0, 1), got {c.lr_warmup}"
    for name in ("lr_final", "weight_decay", "val_samples"):
        if getattr(c, name) < 0:
            yield f"{name} must not be negative, got {getattr(c, name)}"
    if not 0 <= c.momentum < 1:
        yield f"momentum must be in [0, 1), got {c.momentum}"
    for head, w in c.loss_weights.items():
        if head not in HEADS:
            yield f"unknown head {head!r} in loss_weights (choose from {', '.join(HEADS)})"
        elif not isinstance(w, int | float) or w < 0:
            yield f"loss weight for {head} must be a non-negative number, got {w!r}"
    for head in c.heads:
        if head not in HEADS:
            yield f"unknown head {head!r} in heads (choose from {', '.join(HEADS)})"
    if c.run and (os.sep in c.run or c.run in (".", "..")):
        yield f"run name {c.run!r} must be a plain directory name"


_FIELDS = {f.name: f for f in dataclasses.fields(TrainConfig)}


def from_mapping(values: dict[str, Any], source: str) -> TrainConfig:
    """Build a config, rejecting unknown keys and wrong types with one line."""
    unknown = sorted(set(values) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"{source}: unknown config key {unknown[0]!r}")
    kwargs = {key: _coerce(key, value, source) for key, value in values.items()}
    try:
        return TrainConfig(**kwargs)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None


def _coerce(key: str, value: Any, source: str) -> Any:
    default = _FIELDS[key].default
    if default is dataclasses.MISSING:  # default_factory: loss_weights
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: {key} must be a table of head = weight")
        return {str(k): float(v) if isinstance(v, int | float) else v for k, v in value.items()}
    if key == "heads":
        if isinstance(value, str):
            value = [h for h in value.split(",") if h]
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{source}: heads must be a list of head names")
        return tuple(str(h) for h in value)
    if key == "seeds":
        if not isinstance(value, list | tuple) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise ConfigError(f"{source}: seeds must be a list of integers, got {value!r}")
        return tuple(value)
    want = type(default)
    if want is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: {key} must be true or false, got {value!r}")
        return value
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, want) or isinstance(value, bool):
        raise ConfigError(f"{source}: {key} must be a {want.__name__}, got {value!r}")
    return value


def read_toml(path: str | Path) -> dict[str, Any]:
    """A config file's keys (top level or under ``[train]``), unknown keys rejected."""
    from harness.config_io import read_toml as read_any_toml

    path = Path(path)
    values = read_any_toml(path)
    if isinstance(values.get("train"), dict):
        values = {**values["train"], **{k: v for k, v in values.items() if k != "train"}}
    unknown = sorted(set(values) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"{path}: unknown config key {unknown[0]!r}")
    return values


def load_config(path: str | Path | None, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """TOML file then flag overrides."""
    values = read_toml(path) if path is not None else {}
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return from_mapping(values, str(path) if path is not None else "flags")


def save_config(config: TrainConfig, path: Path) -> None:
    from harness.files import atomic_json

    atomic_json(path, config.to_dict(), sort_keys=True)


def read_config(path: Path) -> TrainConfig:
    try:
        values = json.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: no saved config (is this a training run directory?)") from None
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}: corrupt config ({e})") from None
    return from_mapping(values, str(path))
