"""A compute-frontier study: which networks, on which data, at which computes.

One frozen dataclass read from a TOML file's ``[frontier]`` table (over its
top-level keys). The training settings are ``harness train``'s own
(:class:`~harness.train.config.TrainingSettings`, the data and splits of
:class:`~harness.train.config.DataSplitSettings`), so a key means here what it
means there; what only a frontier has is its models, its compute range and
how each savepoint is made. Everything that needs neither TensorFlow nor the
dataset is checked here, so a typo costs milliseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.config_io import ConfigError, load_config, setting
from harness.devices import DeviceSettings
from harness.nets.plugins import PluginSettings
from harness.train.config import DataSplitSettings, TrainingSettings
from harness.train.metrics import INTERVAL_METRICS

# What trains the networks: supervised learning on a dataset (self-play: issue #61, item 2).
KINDS = ("supervised",)
NOT_YET_KINDS = ("selfplay", "rl")
# How a savepoint's checkpoint is made: one run per savepoint, each with its
# whole learning-rate schedule; or one run at a constant rate with a short
# cool-down branch at each savepoint (Hägele et al. 2024).
SAVEPOINTS = ("per-budget", "cooldown")
# harness train's settings that a study sets for each run itself.
SET_BY_STUDY = ("budget", "budget_unit", "epochs", "seeds")


@dataclass(frozen=True)
class FrontierConfig(TrainingSettings, DataSplitSettings, PluginSettings, DeviceSettings):
    """Every model trained to every savepoint's training FLOPs and evaluated on
    the same held-out positions (``val_split``, at most ``val_samples`` of
    them). ``budget``, ``budget_unit``, ``epochs`` and ``seeds`` are the study's
    to set, per savepoint, and must be left out.

    With ``savepoints = "cooldown"`` the schedule is ``wsd``: one run per model
    at the constant rate, warmed up over ``lr_warmup`` of the smallest
    savepoint, branched at ``1 - lr_cooldown`` of every savepoint into a
    cool-down to ``lr_final`` that ends at the savepoint."""

    kind: str = setting("supervised", "what trains the networks: supervised",
                        choices=(*KINDS, *NOT_YET_KINDS))
    models: list[str] = setting(
        [], "the networks, every family at every size: zoo names (a0.tiny) or plugin "
        "references, as harness train --model takes them", metavar="MODEL,...")
    families: dict[str, str] = setting(
        {}, "a model's family, where its name does not say it (a plugin reference), or to "
        "join or split families (default: the zoo name without its size, a0.tiny: a0)",
        flag="--family", metavar="MODEL=FAMILY")
    min_flops: float = setting(0.0, "the smallest savepoint, in training FLOPs")
    max_flops: float = setting(0.0, "the largest savepoint, in training FLOPs")
    points_per_decade: float = setting(
        2.0, "savepoints per decade of FLOPs, log-spaced from min_flops to max_flops (both "
        "included)")
    savepoints: str = setting(
        "per-budget", "per-budget (one run per savepoint, each with its whole rate schedule) "
        "or cooldown (one constant-rate run, a cool-down branch at each savepoint)",
        choices=SAVEPOINTS)
    metrics: tuple[str, ...] = setting(
        ("policy_top1", "value_mse"), "the held-out metrics a frontier is drawn for",
        metavar="METRIC,...")
    seed: int = setting(0, "random seed of every run")

    def __post_init__(self) -> None:
        problems = list(_frontier_problems(self))
        if problems:
            raise ConfigError(problems[0])
        super().__post_init__()


def _frontier_problems(c: FrontierConfig):
    if c.kind in NOT_YET_KINDS:
        yield f"kind {c.kind!r}: self-play frontiers are not implemented yet (kind = 'supervised')"
    elif c.kind not in KINDS:
        yield f"unknown kind {c.kind!r} (choose from {', '.join(KINDS)})"
    if not c.models:
        yield "no models given (models = ['a0.tiny', 'mobile.tiny', ...])"
    if len(set(c.models)) != len(c.models):
        yield f"models must be distinct, got {c.models}"
    for model in c.families:
        if model not in c.models:
            yield f"families names {model!r}, which is not in models"
    if not c.data:
        yield "no dataset given (data = 'datasets/NAME.h5', made by harness ingest)"
    if not c.val_split:
        yield "val_split is empty: every savepoint is evaluated on a held-out split"
    for name in ("min_flops", "max_flops", "points_per_decade"):
        value = getattr(c, name)
        if not (math.isfinite(value) and value > 0):
            yield f"{name} must be a positive number, got {value}"
    if c.min_flops >= c.max_flops:
        yield f"min_flops ({c.min_flops:g}) must be below max_flops ({c.max_flops:g})"
    if c.savepoints not in SAVEPOINTS:
        yield f"unknown savepoints {c.savepoints!r} (choose from {', '.join(SAVEPOINTS)})"
    if c.savepoints == "cooldown" and c.lr_schedule != "wsd":
        yield ("savepoints = 'cooldown' gives every savepoint a warm-up, stable, decay schedule: "
               f"set lr_schedule = 'wsd' (not {c.lr_schedule!r}; lr_cooldown is the cool-down)")
    if c.savepoints == "cooldown" and c.lr_cooldown >= 1:
        yield "savepoints = 'cooldown': lr_cooldown must leave a stable phase to branch from (< 1)"
    for metric in c.metrics:
        if metric not in INTERVAL_METRICS:
            yield f"unknown metric {metric!r} (choose from {', '.join(INTERVAL_METRICS)})"
    if not c.metrics:
        yield "metrics is empty"
    if c.budget:
        yield "budget is set per savepoint from min_flops..max_flops; leave it out"
    if c.epochs != 1:
        yield "epochs: a frontier run ends in one checkpoint per savepoint; leave epochs out"
    if c.seeds:
        yield "seeds: a frontier study runs one seed (seed); leave seeds out"


def savepoint_flops(config: FrontierConfig) -> tuple[float, ...]:
    """The savepoints' training FLOPs: log-spaced from ``min_flops`` to
    ``max_flops``, both included, at least ``points_per_decade`` per decade."""
    low, high = math.log10(config.min_flops), math.log10(config.max_flops)
    count = max(2, math.ceil((high - low) * config.points_per_decade - 1e-9) + 1)
    return tuple(10.0 ** (low + (high - low) * i / (count - 1)) for i in range(count))


# Parts of a zoo name that say its size, not its architecture.
SIZE_WORDS = frozenset({"tiny", "small", "paper"})


def family_of(config: FrontierConfig, model: str) -> str:
    """The family a model's frontier belongs to: the config's word for it, else
    the zoo name without its size parts (numbers, tiny, small, paper:
    ``a0.tiny`` and ``a0.20.256`` are ``a0``, ``mobile.small.conv.avg.bin``
    and ``mobile.conv.avg.bin.40.128.512`` are ``mobile.conv.avg.bin``), else
    the plugin reference."""
    from harness.nets.plugins import directory_name, is_plugin_reference

    if model in config.families:
        return config.families[model]
    if is_plugin_reference(model):
        return directory_name(model)
    kept = [part for part in model.split(".") if not part.isdigit() and part not in SIZE_WORDS]
    return ".".join(kept) or model


def load_frontier_config(path: str | Path, overrides: dict[str, Any] | None = None
                         ) -> FrontierConfig:
    """The study of a TOML file (its ``[frontier]`` table over its top-level keys)
    and the flags given, with its backend chosen, its plugins loaded and every
    model name known: one :class:`ConfigError` line otherwise."""
    from harness.devices import use_backend
    from harness.nets.plugins import load_plugins, model_spec

    config = load_config(FrontierConfig, path, overrides, table="frontier")
    try:
        use_backend(config.keras_backend)
        load_plugins(config.plugins)
    except ValueError as e:
        raise ConfigError(f"{path}: {e}") from None
    for model in config.models:
        try:
            model_spec(model)
        except ValueError as e:
            message = str(e)
            raise ConfigError(f"{path}: " + (message if model in message else
                                             f"unknown model {model!r}: {message}")) from None
    return config
