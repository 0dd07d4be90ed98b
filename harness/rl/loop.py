"""The self-play step of ``harness suite``: an RL run plus its Elo report.

The suite's ``[rl] config`` names an ``harness rl`` TOML file; board, rules,
komi, seed and encoder come from the suite so that the self-play networks
play in the same tournament as the supervised ones. When that file names
neither ``model`` nor ``init``, the run starts from the suite's first
supervised network (its ``best.keras``). Rerunning the suite resumes an
unfinished run and skips a finished one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.config_io import read_toml
from harness.rl.config import config_from_mapping
from harness.rl.run import RLRun


def warm_start_from_suite(config, model: str, run: Path | None,
                          log: Callable[[str], None] = print, rl_config_path: str = "",
                          name: str = "") -> Path:
    """Continue one supervised network with self-play for the suite's per-run budget.

    With ``run=None`` the network starts from scratch (``rl_config_path``'s model).
    """
    rl_config_path = rl_config_path or config.rl.config
    values = read_toml(rl_config_path) if rl_config_path else {}
    if run is not None:
        values.update(model=model, init=str(Path(run) / "best.keras"))
    values.update(run=config.rl_run_name(name or model), runs_dir=config.models_dir,
                  board_size=config.board_size, komi=config.komi, rules=config.rules,
                  seed=config.seed, encoder=config.data.encoder)
    if config.rl.max_hours:
        values["max_hours"] = config.rl.max_hours
    values.setdefault("backend", config.backend)
    values.setdefault("ray_address", config.ray_address)
    rl_config = config_from_mapping(values, rl_config_path or "suite [rl]")
    rl_run = RLRun(rl_config, log=log)
    state = rl_run.run(resume=rl_run.exists())
    log(f"rl {name or model}: {state.generation - 1} generations, "
        f"{state.games_total} self-play games")
    return rl_config.run_dir


def final_network(run_dir: Path) -> Path | None:
    """The newest generation's network of an RL run, if it has played one."""
    networks = sorted((Path(run_dir) / "models").glob("gen-*.keras"))
    return networks[-1] if len(networks) > 1 else None


def first_network(run_dir: Path) -> Path | None:
    """Generation 0 of an RL run (the network it started from)."""
    path = Path(run_dir) / "models" / "gen-0000.keras"
    return path if path.exists() else None


def run_rl_from_suite(config, runs: list[Path], log: Callable[[str], None] = print) -> Path:
    """Run (or finish) the suite's RL run and write ``OUT/rl/elo.csv`` and ``elo.png``."""
    from harness.rl.report import rl_report

    values = read_toml(config.rl.config) if config.rl.config else {}
    if "model" not in values and "init" not in values:
        values["model"] = config.train.models[0]
        values["init"] = str(Path(runs[0]) / "best.keras")
    values.update(run=f"{config.name}-rl", runs_dir=config.models_dir,
                  board_size=config.board_size, komi=config.komi, rules=config.rules,
                  seed=config.seed, encoder=config.data.encoder)
    # The suite's backend, unless the rl config chooses its own.
    values.setdefault("backend", config.backend)
    values.setdefault("ray_address", config.ray_address)
    rl_config = config_from_mapping(values, config.rl.config or "suite [rl]")
    run = RLRun(rl_config, log=log)
    state = run.run(resume=run.exists())
    log(f"rl: {state.generation - 1} generations, {state.games_total} self-play games")
    out, _ = rl_report(rl_config.run_dir, out=config.out / "rl", count=5,
                       baselines=("random",), games_per_pair=2, playouts=16, progress=False)
    return out
