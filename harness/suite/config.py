"""The study a suite runs: one TOML file, one dataclass per section.

Sections mirror the pipeline: ``[data]`` (archives to ingest, or games to
generate), ``[train]`` (the models and how to train them), ``[frontier]``
(optional: the same models at several computes), ``[rl]`` (optional
self-play), ``[tournament]`` and ``[bench]``. A section inherits
the settings of the stage it configures, so its keys and defaults are that
stage's (``harness ingest``, ``harness train``, ``harness tournament``).
Unknown keys and wrong types stop the suite with one line before any work
starts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.arena.settings import GenerateSettings, MatchSettings, RoundSettings
from harness.config_io import ConfigError, from_mapping, read_toml, values_of
from harness.data.settings import IngestSettings
from harness.devices import DeviceSettings
from harness.distributed import BackendSettings
from harness.frontier.config import SET_BY_STUDY, FrontierConfig, SavepointSettings
from harness.game.settings import GameSettings
from harness.nets.plugins import PluginSettings, directory_name
from harness.train.config import TrainingSettings


@dataclass(frozen=True)
class DataSection(IngestSettings, GenerateSettings):
    """The ingest's settings (``harness ingest``'s), and datagen's for a study
    without archives."""

    sources: list[str] = field(default_factory=list)  # empty: generate games
    fallback_player: str = "uct:200"  # used when ``player`` needs GNU Go and it is missing


@dataclass(frozen=True)
class TrainSection(TrainingSettings):
    """``harness train``'s settings for every model of the study. With a
    ``budget`` every model gets the same compute (equal compute), else
    ``epochs`` x ``epoch_samples`` (equal samples); every model is trained
    once per seed of ``seeds`` (tables show the mean over seeds with its
    interval; empty: the suite's seed only)."""

    models: list[str] = field(default_factory=lambda: ["a0.small"])


@dataclass(frozen=True)
class FrontierSection(SavepointSettings):
    """The study's models once more, each at the savepoints of a compute
    range (``harness frontier``'s, on the study's dataset with ``[train]``'s
    optimizer and rate): the answer as a curve beside the one-budget
    comparison. With cool-down savepoints the rate is constant with a
    ``wsd`` cool-down branch at each savepoint, whatever ``[train]``'s
    schedule."""

    enabled: bool = False


@dataclass(frozen=True)
class RLSection:
    enabled: bool = False
    config: str = ""  # an ``harness rl`` config; its model comes from [train] when empty
    # Continue these supervised networks with self-play (warm start), each for
    # ``max_hours``; the tournament then plays every one before and after. Empty:
    # one run as ``config`` says (from scratch unless it names ``init``).
    warm_start: list[str] = field(default_factory=list)
    max_hours: float = 0.0  # per warm-started run; 0: the rl config's own budget
    # Also an ``harness rl`` config run from scratch for ``max_hours`` (its
    # generation 0 and last generation then play in the tournament): the
    # check that self-play learns at all. Empty: none.
    scratch: str = ""
    scratch_hours: float = 0.0  # the from-scratch run's budget; 0: max_hours


@dataclass(frozen=True)
class TournamentSection(RoundSettings, MatchSettings):
    """``harness tournament``'s round and match settings, and who plays: every
    network as ``model_player`` and the ``baselines``."""

    model_player: str = "policy"  # "policy" (raw network) or "mcts"
    # The networks' search under model_player = "mcts" (the cap when move_time
    # is set); baselines keep their own budgets.
    model_playouts: int = 32
    baselines: list[str] = field(default_factory=lambda: ["random", "uct:100"])  # gnugo:N too


@dataclass(frozen=True)
class BenchSection:
    batch_sizes: list[int] = field(default_factory=lambda: [1, 16, 64, 256])
    seconds: float = 0.5
    diagrams: int = 2  # sample positions with every model's policy heat map


@dataclass(frozen=True, kw_only=True)
class SuiteConfig(GameSettings, BackendSettings, PluginSettings, DeviceSettings):
    """A study. Its game settings and its backend (where ingest, datagen, RL
    self-play and tournament games run) are passed to every stage."""

    name: str
    seed: int = 0
    results_dir: str = "results"
    models_dir: str = "models"
    datasets_dir: str = "datasets"
    data: DataSection = field(default_factory=DataSection)
    train: TrainSection = field(default_factory=TrainSection)
    frontier: FrontierSection = field(default_factory=FrontierSection)
    rl: RLSection = field(default_factory=RLSection)
    tournament: TournamentSection = field(default_factory=TournamentSection)
    bench: BenchSection = field(default_factory=BenchSection)

    @property
    def out(self) -> Path:
        return Path(self.results_dir) / self.name

    @property
    def dataset(self) -> Path:
        return Path(self.datasets_dir) / f"{self.name}.h5"

    @property
    def seeds(self) -> list[int]:
        return list(self.train.seeds) or [self.seed]

    def run_name(self, model: str, seed: int | None = None) -> str:
        """``NAME-MODEL``, or ``NAME-MODEL-seedS`` for every seed of a multi-seed study."""
        model = directory_name(model)
        if not self.train.seeds:
            return f"{self.name}-{model}"
        return f"{self.name}-{model}-seed{self.seeds[0] if seed is None else seed}"

    def rl_run_name(self, model: str) -> str:
        """A warm-started run's name; ``SCRATCH`` names the from-scratch run."""
        return f"{self.name}-rl-{directory_name(model)}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def frontier_config(self) -> FrontierConfig:
        """The ``[frontier]`` section as a supervised frontier study of
        ``[train]``'s models on the study's dataset (raises ConfigError)."""
        training = {k: v for k, v in values_of(self.train, TrainingSettings).items()
                    if k not in SET_BY_STUDY}
        if self.frontier.savepoints == "cooldown":
            training["lr_schedule"] = "wsd"
        return from_mapping(FrontierConfig, {
            **training, **values_of(self.frontier, SavepointSettings),
            "models": list(self.train.models), "data": str(self.dataset), "seed": self.seed,
            "plugins": list(self.plugins), "keras_backend": self.keras_backend,
        }, "[frontier]")


SCRATCH = "scratch"  # rl_run_name(SCRATCH): the suite's from-scratch self-play run
# Tournament names of the from-scratch run's first and last networks.
SCRATCH_FIRST, SCRATCH_LAST = "selfplay-gen0", "selfplay-last"


def load_suite_config(path: str | Path) -> SuiteConfig:
    path = Path(path)
    values = read_toml(path)
    values.setdefault("name", path.stem)
    config = from_mapping(SuiteConfig, values, str(path))
    _check(config, path)
    return config


def _check(config: SuiteConfig, path: Path) -> None:
    from harness.devices import use_backend
    from harness.features import get_encoder
    from harness.nets.plugins import load_plugins, model_spec

    if not config.train.models:
        raise ConfigError(f"{path} [train]: models is empty")
    try:
        use_backend(config.keras_backend)
        load_plugins(config.plugins)
    except ValueError as e:
        raise ConfigError(f"{path}: {e}") from None
    for name in config.train.models:
        try:
            model_spec(name)
        except ValueError as e:
            raise ConfigError(f"{path} [train]: {e}") from None
    try:
        get_encoder(config.data.encoder)
    except (KeyError, ValueError) as e:
        raise ConfigError(f"{path} [data]: {e}") from None
    for name in config.rl.warm_start:
        if name not in config.train.models:
            raise ConfigError(f"{path} [rl]: warm_start model {name!r} is not in [train] models")
    if config.frontier.enabled:
        try:
            config.frontier_config()
        except ConfigError as e:
            raise ConfigError(f"{path} {e}") from None
    if config.tournament.model_player not in ("policy", "mcts"):
        raise ConfigError(f"{path} [tournament]: model_player must be 'policy' or 'mcts'")
    for source in config.data.sources:
        try:
            found = Path(source).exists()
        except (OSError, ValueError):  # a name too long, or with a NUL
            found = False
        if not found:
            raise ConfigError(f"{path} [data]: source {source} does not exist")
