"""A compute-frontier study: which networks, on which data, at which computes.

One frozen dataclass read from a TOML file's ``[frontier]`` table (over its
top-level keys). A supervised study's training settings are ``harness
train``'s own (:class:`~harness.train.config.TrainingSettings`, the data and
splits of :class:`~harness.train.config.DataSplitSettings`), so a key means
here what it means there. A self-play study's are ``harness rl``'s: its
``[rl]`` table is :class:`~harness.rl.config.RLSettings` (board, search,
self-play, learner, window...), the study naming each run's network and
running it to the largest savepoint; its ``[rating]`` table
(:class:`RatingSettings`) says how the savepoints are rated. What only a
frontier has is its models, its compute range and how each savepoint is
made. Everything that needs neither TensorFlow nor the dataset is checked
here, so a typo costs milliseconds.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.arena.settings import MatchSettings
from harness.config_io import ConfigError, load_config, setting, values_of
from harness.devices import DeviceSettings
from harness.metrics import MetricsSettings
from harness.nets.plugins import PluginSettings
from harness.rl.config import RLSettings
from harness.train.config import DataSplitSettings, TrainingSettings
from harness.train.metrics import INTERVAL_METRICS

# What trains the networks: supervised learning on a dataset, or self-play from zero.
KINDS = ("supervised", "selfplay")
# A self-play study's one metric: every savepoint in one pooled Bradley-Terry rating.
ELO = "elo"
# How a savepoint's checkpoint is made: one run per savepoint, each with its
# whole learning-rate schedule; or one run at a constant rate with a short
# cool-down branch at each savepoint (Hägele et al. 2024).
SAVEPOINTS = ("per-budget", "cooldown")
# harness train's settings that a study sets for each run itself.
SET_BY_STUDY = ("budget", "budget_unit", "epochs", "seeds")


@dataclass(frozen=True)
class RatingSettings(MatchSettings):
    """How a self-play study rates its savepoints: one pooled Bradley-Terry
    rating of every savepoint of every model, the test-time players (each
    model's last savepoint at every ``test_playouts``) and the ``anchors``,
    the first anchor fixed at ``anchor_elo``. Every network searches
    ``eval_playouts`` per move (PUCT), so strength is compared at one
    stated search. Games are played in rounds between neighbours of the
    current rating order until every interval's half-width is below
    ``target_halfwidth`` or ``max_rating_games`` are played; how each game is
    played (move cap, games at once) is :class:`MatchSettings`'."""

    anchors: list[str] = setting(
        ["random", "gnugo:1"], "fixed players rated beside the networks, the first at "
        "anchor_elo; a gnugo:LEVEL anchor is left out (said so) where GNU Go is not installed",
        metavar="SPEC,...")
    anchor_elo: float = setting(0.0, "the Elo of the first anchor")
    eval_playouts: int = setting(16, "playouts per move of every savepoint's player")
    test_playouts: list[int] = setting(
        [1, 4, 16, 64], "playouts of each model's last savepoint in the test-time table "
        "(KataGo #1031: networks x visits)", metavar="N,...")
    target_halfwidth: float = setting(
        100.0, "stop when every player's 95% interval is narrower than this, in Elo on "
        "either side")
    round_pair_games: int = setting(
        2, "games per neighbour pair in each round (colours alternate)")
    max_rating_games: int = setting(400, "stop after this many rating games in all")

    def __post_init__(self) -> None:
        problems = list(_rating_problems(self))
        if problems:
            raise ConfigError(problems[0])
        getattr(super(), "__post_init__", lambda: None)()


def _rating_problems(r: RatingSettings):
    from harness.players.base import PlayerSpecError
    from harness.players.spec import NETWORK_KINDS, parse_player

    if not r.anchors:
        yield "rating: anchors is empty (the first anchor fixes the scale: anchors = ['random'])"
    if len(set(r.anchors)) != len(r.anchors):
        yield f"rating: anchors must be distinct, got {r.anchors}"
    for text in r.anchors:
        try:
            spec = parse_player(text)
        except PlayerSpecError as e:
            yield f"rating: anchor {e}"
            continue
        if spec.kind in NETWORK_KINDS:
            yield (f"rating: anchor {text!r} is a network; anchors are fixed players "
                   "(random, gnugo:N)")
    if r.eval_playouts < 1 or any(p < 1 for p in r.test_playouts):
        yield "rating: eval_playouts and every test_playouts must be at least 1"
    if len(set(r.test_playouts)) != len(r.test_playouts):
        yield f"rating: test_playouts must be distinct, got {r.test_playouts}"
    if not (math.isfinite(r.target_halfwidth) and r.target_halfwidth > 0):
        yield f"rating: target_halfwidth must be a positive number of Elo, got {r.target_halfwidth}"
    if r.round_pair_games < 1 or r.max_rating_games < 1:
        yield "rating: round_pair_games and max_rating_games must be at least 1"


@dataclass(frozen=True)
class SavepointSettings:
    """Where a frontier's savepoints lie and how each is made: shared by a
    frontier study and a suite's ``[frontier]`` section."""

    min_flops: float = setting(0.0, "the smallest savepoint, in training FLOPs (selfplay: "
                               "training and self-play FLOPs)")
    max_flops: float = setting(0.0, "the largest savepoint, in training FLOPs (selfplay: "
                               "training and self-play FLOPs)")
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


@dataclass(frozen=True)
class FrontierConfig(SavepointSettings, TrainingSettings, DataSplitSettings, PluginSettings,
                     DeviceSettings, MetricsSettings):
    """Every model trained to every savepoint's training FLOPs and evaluated on
    the same held-out positions (``val_split``, at most ``val_samples`` of
    them). ``budget``, ``budget_unit``, ``epochs`` and ``seeds`` are the study's
    to set, per savepoint, and must be left out.

    With ``savepoints = "cooldown"`` the schedule is ``wsd``: one run per model
    at the constant rate, warmed up over ``lr_warmup`` of the smallest
    savepoint, branched at ``1 - lr_cooldown`` of every savepoint into a
    cool-down to ``lr_final`` that ends at the savepoint."""

    kind: str = setting("supervised", "what trains the networks: supervised (on data, "
                        "scored on held-out positions) or selfplay (from zero, rated in Elo)",
                        choices=KINDS)
    models: list[str] = setting(
        [], "the networks, every family at every size: zoo names (a0.tiny) or plugin "
        "references, as harness train --model takes them", metavar="MODEL,...")
    families: dict[str, str] = setting(
        {}, "a model's family, where its name does not say it (a plugin reference), or to "
        "join or split families (default: the zoo name without its size, a0.tiny: a0)",
        flag="--family", metavar="MODEL=FAMILY")
    max_flops_of: dict[str, float] = setting(
        {}, "a model's own largest savepoint, below max_flops, where the study's range costs "
        "more than it is worth (a second, smaller size that only the low end needs, or a "
        "family whose FLOPs are slow on this device); its savepoints above it are not made",
        flag="--max-flops-of", metavar="MODEL=FLOPS")
    seed: int = setting(0, "random seed of every run")
    rl: RLSettings = field(default_factory=RLSettings, metadata={
        "cli": False, "help": "kind = selfplay: harness rl's settings of every run"})
    rating: RatingSettings = field(default_factory=RatingSettings, metadata={
        "cli": False, "help": "kind = selfplay: how the savepoints are rated"})

    @property
    def study_metrics(self) -> tuple[str, ...]:
        """What each savepoint is measured by: the held-out metrics, or Elo."""
        return (ELO,) if self.kind == "selfplay" else tuple(self.metrics)

    def __post_init__(self) -> None:
        problems = list(_frontier_problems(self))
        if problems:
            raise ConfigError(problems[0])
        super().__post_init__()


def _frontier_problems(c: FrontierConfig):
    if c.kind not in KINDS:
        yield f"unknown kind {c.kind!r} (choose from {', '.join(KINDS)})"
    if not c.models:
        yield "no models given (models = ['a0.tiny', 'mobile.tiny', ...])"
    if len(set(c.models)) != len(c.models):
        yield f"models must be distinct, got {c.models}"
    for model in c.families:
        if model not in c.models:
            yield f"families names {model!r}, which is not in models"
    for model, cap in c.max_flops_of.items():
        if model not in c.models:
            yield f"max_flops_of names {model!r}, which is not in models"
        elif not (math.isfinite(cap) and c.min_flops <= cap <= c.max_flops):
            yield (f"max_flops_of: {model}'s {cap:g} FLOPs must lie in min_flops..max_flops "
                   f"({c.min_flops:g}..{c.max_flops:g})")
    for name in ("min_flops", "max_flops", "points_per_decade"):
        value = getattr(c, name)
        if not (math.isfinite(value) and value > 0):
            yield f"{name} must be a positive number, got {value}"
    if c.min_flops >= c.max_flops:
        yield f"min_flops ({c.min_flops:g}) must be below max_flops ({c.max_flops:g})"
    if c.savepoints not in SAVEPOINTS:
        yield f"unknown savepoints {c.savepoints!r} (choose from {', '.join(SAVEPOINTS)})"
    yield from (_selfplay_problems(c) if c.kind == "selfplay" else _supervised_problems(c))


def _supervised_problems(c: FrontierConfig):
    if not c.data:
        yield "no dataset given (data = 'datasets/NAME.h5', made by harness ingest)"
    if not c.val_split:
        yield "val_split is empty: every savepoint is evaluated on a held-out split"
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
    for table, default in (("rl", RLSettings()), ("rating", RatingSettings())):
        if getattr(c, table) != default:
            yield f"[{table}] is a self-play study's table; kind = 'supervised' leaves it out"


def _selfplay_problems(c: FrontierConfig):
    defaults = FrontierConfig.__dataclass_fields__
    for cls in (TrainingSettings, DataSplitSettings):
        for name, value in values_of(c, cls).items():
            if value != _default(defaults[name]):
                yield (f"{name} is a supervised study's setting; a self-play study trains as "
                       "its [rl] table (and [rl.train]) says: leave it out")
    if c.max_flops_of:
        yield ("max_flops_of: a self-play study runs every model to max_flops; leave "
               "max_flops_of out")
    if c.savepoints != "per-budget":
        yield ("savepoints: a self-play study's savepoints are its runs' generation "
               "checkpoints; leave savepoints out")
    if tuple(c.metrics) not in (tuple(_default(defaults["metrics"])), (ELO,)):
        yield f"metrics: a self-play study rates its savepoints in {ELO!r}; leave metrics out"
    if c.rl.curriculum.enabled:
        yield "[rl.curriculum]: a self-play study runs one network per model; disable it"
    if c.rl.algorithm != "alphazero":
        yield (f"[rl] algorithm = {c.rl.algorithm!r}: a self-play study runs the AlphaZero "
               "loop (policy-gradient frontiers are not built yet); leave algorithm out")


def _default(f: dataclasses.Field):
    """A field's default value, made fresh where it has a factory."""
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def model_flops(config: FrontierConfig, model: str) -> tuple[float, ...]:
    """``model``'s savepoints: the study's, up to its ``max_flops_of`` where it has one."""
    cap = config.max_flops_of.get(model, config.max_flops) * (1 + 1e-9)
    return tuple(f for f in savepoint_flops(config) if f <= cap)


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

    _refuse_top_level_tables(path)
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


# The study's own tables: under [frontier] they are [frontier.rl] and
# [frontier.rating]; at the top level of a file with a [frontier] table they
# would be another command's tables, and read by no one.
STUDY_TABLES = ("rl", "rating")


def _refuse_top_level_tables(path: str | Path) -> None:
    """A top-level ``[rl]`` beside ``[frontier]`` would be silently unread: say where it goes."""
    from harness.config_io import read_toml

    values = read_toml(path)
    if isinstance(values.get("frontier"), dict):
        for table in STUDY_TABLES:
            if isinstance(values.get(table), dict):
                raise ConfigError(f"{path}: [{table}] is a study's table: write it as "
                                  f"[frontier.{table}] (and [frontier.{table}.mcts] for its "
                                  "own tables) under [frontier]")
