"""The supervised training loop: epochs of N samples, checkpoints, resume, Ctrl-C.

The loop is explicit (``train_on_batch``) rather than ``fit`` because the two
hard requirements are about *steps*: a resumed run must continue the
optimizer's iteration counter and see the same batches an uninterrupted run
would, and Ctrl-C must finish the current step, checkpoint and stop.
"""

from __future__ import annotations

import dataclasses
import math
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.devices import device, forward_rows
from harness.metrics import MetricsLog
from harness.train.batch_norm import recalibrate_from_source
from harness.train.config import ConfigError, OptimizerSettings, TrainConfig
from harness.train.distribute import make_strategy, optimizer_step, train_batch
from harness.train.evaluation import evaluate_model, model_value_loss
from harness.train.run_dir import RunDir, RunState
from harness.train.sources import BatchSource, epoch_batches, to_head_targets

EXIT_INTERRUPTED = 130
DECAY_EXCLUDED = ("bias", "gamma", "beta", "moving_mean", "moving_variance")


@dataclass
class TrainingPlan:
    """A checked config plus what it resolved to; see :mod:`harness.train.preflight`."""

    config: TrainConfig
    train: BatchSource
    val: BatchSource | None
    build_model: Callable[[], object]  # a fresh, uncompiled keras.Model
    load_model: Callable[[Path], object]  # a compiled checkpoint, optimizer included


@dataclass
class TrainResult:
    exit_code: int
    epochs_done: int
    step: int
    run_dir: Path
    message: str = ""


class _StopFlag:
    """First SIGINT: stop after the current step. Second: stop now."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None

    def __enter__(self) -> _StopFlag:
        try:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        except ValueError:  # not the main thread: no handler, plain KeyboardInterrupt
            self._previous = None
        return self

    def _handle(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\ninterrupt: finishing the current step, then checkpointing "
              "(Ctrl-C again to abort)", file=sys.stderr)

    def __exit__(self, *exc) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def make_optimizer(settings: OptimizerSettings, rate):
    """The optimizer ``settings`` name, at ``rate``: a number (set again before
    every step by a budgeted run) or a Keras schedule of the step counter."""
    import keras

    wd = settings.weight_decay or None
    if settings.optimizer == "adam":
        cls = keras.optimizers.AdamW if wd else keras.optimizers.Adam
        opt = cls(learning_rate=rate, weight_decay=wd) if wd else cls(learning_rate=rate)
    else:
        opt = keras.optimizers.SGD(learning_rate=rate, momentum=settings.momentum,
                                   nesterov=settings.nesterov, weight_decay=wd)
    _exclude_from_decay(opt)
    return opt


def _exclude_from_decay(optimizer) -> None:
    # Not saved with the optimizer, so applied again after every load.
    if getattr(optimizer, "weight_decay", None):
        optimizer.exclude_from_weight_decay(var_names=list(DECAY_EXCLUDED))


exclude_from_decay = _exclude_from_decay  # public: the RL learner reloads checkpoints too


def compile_model(model, settings: OptimizerSettings, rate, value_loss: str,
                  soft_policy: bool, weights: dict[str, float] | None = None) -> None:
    """Losses for the model's heads, weighted by ``weights`` (default:
    ``settings.loss_weights``, 1 for policy and value, 0 for other heads), and
    the optimizer of :func:`make_optimizer`."""
    import keras

    policy_loss = (keras.losses.CategoricalCrossentropy(from_logits=True) if soft_policy
                   else keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    value = (keras.losses.BinaryCrossentropy() if value_loss == "bce"
             else keras.losses.MeanSquaredError())
    losses = {"policy": policy_loss, "value": value}
    names = set(model.output_names)
    for head in ("ownership", "score"):
        if head in names:
            losses[head] = keras.losses.MeanSquaredError()
    for head in ("reply", "soft_policy"):  # distributions, whatever the policy's targets
        if head in names:
            losses[head] = keras.losses.CategoricalCrossentropy(from_logits=True)
    given = settings.loss_weights if weights is None else weights
    weights = {h: float(given.get(h, 1.0 if h in ("policy", "value") else 0.0)) for h in losses}
    model.compile(optimizer=make_optimizer(settings, rate), loss=losses, loss_weights=weights,
                  jit_compile=_JIT_COMPILE[settings.jit_compile])


_JIT_COMPILE = {"auto": "auto", "on": True, "off": False}


def apply_jit_compile(model, settings: OptimizerSettings) -> None:
    """``settings.jit_compile`` on a model restored compiled (a resumed run):
    its file holds the choice made when it was first compiled, which "on" and
    "off" override; "auto" keeps it."""
    forced = _JIT_COMPILE[settings.jit_compile]
    if forced != "auto" and model.jit_compile != forced:
        model.jit_compile = forced  # read when the first step is traced


def _fill_missing_heads(model, batch):
    """Zero targets with zero weight for heads the data has no targets for.

    Keras needs a target per output; a multi-head zoo model (ownership, score)
    trained on game records then learns policy and value only.
    """
    x, targets, weights = batch
    missing = [name for name in model.output_names if name not in targets]
    if not missing:
        return batch
    n = len(x)
    if not isinstance(weights, dict):
        base = np.ones(n, np.float32) if weights is None else np.asarray(weights, np.float32)
        weights = {name: base for name in targets}
    targets, weights = dict(targets), dict(weights)
    for name in missing:
        shape = tuple(model.get_layer(name).output.shape[1:])
        targets[name] = np.zeros((n, *shape), np.float32)
        weights[name] = np.zeros(n, np.float32)
    return x, targets, weights


def _signed_value_loss(config: TrainConfig, model) -> str:
    own = model_value_loss(model)
    if config.value_loss not in ("auto", own):
        raise ConfigError(f"value_loss {config.value_loss!r} does not match the model's value head "
                          f"({own}: {'sigmoid' if own == 'bce' else 'tanh'})")
    return own


def train(plan: TrainingPlan, *, resume: bool = False, progress: bool = True,
          log: Callable[[str], None] = print) -> TrainResult:
    """Run (or continue) the plan's training run to its last epoch."""
    config = plan.config
    run = RunDir(config.run_dir)
    if resume:
        state = run.read_state()
    else:
        if run.exists():
            raise ConfigError(f"{run.path}: run already exists (use --resume, or another --run)")
        state = None
    peek = plan.train.batches(config.batch_size, seed=config.seed, augment=True)
    soft_policy = np.asarray(next(iter(peek))[1]["policy"]).ndim == 2  # indices or visits
    getattr(peek, "close", lambda: None)()

    strategy = make_strategy(config.strategy)
    pace = config.pace
    if state is None:
        with strategy.scope():
            model = plan.build_model()
            value_loss = _signed_value_loss(config, model)
            compile_model(model, config, pace.optimizer_rate(), value_loss, soft_policy)
        run.create(config)
        state = RunState()
        log(f"run {run.path}: {pace.describe(config.batch_size)}")
    else:
        checkpoint = state.partial.get("checkpoint") or state.checkpoint
        with strategy.scope():
            if not checkpoint:
                model = plan.build_model()
                value_loss = _signed_value_loss(config, model)
                compile_model(model, config, pace.optimizer_rate(), value_loss, soft_policy)
            else:
                model = plan.load_model(run.path / checkpoint)
                _exclude_from_decay(model.optimizer)
                apply_jit_compile(model, config)
                value_loss = _signed_value_loss(config, model)
        step = optimizer_step(model) if checkpoint else 0
        expected = state.partial.get("step", state.step)
        if step != expected:
            raise ConfigError(f"{run.path}: checkpoint {checkpoint} is at step {step}, "
                              f"state says {expected}")
        log(f"resuming {run.path} after epoch {state.epochs_done}, step {step:,}")

    rows = run.read_metrics(upto_epoch=state.epochs_done)
    writer = MetricsLog.of(run.path, config)
    meter = _Meter.of(model)
    with _StopFlag() as stop:
        for epoch in range(state.epochs_done + 1, config.epochs + 1):
            if pace.run_over(state):
                break
            outcome = _train_epoch(plan, model, run, state, epoch, value_loss, stop, progress,
                                   writer, meter)
            if isinstance(outcome, str):
                log(outcome)
                return TrainResult(EXIT_INTERRUPTED, state.epochs_done,
                                   optimizer_step(model), run.path, outcome)
            row = _finish_epoch(plan, model, run, state, epoch, outcome, value_loss, progress,
                                writer, meter)
            rows.append(row)
            run.write_metrics(rows)
            # Before the commit: a kill between the two redoes the epoch, whose
            # figures are then not written twice; after it they could be lost.
            writer.write(state.step, {f"epoch/{k}": v for k, v in row.items() if k != "step"})
            run.write_state(state)
            log(_epoch_line(row))
            if stop.requested and epoch < config.epochs:  # Ctrl-C during validation
                message = (f"interrupted after epoch {epoch}; checkpoint {state.checkpoint}; "
                           "continue with --resume")
                log(message)
                return TrainResult(EXIT_INTERRUPTED, state.epochs_done, state.step, run.path,
                                   message)
    return TrainResult(0, state.epochs_done, state.step, run.path)


@dataclass(frozen=True)
class _Meter:
    """What turns a run's counters into its compute: the network's forward
    FLOPs per position and the device, found once per session."""

    forward_flops: int
    device: str

    @classmethod
    def of(cls, model) -> _Meter:
        from harness.nets.summary import flops_per_position

        return cls(flops_per_position(model), device().describe())

    def compute(self, state: RunState):
        """The run's cumulative compute: training samples, FLOPs and clock so far."""
        from harness.nets.compute import Compute, train_flops

        return Compute(train_flops=train_flops(self.forward_flops, state.samples_seen),
                       wall_s=state.wall_time_s, cpu_s=state.cpu_time_s, device=self.device,
                       samples=state.samples_seen)

    def save(self, run: RunDir, model, path: Path, state: RunState) -> None:
        """Save ``model`` as ``path`` with the run's compute in its model info
        (a model without a record is saved bare, as before)."""
        info = getattr(model, "model_info", None)
        if info is not None:
            model.model_info = dataclasses.replace(info, compute=self.compute(state))
        run.save_model(model, path)


@dataclass
class _EpochStats:
    logs: dict
    samples: int
    elapsed: float
    lr: float  # the rate of the epoch's last step


def _train_epoch(plan, model, run, state, epoch, value_loss, stop, progress,
                 writer, meter: _Meter) -> _EpochStats | str:
    """Train one epoch: its statistics, or a message if interrupted (state checkpointed)."""
    config = plan.config
    start = int(state.partial.get("batches", 0)) if state.partial.get("epoch") == epoch else 0
    if state.partial and state.partial.get("epoch") != epoch:
        state.partial = {}
    pace = config.pace
    steps = pace.epoch_steps  # None: until the epoch's slice of the budget is spent
    model.reset_metrics()
    bar = _progress_bar(config, steps, epoch, start, progress)
    clock = _BudgetClock(state)
    samples = 0
    batches = epoch_batches(plan.train, config.batch_size, steps,
                            seed=config.seed, epoch=epoch, start=start)
    logs: dict[str, float] = {}
    # The first step of a model in this process traces and compiles the graph:
    # time a user waits, reported as first_step_s, but not learning compute,
    # so no budget is charged for it.
    traced = getattr(model, "_harness_traced", False)
    step = optimizer_step(model)
    lr = pace.rate(state, step)
    for b, batch in enumerate(batches, start=start):
        if pace.epoch_over(state, epoch):
            break
        lr = pace.rate(state, step)  # this step's rate
        pace.set_rate(model.optimizer, lr)
        x, targets, weights = _fill_missing_heads(model, to_head_targets(batch, value_loss))
        logs = train_batch(model, x, targets, weights)
        samples += len(x)
        clock.tick(len(x), charge=traced)
        if not traced:
            model._harness_traced = traced = True
        bar.update(len(x))
        step = optimizer_step(model)
        if step % 20 == 0 or b + 1 == steps:
            bar.set_postfix(loss=f"{logs['loss']:.3f}", lr=f"{lr:.2g}")
        if step % 50 == 0:
            writer.write(step, {"train/loss": logs["loss"], "train/lr": lr})
        if stop.requested and (steps is None or b + 1 < steps):
            bar.close()
            path = run.interrupted_checkpoint
            meter.save(run, model, path, state)
            state.partial = {"epoch": epoch, "batches": b + 1, "step": step,
                             "checkpoint": path.name}
            run.write_state(state)
            of = "" if steps is None else f" of {steps}"
            return (f"interrupted in epoch {epoch} after {b + 1}{of} steps; checkpoint {path}; "
                    "continue with --resume")
    bar.close()
    state.step = optimizer_step(model)
    return _EpochStats(logs, samples, clock.elapsed, lr)


class _BudgetClock:
    """Charges training time, CPU time and samples to the run state as steps finish."""

    def __init__(self, state: RunState):
        self.state = state
        self.elapsed = 0.0
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def tick(self, samples: int, charge: bool = True) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        if charge:
            self.state.wall_time_s += wall - self._wall
            self.state.cpu_time_s += cpu - self._cpu
            self.elapsed += wall - self._wall
        else:
            self.state.first_step_s = wall - self._wall
        self.state.samples_seen += samples
        self._wall, self._cpu = wall, cpu


def _finish_epoch(plan, model, run, state, epoch, stats: _EpochStats, value_loss, progress,
                  writer, meter: _Meter) -> dict:
    """Validate, checkpoint and update the state; the epoch's metrics row."""
    config = plan.config
    logs, samples, elapsed = stats.logs, stats.samples, stats.elapsed
    row: dict[str, float | int] = {
        "epoch": epoch, "step": state.step,
        "lr": stats.lr,
        "samples": samples, "samples_per_s": samples / elapsed if elapsed > 0 else math.nan,
        "epoch_time_s": elapsed, "wall_time_s": state.wall_time_s,
        "cpu_time_s": state.cpu_time_s, "samples_seen": state.samples_seen,
        "first_step_s": state.first_step_s,
        "forward_flops": meter.forward_flops,
        "train_flops": meter.compute(state).train_flops, "device": meter.device,
    }
    for key in ("loss", "policy_loss", "value_loss"):
        if key in logs:
            row[f"train_{key}"] = float(logs[key])
    if config.recalibrate_bn:
        recalibrate_from_source(model, plan.train, config.recalibrate_bn, config.batch_size)
    if plan.val is not None:
        val = evaluate_model(model, plan.val, value_loss=value_loss,
                             loss_weights=_weights(config),
                             batch_size=forward_rows(device(), max(config.batch_size, 256)),
                             max_samples=config.val_samples, progress=progress)
        row.update({f"val_{k}": v for k, v in val.items() if k != "samples"})
    checkpoint = run.epoch_checkpoint(epoch)
    meter.save(run, model, checkpoint, state)
    val_loss = row.get("val_loss", row.get("train_loss"))
    if val_loss is not None and (state.best_val_loss is None or val_loss < state.best_val_loss):
        state.best_val_loss, state.best_epoch = float(val_loss), epoch
        run.copy_to_best(checkpoint)
    state.epochs_done = epoch
    state.checkpoint = checkpoint.name
    state.partial = {}
    return row


def _weights(config: TrainConfig) -> dict[str, float]:
    return {"policy": 1.0, "value": 1.0, **config.loss_weights}


def _epoch_line(row: dict) -> str:
    parts = [f"epoch {row['epoch']}", f"step {row['step']:,}"]
    for key, label in (("train_loss", "loss"), ("val_loss", "val loss"),
                       ("val_policy_top1", "top1"), ("val_policy_top5", "top5"),
                       ("val_value_mse", "value mse")):
        if key in row:
            parts.append(f"{label} {row[key]:.4f}")
    parts.append(f"{row['samples_per_s']:,.0f} samples/s")
    return ", ".join(parts)


def _progress_bar(config: TrainConfig, steps: int | None, epoch: int, start: int,
                  enabled: bool):
    from harness.console import progress as tqdm

    total = None if steps is None else steps * config.batch_size
    initial = start * config.batch_size if total is None else min(start * config.batch_size,
                                                                  total)
    return tqdm(total=total, initial=initial, unit="pos",
                unit_scale=True, desc=f"epoch {epoch}/{config.epochs}", disable=not enabled,
                dynamic_ncols=True, leave=False)
