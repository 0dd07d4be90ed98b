"""Training what a study is missing: one ``harness train`` run per savepoint.

``savepoints = "per-budget"``: every (network, savepoint) is its own run with
a budget of the savepoint's samples, so its learning-rate schedule (warm-up,
decay) runs over exactly that budget, as a network trained for that compute
alone would be. The runs are the trainer's own: a finished run is skipped, a
killed or interrupted one resumes from its state and checkpoint, and a run
whose saved config is not the one the study asks for now is refused rather
than silently mixed in.

``savepoints = "cooldown"``: one constant-rate run per network, cut at each
savepoint's cool-down start, and a branch from each cut that cools the rate
down to the savepoint (:func:`cooldown_chain`, through
:func:`harness.train.fork.fork_run`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from harness.config_io import ConfigError
from harness.frontier.config import FrontierConfig
from harness.frontier.plan import Savepoint, flops_label, train_config
from harness.metrics import MetricsSettings
from harness.rl.config import RLConfig
from harness.train.config import TrainConfig

Log = Callable[[str], None]


class StudyInterrupted(Exception):
    """Training stopped on Ctrl-C (or SIGTERM) with its state saved; the exit code."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def ensure_savepoints(config: FrontierConfig, points: list[Savepoint], runs_dir: Path, *,
                      progress: bool, log: Log) -> Iterator[tuple[Savepoint, Path]]:
    """Each savepoint with its finished checkpoint, in the order they are made."""
    if config.savepoints == "per-budget":
        for i, point in enumerate(points, 1):
            log(f"[{i}/{len(points)}] {point.network.model} at {flops_label(point.flops)} FLOPs")
            yield point, ensure_savepoint(config, point, runs_dir, progress=progress, log=log)
        return
    chains = [sorted((p for p in points if p.network.model == model), key=lambda p: p.flops)
              for model in config.models]
    cuts = [stable_samples(config, chain) for chain in chains]  # every check before training
    done = 0
    for chain, cut in zip(chains, cuts, strict=True):
        for point, checkpoint in cooldown_chain(config, chain, cut, runs_dir,
                                                progress=progress, log=log):
            done += 1
            log(f"[{done}/{len(points)}] {point.network.model} at {flops_label(point.flops)} "
                "FLOPs cooled down")
            yield point, checkpoint


def ensure_savepoint(config: FrontierConfig, point: Savepoint, runs_dir: Path, *,
                     progress: bool, log: Log) -> Path:
    """The checkpoint of ``point``'s finished run, training or resuming it first."""
    wanted = train_config(config, point.network.model, runs_dir, point.run, point.samples)
    return _ensure_run(wanted, None, f"training {point.network.model} for {point.samples:,} "
                       f"samples ({flops_label(point.planned_flops)} FLOPs)",
                       progress=progress, log=log)


def stable_samples(config: FrontierConfig, chain: list[Savepoint]) -> list[int]:
    """Where each savepoint's cool-down starts: whole batches nearest ``1 -
    lr_cooldown`` of its samples, at least a batch on either side and after
    the warm-up (over ``lr_warmup`` of the smallest savepoint)."""
    batch, warmup = config.batch_size, config.lr_warmup * chain[0].samples
    cuts = []
    for point in chain:
        cut = round((1 - config.lr_cooldown) * point.samples / batch) * batch
        if cut < batch or cut >= point.samples or (warmup and cut <= warmup):
            raise ConfigError(
                f"{point.run}: lr_cooldown {config.lr_cooldown:g} leaves {cut:,} of its "
                f"{point.samples:,} samples to the constant rate (warm-up {warmup:,.0f}, "
                f"batch {batch}); a cool-down needs a batch on either side, after the "
                "warm-up: raise min_flops or change lr_cooldown")
        cuts.append(cut)
    return cuts


def cooldown_chain(config: FrontierConfig, chain: list[Savepoint], cuts: list[int],
                   runs_dir: Path, *, progress: bool,
                   log: Log) -> Iterator[tuple[Savepoint, Path]]:
    """One network's savepoints, smallest first, made as Hägele et al. (2024) do.

    The stable runs ``MODEL-FLOPS-stable`` are one constant-rate run cut at
    ``cuts`` (the k-th continues the (k-1)-th's checkpoint, k epochs in all);
    each savepoint's ``MODEL-FLOPS-cooldown`` continues its stable run's
    checkpoint, optimizer state included, for one more epoch that ends at the
    savepoint, the rate falling linearly to ``lr_final``. A savepoint's
    compute is its stable run's and its cool-down's together.
    """
    warmup = config.lr_warmup * chain[0].samples
    previous: Path | None = None
    for k, (point, cut) in enumerate(zip(chain, cuts, strict=True), 1):
        model = point.network.model
        stable = train_config(config, model, runs_dir,
                              point.run.removesuffix("-cooldown") + "-stable", cut, epochs=k,
                              lr_schedule="constant", lr_warmup=warmup / cut)
        _ensure_run(stable, previous, f"the constant-rate run of {model} to {cut:,} samples",
                    progress=progress, log=log)
        previous = stable.run_dir
        cooled = train_config(config, model, runs_dir, point.run, point.samples, epochs=k + 1,
                              lr_warmup=warmup / point.samples,
                              lr_cooldown=(point.samples - cut) / point.samples)
        yield point, _ensure_run(
            cooled, stable.run_dir, f"cooling {model} down from {cut:,} to {point.samples:,} "
            f"samples ({flops_label(point.planned_flops)} FLOPs)", progress=progress, log=log)


def _ensure_run(wanted: TrainConfig, source: Path | None, doing: str, *, progress: bool,
                log: Log) -> Path:
    """The last checkpoint of the finished run ``wanted``: skipped when finished,
    resumed when not, else started (from scratch, or as a branch of ``source``)."""
    from harness.train.fork import fork_run
    from harness.train.preflight import resolve_against_world, train_run
    from harness.train.run_dir import RunDir

    run = RunDir(wanted.run_dir)
    name = run.path.name
    resolved = resolve_against_world(wanted)[0]
    if run.exists():
        saved = run.read_config()
        check_same(saved, resolved, run.path)
        state = run.read_state()
        if saved.pace.run_over(state):
            log(f"{name}: finished, {state.samples_seen:,} samples; skipping")
            return run.path / state.checkpoint
        log(f"{name}: unfinished; resuming")
        wanted, resume = saved, True
    elif source is not None:
        log(f"{name}: {doing}, continuing {source.name}")
        fork_run(source, resolved)
        wanted, resume = resolved, True
    else:
        log(f"{name}: {doing}")
        resume = False
    result = train_run(wanted, resume=resume, progress=progress, log=log)
    if result.exit_code != 0:
        raise StudyInterrupted(f"training {name} stopped ({result.message}); run the "
                               "same harness frontier command again to continue",
                               result.exit_code)
    return run.path / run.read_state().checkpoint


METRICS_SWITCHES = tuple(f.name for f in dataclasses.fields(MetricsSettings))


def check_same(saved: TrainConfig | RLConfig, wanted: TrainConfig | RLConfig, path: Path) -> None:
    """Refuse a run made under other settings: its savepoints would not be this study's."""
    have, want = _plain(saved.to_dict()), _plain(wanted.to_dict())
    # where it was found, and what it writes beside its savepoints, do not make them differ
    for key in sorted((set(have) | set(want)) - {"run", "runs_dir", *METRICS_SWITCHES}):
        if have.get(key) != want.get(key):
            raise ConfigError(f"{path}: {key} was {have.get(key)!r} for this run, the study now "
                              f"says {want.get(key)!r}; move the run away or restore the setting")


def _plain(values: dict) -> dict:
    """Tuples as lists and whole floats as they are written: what config.json holds."""
    return json.loads(json.dumps(values))
