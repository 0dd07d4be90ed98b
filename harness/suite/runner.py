"""``harness suite``: data -> supervised training -> (RL) -> tournament -> report.

Each step checks its own outputs first and skips when they are complete, so
rerunning an interrupted suite finishes it; the steps that are themselves
resumable (datagen, ingest, training, tournament) pick up where they stopped.
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from harness import __version__
from harness.arena.settings import GenerateSettings, MatchSettings, RoundSettings
from harness.config_io import values_of
from harness.cpu import cpu_name
from harness.data.settings import IngestSettings
from harness.distributed import BackendSettings
from harness.files import atomic_json, atomic_path, read_json
from harness.game.settings import GameSettings
from harness.suite.config import SCRATCH, SCRATCH_FIRST, SCRATCH_LAST, SuiteConfig
from harness.train.config import TrainingSettings

Log = Callable[[str], None]


def run_suite(config: SuiteConfig, *, progress: bool = True, log: Log = print) -> Path:
    if config.backend == "ray":
        # One Ray session for every stage (each would otherwise start its own).
        from harness.distributed.backend import ray_session

        with ray_session(config.ray_address):
            return _run_suite(config, progress=progress, log=log)
    return _run_suite(config, progress=progress, log=log)


def _run_suite(config: SuiteConfig, *, progress: bool, log: Log) -> Path:
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    atomic_json(out / "config.json", config.to_dict())
    atomic_json(out / "environment.json", environment())
    # Summed over every invocation, written after each step: a resumed or
    # killed suite still reports what its stages cost in all.
    timings = read_timings(out / "timings.json")

    def step(name: str, fn, *args):
        started = time.perf_counter()
        log(f"== {name}")
        value = fn(*args)
        spent = time.perf_counter() - started
        timings[name] = round(timings.get(name, 0.0) + spent, 1)
        atomic_json(out / "timings.json", timings)
        return value

    dataset = step("data", ensure_dataset, config, progress, log)
    runs = step("train", ensure_trained, config, dataset, progress, log)
    step("compare", ensure_comparison, config, dataset, runs, log)
    if config.frontier.enabled:
        step("frontier", ensure_frontier, config, progress, log)
    step("bench", ensure_zoo_table, config, log)
    if config.rl.enabled:
        step("rl", ensure_rl, config, runs, log)
    step("tournament", ensure_tournament, config, runs, progress, log)
    from harness.suite.document import write_report

    return step("report", write_report, config, runs)


def read_timings(path: Path) -> dict[str, float]:
    """Seconds per step from earlier runs of this suite (none if unreadable)."""
    try:
        values = read_json(path)
    except ValueError:  # a torn or hand-edited file: start the count again
        return {}
    if not isinstance(values, dict):
        return {}
    return {str(k): float(v) for k, v in values.items() if isinstance(v, int | float)}


# --- data ---------------------------------------------------------------------------
def ensure_dataset(config: SuiteConfig, progress: bool, log: Log) -> Path:
    from harness.data.dataset import check_file
    from harness.data.ingest import IngestConfig, ingest
    from harness.data.layout import DatasetError

    path = config.dataset
    try:
        check_file(path)
        log(f"dataset {path} is complete; skipping ingest")
        return path
    except DatasetError:
        pass
    sources = list(config.data.sources) or [str(generate_games(config, progress, log))]
    path.parent.mkdir(parents=True, exist_ok=True)
    journal = path.with_name(path.name + ".journal")
    result = ingest(
        IngestConfig(
            sources=sources,
            output=path,
            board_size=config.board_size,
            seed=config.seed,
            resume=journal.exists(),
            overwrite=path.exists(),
            progress=progress,
            **values_of(config.data, IngestSettings),
            **values_of(config, BackendSettings),
        )
    )
    log(f"ingested {result.games:,} games, {result.positions:,} positions into {path}")
    return path


def generate_games(config: SuiteConfig, progress: bool, log: Log) -> Path:
    from harness.arena.datagen import DatagenConfig, generate

    player = config.data.player
    if needs_missing_gnugo(player):
        log(f"GNU Go is not installed: generating with {config.data.fallback_player} instead")
        player = config.data.fallback_player
    datagen = DatagenConfig(
        **{**values_of(config.data, GenerateSettings), "player": player},
        out=str(config.out / "datagen"),
        parallel=max(1, os.cpu_count() or 1),
        seed=config.seed,
        **values_of(config, GameSettings),
        **values_of(config, BackendSettings),
    )
    log(f"no archive given: {datagen.games} games of {datagen.player} against itself")
    rows = generate(datagen, progress=progress)
    errors = [r for r in rows if r.error]
    if len(errors) == len(rows):
        raise RuntimeError(f"datagen: every game failed, first error: {errors[0].error}")
    return datagen.games_dir


# --- training -----------------------------------------------------------------------
def needs_missing_gnugo(spec: str) -> bool:
    """A ``gnugo:N`` spec on a machine without GNU Go (the suite then says so and adapts)."""
    from harness.arena.tournament import parse_entry
    from harness.players.gtp_client import find_gnugo

    return parse_entry(spec)[1].kind == "gnugo" and find_gnugo() is None


def ensure_trained(config: SuiteConfig, dataset: Path, progress: bool, log: Log) -> list[Path]:
    """Train (or finish) every model with every seed; the first seed's run of each model."""
    for seed in config.seeds:
        for model in config.train.models:
            train_one(config, dataset, model, progress, log, seed)
    return [seed_runs(config, model)[0] for model in config.train.models]


def seed_runs(config: SuiteConfig, model: str) -> list[Path]:
    """A model's run directories, one per seed."""
    return [Path(config.models_dir) / config.run_name(model, s) for s in config.seeds]


def train_one(config: SuiteConfig, dataset: Path, model: str, progress: bool, log: Log,
              seed: int | None = None) -> Path:
    from harness.train.preflight import resolve_config, train_run
    from harness.train.run_dir import RunDir

    seed = config.seeds[0] if seed is None else seed
    overrides = {
        **values_of(config.train, TrainingSettings),
        "seeds": (),  # the suite runs every seed itself
        "model": model,
        "data": str(dataset),
        "run": config.run_name(model, seed),
        "runs_dir": config.models_dir,
        "seed": seed,
    }
    run_dir = Path(config.models_dir) / config.run_name(model, seed)
    resume = RunDir(run_dir).exists()
    if resume and _finished(run_dir):
        log(f"{run_dir} finished; skipping")
        return run_dir
    if resume:
        log(f"{run_dir} unfinished; resuming")
        train_config = RunDir(run_dir).read_config()
    else:
        train_config = resolve_config(None, overrides, resume=False)
    result = train_run(train_config, resume=resume, progress=progress, log=log)
    if result.exit_code != 0:
        raise RuntimeError(f"training {model} stopped: {result.message}")
    return run_dir


def _finished(run_dir: Path) -> bool:
    """All epochs done, or the whole compute budget spent."""
    from harness.train.run_dir import RunDir
    try:
        run = RunDir(run_dir)
        state, train_config = run.read_state(), run.read_config()
    except (OSError, ValueError, KeyError):
        return False
    return train_config.pace.run_over(state)


# --- frontier -------------------------------------------------------------------------
def ensure_frontier(config: SuiteConfig, progress: bool, log: Log) -> Path:
    """Train (or finish) and score the ``[frontier]`` study in ``OUT/frontier``;
    its Findings go to ``findings.json`` there for the suite's report."""
    from harness.frontier.study import run_frontier

    out = config.out / "frontier"
    result = run_frontier(config.frontier_config(), out, progress=progress, log=log)
    atomic_json(out / "findings.json", result.findings)
    return out


# --- paired comparison --------------------------------------------------------------
def ensure_comparison(config: SuiteConfig, dataset: Path, runs: list[Path], log: Log) -> Path:
    """Every model (first seed) and the trivial baseline on the same validation positions."""
    from harness.suite.evidence import write_comparison

    path = config.out / "compare" / "comparison.json"
    if path.exists():
        log(f"{path} exists; skipping")
        return path
    networks = [(m, r / "best.keras") for m, r in zip(config.train.models, runs, strict=True)]
    seeds = {m: seed_runs(config, m) for m in config.train.models}
    return write_comparison(path, networks, dataset, seeds, log)


# --- zoo table ----------------------------------------------------------------------
def ensure_zoo_table(config: SuiteConfig, log: Log) -> Path:
    """Parameters, FLOPs and forward passes/s by batch size for every listed model."""
    import pandas as pd

    from harness.bench.models import forward_rate
    from harness.features import get_encoder
    from harness.nets import build_model, model_summary
    from harness.nets.plugins import model_spec

    path = config.out / "zoo.csv"
    if path.exists():
        return path
    planes = get_encoder(config.data.encoder).planes
    rows = []
    for name in config.train.models:
        model = build_model(name, config.board_size, planes)
        summary = model_summary(model)
        row = {
            "model": name,
            "family": model_spec(name).family,
            "params": summary["params"],
            "flops": summary["flops"],
        }
        for batch in config.bench.batch_sizes:
            # forward_rate counts batches; the table compares positions.
            row[f"positions/s b{batch}"] = batch * forward_rate(model, batch, config.bench.seconds)
        rows.append(row)
        log(f"{name}: {row['params']:,} params, {row['flops']:,} FLOPs")
    frame = pd.DataFrame(rows)
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)
    return path


# --- RL -----------------------------------------------------------------------------
def ensure_rl(config: SuiteConfig, runs: list[Path], log: Log) -> Path:
    from harness.rl.loop import run_rl_from_suite, suite_rl_run

    if not (config.rl.warm_start or config.rl.scratch):
        return run_rl_from_suite(config, runs, log)
    by_model = dict(zip(config.train.models, runs, strict=True))
    for model in config.rl.warm_start:
        suite_rl_run(config, config.rl.config, config.rl_run_name(model),
                     start=(model, by_model[model] / "best.keras"),
                     max_hours=config.rl.max_hours, log=log)
    if config.rl.scratch:
        suite_rl_run(config, config.rl.scratch, config.rl_run_name(SCRATCH),
                     max_hours=config.rl.scratch_hours or config.rl.max_hours, log=log)
    from harness.rl.strength import plot_held_out

    warm_runs = [Path(config.models_dir) / config.rl_run_name(m) for m in config.rl.warm_start]
    plot_held_out(warm_runs, config.out / "rl" / "heldout.png")  # nothing without [monitor]
    return Path(config.models_dir)


# --- tournament ---------------------------------------------------------------------
def tournament_players(config: SuiteConfig, runs: list[Path]) -> list:
    """The supervised networks, each warm-started one after self-play, and the baselines."""
    networks = [(model, run / "best.keras")
                for model, run in zip(config.train.models, runs, strict=True)]
    if config.rl.enabled:
        from harness.rl.loop import final_network, first_network

        for model in config.rl.warm_start:
            final = final_network(Path(config.models_dir) / config.rl_run_name(model))
            if final is not None:
                networks.append((f"{model}+rl", final))
        if config.rl.scratch:
            scratch = Path(config.models_dir) / config.rl_run_name(SCRATCH)
            first, final = first_network(scratch), final_network(scratch)
            if first is not None and final is not None:
                networks += [(SCRATCH_FIRST, first), (SCRATCH_LAST, final)]
    from harness.arena.tournament import NamedPlayer
    from harness.players.spec import PlayerSpec

    tournament = config.tournament
    playouts = tournament.model_playouts if tournament.model_player == "mcts" else None
    players = [NamedPlayer(name, PlayerSpec(config.tournament.model_player,
                                            model=Path(checkpoint), playouts=playouts))
               for name, checkpoint in networks]
    return players + [b for b in config.tournament.baselines if not needs_missing_gnugo(b)]


def ensure_tournament(config: SuiteConfig, runs: list[Path], progress: bool, log: Log):
    from harness.arena.tournament import TournamentConfig, run_tournament

    tournament = TournamentConfig(
        players=tournament_players(config, runs),
        out=str(config.out / "tournament"),
        seed=config.seed,
        **values_of(config.tournament, RoundSettings),
        **values_of(config.tournament, MatchSettings),
        **values_of(config, GameSettings),
        **values_of(config, BackendSettings),
    )
    rows = run_tournament(tournament, progress=progress)
    errors = sum(1 for r in rows if r.error)
    log(f"tournament: {len(rows)} games, {errors} errors")
    return rows


# --- helpers ------------------------------------------------------------------------
def environment() -> dict[str, str]:
    """Versions, backend and machine, so a report says what produced it."""
    import keras
    import numba
    import numpy

    from harness.devices import device

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    dev = device()
    return {
        "harness": __version__,
        "git_commit": commit or "unknown",
        "python": platform.python_version(),
        "keras_backend": f"{dev.backend} {dev.version}",
        "keras": keras.__version__,
        "numpy": numpy.__version__,
        "numba": numba.__version__,
        "machine": platform.machine(),
        "cpu": cpu_name(),
        "cpu_count": str(os.cpu_count()),
        "gpus": ", ".join(dev.gpus) or "none",
        "platform": platform.platform(),
    }


