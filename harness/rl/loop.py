"""The self-play step of ``harness suite``: an RL run plus its Elo report.

The suite's ``[rl] config`` names an ``harness rl`` TOML file; board, rules,
komi, seed and encoder come from the suite so that the self-play networks
play in the same tournament as the supervised ones. When that file names
neither ``model`` nor ``init``, the run starts from the suite's first
supervised network (its ``best.keras``). The file's ``algorithm`` chooses
the loop (AlphaZero's searched self-play or AlphaGo's policy gradient), so
one study can continue its families under either, or warm-start with one and
train from scratch with the other. Rerunning the suite resumes an unfinished
run and skips a finished one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.config_io import from_mapping, read_saved_config, read_toml, values_of
from harness.distributed import BackendSettings
from harness.files import read_json
from harness.game.settings import GameSettings
from harness.rl.config import RLConfig
from harness.rl.runs import make_run


def suite_rl_run(config, source: str, name: str, *, start: tuple[str, Path] | None = None,
                 max_hours: float = 0.0, log: Callable[[str], None] = print) -> Path:
    """Run (or finish) one self-play run of the suite; its run directory.

    ``source`` is an ``harness rl`` TOML file; board, rules, komi, seed and
    encoder come from the suite. ``start`` is (zoo name, checkpoint) of a
    network to continue (a warm start); ``max_hours`` overrides the file's
    time budget when given.
    """
    values = with_suite_dataset(read_toml(source) if source else {}, config.dataset)
    if start is not None:
        values.update(model=start[0], init=str(start[1]))
    values.update(run=name, runs_dir=config.models_dir, seed=config.seed,
                  encoder=config.data.encoder, **values_of(config, GameSettings))
    if max_hours:
        values["max_hours"] = max_hours
    # The suite's backend, unless the rl config chooses its own.
    values = {**values_of(config, BackendSettings), **values}
    rl_config = from_mapping(RLConfig, values, source or "suite [rl]")
    rl_run = make_run(rl_config, log=log)  # the file's algorithm: AlphaZero or policy gradient
    state = rl_run.run(resume=rl_run.exists())
    log(f"rl {name}: {state.generation - 1} generations, {state.games_total} self-play games")
    return rl_config.run_dir


SUITE_DATASET = "suite"  # in an rl config run by the suite: the suite's own dataset
DATASET_KEYS = (("train", "mix_dataset"), ("selfplay", "start_dataset"), ("monitor", "dataset"))


def with_suite_dataset(values: dict, dataset: Path) -> dict:
    """``values`` with every dataset setting that says ``"suite"`` pointing at
    ``dataset`` (the file the suite's networks were trained on)."""
    values = dict(values)
    for table, key in DATASET_KEYS:
        section = values.get(table)
        if isinstance(section, dict) and section.get(key) == SUITE_DATASET:
            values[table] = {**section, key: str(dataset)}
    return values


def final_network(run_dir: Path) -> Path | None:
    """The network an RL run ends with, if it has played a generation: the
    newest one, or with gating the last one promoted (generation 0 when none
    passed, so a gated run never publishes a network weaker than its start)."""
    networks = sorted((Path(run_dir) / "models").glob("gen-*.keras"))
    if len(networks) < 2:
        return None
    config = read_saved_config(RLConfig, Path(run_dir) / "config.json")
    state = read_json(Path(run_dir) / "state.json", {})
    if config.gating.enabled and state.get("best"):
        return Path(run_dir) / state["best"]
    return networks[-1]


def first_network(run_dir: Path) -> Path | None:
    """Generation 0 of an RL run (the network it started from)."""
    path = Path(run_dir) / "models" / "gen-0000.keras"
    return path if path.exists() else None


def run_rl_from_suite(config, runs: list[Path], log: Callable[[str], None] = print) -> Path:
    """Run (or finish) the suite's RL run and write ``OUT/rl/elo.csv`` and ``elo.png``."""
    from harness.rl.strength import rl_report

    values = read_toml(config.rl.config) if config.rl.config else {}
    first = None if "model" in values or "init" in values else (
        config.train.models[0], Path(runs[0]) / "best.keras")
    run_dir = suite_rl_run(config, config.rl.config, f"{config.name}-rl", start=first, log=log)
    out, _ = rl_report(run_dir, out=config.out / "rl", count=5,
                       baselines=("random",), games_per_pair=2, playouts=16, progress=False)
    return out
