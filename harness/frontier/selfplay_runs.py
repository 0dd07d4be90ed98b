"""A self-play study's runs: one ``harness rl`` run per model, to the largest savepoint.

Self-play cannot be told ahead how many generations a compute budget buys
(games grow longer as the network learns, and every generation's self-play
FLOPs are counted as they are spent), so each model's run is one
:class:`~harness.rl.run.RLRun` that goes on, generation by generation, until
its cumulative compute (training and self-play FLOPs,
:class:`~harness.nets.compute.Compute`) reaches the largest savepoint. Every
generation checkpoint records the run's compute when it was saved; a
savepoint's player is the first generation at or past it
(:func:`select_generations`). The runs are the RL loop's own: a finished run
is left as it is, a killed one resumes from its last commit, and a run whose
saved config is not the one the study asks for now is refused.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.config_io import ConfigError, from_mapping, read_saved_config, values_of
from harness.devices import DeviceSettings
from harness.frontier.config import FrontierConfig
from harness.metrics import MetricsSettings
from harness.nets.compute import Compute
from harness.nets.plugins import PluginSettings, directory_name
from harness.rl.config import RLConfig, RLSettings

# A study's run is stopped by its compute, not by a generation count: this is
# only the ceiling RLConfig needs, never reached by a study of sane size.
GENERATION_CEILING = 1_000_000


@dataclass(frozen=True)
class Generation:
    """One generation checkpoint of a run and the run's compute when it was saved."""

    generation: int
    checkpoint: Path
    compute: Compute

    @property
    def flops(self) -> int:
        """Training and self-play FLOPs: the study's compute axis."""
        return self.compute.flops


def rl_config(config: FrontierConfig, model: str, runs_dir: Path) -> RLConfig:
    """``harness rl``'s config of ``model``'s run: the study's ``[rl]`` table,
    its plugins and backend, its seed, the run in ``runs_dir``."""
    values = {**values_of(config.rl, RLSettings), **values_of(config, PluginSettings),
              **values_of(config, DeviceSettings), **values_of(config, MetricsSettings),
              "model": model,
              "run": directory_name(model), "runs_dir": str(runs_dir), "seed": config.seed,
              "generations": GENERATION_CEILING}
    return from_mapping(RLConfig, values, f"frontier run {model}")


def ensure_run(config: FrontierConfig, model: str, runs_dir: Path, until_flops: float, *,
               log: Callable[[str], None] = print) -> list[Generation]:
    """``model``'s run, played (or resumed) until its compute reaches
    ``until_flops``; every committed generation with its compute."""
    from harness.frontier.runs import check_same
    from harness.rl.run import RLRun

    wanted = rl_config(config, model, runs_dir)
    run = RLRun(wanted, log=log)
    if run.exists():
        check_same(read_saved_config(RLConfig, run.path / "config.json"), wanted, run.path)
        done = generations(run.path)
        if done[-1].flops >= until_flops:
            log(f"{run.path.name}: finished, generation {done[-1].generation} at "
                f"{done[-1].flops:.3g} FLOPs; skipping")
            return done
    log(f"{run.path.name}: self-play until {until_flops:.3g} training and self-play FLOPs")
    run.run(resume=run.exists(), until_flops=until_flops)
    return generations(run.path)


def generations(run_dir: Path) -> list[Generation]:
    """The run's committed generations, 0 first, each with its checkpoint's compute
    (a generation still under way is not one: its checkpoint may be replaced)."""
    from harness.files import read_json
    from harness.nets.info import read_model_info

    state = read_json(run_dir / "state.json")
    if not isinstance(state, dict):
        raise ConfigError(f"{run_dir}: no state.json; move the folder away and run again")
    out = []
    for g in range(int(state["generation"])):
        path = run_dir / "models" / f"gen-{g:04d}.keras"
        info = read_model_info(path) if path.exists() else None
        if info is None or info.compute is None:
            raise ConfigError(f"{path}: no checkpoint with its compute recorded; move the run "
                              "away and run the study again")
        out.append(Generation(g, path, info.compute))
    return out


def select_generations(flops: Sequence[int | float], savepoints: Sequence[float]
                       ) -> list[int]:
    """For each savepoint, the index of the first generation whose compute
    ``flops`` (cumulative, so non-decreasing) is at or past it; a savepoint
    past the last generation is a ValueError (the run has not got there)."""
    if any(b < a for a, b in itertools.pairwise(flops)):
        raise ValueError(f"a run's cumulative compute cannot fall: {list(flops)}")
    out = []
    for s in savepoints:
        index = next((i for i, f in enumerate(flops) if f >= s), None)
        if index is None:
            raise ValueError(f"savepoint {s:.3g} FLOPs is past the run's last generation "
                             f"({flops[-1]:.3g} FLOPs)")
        out.append(index)
    return out

