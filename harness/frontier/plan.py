"""From training FLOPs to each network's sample budget.

Every family must get the same training FLOPs at a savepoint, so a savepoint
is converted per network: ``samples = flops / (TRAIN_FLOPS_FACTOR x forward
FLOPs per position)`` (:mod:`harness.nets.compute`), rounded to whole batches
so that the run spends exactly its budget (training batches are always
full). The networks are built once, untrained, to count their FLOPs and
parameters; nothing here trains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.config_io import ConfigError, from_mapping, values_of
from harness.devices import DeviceSettings
from harness.frontier.config import FrontierConfig, family_of, model_flops, savepoint_flops
from harness.metrics import MetricsSettings
from harness.nets.compute import TRAIN_FLOPS_FACTOR
from harness.nets.plugins import PluginSettings, directory_name
from harness.train.config import DataSplitSettings, TrainConfig, TrainingSettings


@dataclass(frozen=True)
class Network:
    """One model of the study and what it costs."""

    model: str
    family: str
    forward_flops: int  # per position
    params: int


@dataclass(frozen=True)
class Savepoint:
    """One network trained to one savepoint's FLOPs: ``samples`` training
    samples, in the run named ``run``."""

    network: Network
    flops: float  # requested training FLOPs
    samples: int
    run: str

    @property
    def planned_flops(self) -> int:
        """The training FLOPs of exactly ``samples`` (the request, to within half a batch)."""
        return TRAIN_FLOPS_FACTOR * self.network.forward_flops * self.samples


def sample_budget(flops: float, forward_flops: int, batch_size: int) -> int:
    """Whole batches of samples nearest to ``flops`` of training; 0 below half a batch."""
    samples = flops / (TRAIN_FLOPS_FACTOR * forward_flops)
    return round(samples / batch_size) * batch_size


def flops_label(flops: float) -> str:
    """``1.00e12``: three digits tell apart savepoints up to 40 per decade."""
    return f"{flops:.2e}".replace("e+", "e")


def run_name(model: str, flops: float, suffix: str = "") -> str:
    """``a0.tiny-1.00e12``; a cool-down branch ``-cooldown``, its constant-rate stem ``-stable``."""
    return f"{directory_name(model)}-{flops_label(flops)}{suffix}"


def train_config(config: FrontierConfig, model: str, runs_dir: Path, run: str,
                 samples: int, **changes: object) -> TrainConfig:
    """``harness train``'s config of one run: the study's training settings, a
    budget of ``samples``, no validation of its own (the study evaluates every
    savepoint itself, on the same positions) and the study's live metrics; ``changes``
    (a cool-down's epochs and schedule) over those."""
    values = {
        **values_of(config, TrainingSettings),
        **values_of(config, DataSplitSettings),
        **values_of(config, PluginSettings),
        **values_of(config, DeviceSettings),
        "budget": float(samples), "budget_unit": "samples", "epochs": 1, "seeds": (),
        "val_split": "", "model": model, "run": run, "runs_dir": str(runs_dir),
        **values_of(config, MetricsSettings), "seed": config.seed, **changes,
    }
    return from_mapping(TrainConfig, values, f"frontier run {run}")


def networks(config: FrontierConfig, runs_dir: Path,
             log: Callable[[str], None] = print) -> list[Network]:
    """Every model of the study, built once to count its FLOPs and parameters."""
    from harness.train.preflight import network_cost

    out = []
    for model in config.models:
        probe = train_config(config, model, runs_dir, directory_name(model), config.batch_size)
        forward, params = network_cost(probe)
        out.append(Network(model, family_of(config, model), forward, params))
        log(f"{model}: {forward:,} FLOPs per position forward, {params:,} parameters")
    return out


def plan_savepoints(config: FrontierConfig, nets: list[Network]) -> list[Savepoint]:
    """Every network at every savepoint, smallest compute first; a savepoint
    worth less than one batch to some network is a :class:`ConfigError`."""
    flops = savepoint_flops(config)
    suffix = "-cooldown" if config.savepoints == "cooldown" else ""
    own = {n.model: model_flops(config, n.model) for n in nets}
    names = [run_name(n.model, f, suffix) for n in nets for f in own[n.model]]
    if len(set(names)) != len(names):
        raise ConfigError(f"two savepoints share the run name {names[0]!r}: lower "
                          "points_per_decade")
    out = []
    for f in flops:
        for n in nets:
            if f not in own[n.model]:
                continue
            samples = sample_budget(f, n.forward_flops, config.batch_size)
            if samples < config.batch_size:
                raise ConfigError(
                    f"min_flops: {f:.3g} training FLOPs are "
                    f"{f / (TRAIN_FLOPS_FACTOR * n.forward_flops):,.0f} samples of {n.model}, "
                    f"less than one batch of {config.batch_size}; raise min_flops or lower "
                    "batch_size")
            out.append(Savepoint(n, f, samples, run_name(n.model, f, suffix)))
    return out
