"""The generation loop: self-play -> replay window -> training -> gating -> next generation.

Layout of ``RUN/`` (every file written atomically)::

    config.json          the RLConfig of the run
    state.json           the commit point: generation, phase, best net, window, histories
    models/gen-NNNN.keras        the self-play lineage after generation N (0: initial)
    models/large-gen-NNNN.keras  the curriculum's large network (each file records its
                                 encoder, so ``mcts:RUN/models/gen-NNNN.keras`` just works)
    models/raw/...               with ``[train] ema_decay``: the raw weights and optimizer
                                 training continues from (models/ then holds their average)
    buffer/gen-NNNN.h5           generation N's games (see ``harness.rl.buffer``)
    games/gen-NNNN/*.sgf         every self-play game
    stats/gen-NNNN.json, stats.csv   per-generation figures, the run's cumulative compute too
    metrics.jsonl, events.out.tfevents.*   the same figures live, one JSON line and one
                                 TensorBoard step per generation (``harness.metrics``)

A generation moves through three phases, each ending with a write of
``state.json``: ``selfplay`` (games committed one by one, then merged),
``train`` (new checkpoints, then the commit) and ``evaluate`` (gating,
curriculum, stats, then the commit that starts the next generation). A kill
at any point resumes at the last commit: finished games are kept, committed
training is never repeated, and a phase that was cut short is redone with
the same random streams.

The run's compute (:class:`harness.nets.compute.Compute`: training FLOPs,
self-play FLOPs, wall and CPU seconds) accumulates in ``state.json`` with each
phase's commit, so a resumed run continues its totals; every checkpoint
carries the totals at the moment it was saved, in its model info.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.config_io import ConfigError, save_config
from harness.files import atomic_json, atomic_write, read_json
from harness.metrics import MetricsLog
from harness.rl.buffer import ReplayBuffer
from harness.rl.config import RLConfig
from harness.rl.curriculum import small_net_stalled
from harness.rl.gating import gate_sprt, passes, play_match
from harness.rl.learner import Learner
from harness.rl.selfplay import (
    filled_for_device,
    generation_stats,
    play_generation,
    selfplay_path,
    with_path_resolved,
)
from harness.rl.window import next_window
from harness.train import derive_seed

MAIN, LARGE = "main", "large"
STATS_COLUMNS = (
    "generation", "games", "games_total", "positions", "positions_total", "mean_length",
    "games_per_hour", "evals_per_s", "selfplay_s", "train_s", "wall_time_s", "cpu_time_s",
    "window",
    "resigned", "resign_checks", "resign_false_positives", "resign_false_positive_rate",
    "loss", "policy_loss", "value_loss", "ownership_loss", "score_loss",
    "large_loss", "large_policy_loss", "large_value_loss",
    "gate_games", "gate_win_rate", "promoted", "active", "best",
    "heldout_kl_start", "heldout_top1", "heldout_value_mse", "anchor_beta",
    "evaluations", "evaluations_total", "train_samples", "train_samples_total",
    "selfplay_flops", "train_flops", "device",
)

# TensorBoard's groups of a generation's figures (the JSON lines keep the plain keys).
TAG_GROUPS = (
    ("gate", ("gate_", "promoted")),
    ("heldout", ("heldout_",)),
    ("compute", ("wall_time_s", "cpu_time_s", "selfplay_flops", "train_flops",
                 "evaluations_total", "train_samples_total", "evaluations", "train_samples")),
    ("train", ("loss", "policy_loss", "value_loss", "ownership_loss", "score_loss", "large_",
               "train_s", "anchor_beta")),
    ("pg", ("win_rate", "draws", "learner_black_win_rate", "pool_size", "entropy", "kl_start",
            "baseline", "advantage_mean")),
)


def metric_tag(key: str) -> str:
    """The TensorBoard tag of a generation's figure: ``games_per_hour`` ->
    ``selfplay/games_per_hour``, ``gate_win_rate`` -> ``gate/gate_win_rate``."""
    for group, starts in TAG_GROUPS:
        if key.startswith(starts):
            return f"{group}/{key}"
    return f"selfplay/{key}"


@dataclass
class NetState:
    """One network's lineage: its latest checkpoint and its history."""

    model: str
    checkpoint: str  # the network that plays, relative to the run directory
    # With [train] ema_decay the learner's raw weights and optimizer (the
    # checkpoint holds their moving average); "": the checkpoint itself.
    trainer: str = ""
    policy_losses: list[float] = field(default_factory=list)
    promotions: list[bool] = field(default_factory=list)


@dataclass
class GenerationState:
    generation: int = 1  # the generation being worked on
    phase: str = "selfplay"  # selfplay, train, evaluate
    best: str = ""  # checkpoint that plays the games
    active: str = MAIN  # which lineage is the self-play lineage
    window: int = 0
    games_total: int = 0
    positions_total: int = 0
    wall_time_s: float = 0.0
    # The run's compute so far (harness.nets.compute), over every session:
    # process CPU seconds beside wall_time_s, the self-play positions sent to
    # the network and their FLOPs, the samples trained on and their FLOPs
    # (each network's own forward FLOPs per position).
    cpu_time_s: float = 0.0
    evaluations_total: int = 0
    selfplay_flops: int = 0
    train_samples_total: int = 0
    train_flops: int = 0
    switched_at: int = 0
    nets: dict[str, NetState] = field(default_factory=dict)
    last_train: dict[str, dict] = field(default_factory=dict)
    last_selfplay: dict = field(default_factory=dict)
    # algorithm = "policy-gradient" (harness.rl.pg_run): the opponent pool
    # (checkpoints, oldest first), the running mean of the learner's outcomes
    # and the entropy bonus now in force.
    pool: list[str] = field(default_factory=list)
    baseline_mean: float = 0.0
    entropy_weight: float = 0.0

    @classmethod
    def from_json(cls, values: dict) -> GenerationState:
        nets = {k: NetState(**v) for k, v in values.pop("nets", {}).items()}
        return cls(**values, nets=nets)


class RLRun:
    """A run directory and the loop over its generations."""

    stats_columns = STATS_COLUMNS  # the columns of stats.csv

    def __init__(self, config: RLConfig, log: Callable[[str], None] = print):
        self.config = config
        self.path = config.run_dir
        self.log = log
        self.buffer = ReplayBuffer(self.path / "buffer", config.board_size)
        self.learners: dict[str, Learner] = {}
        self._evaluators: dict[int, object] = {}
        self._actors = None  # Ray self-play workers (backend "ray"), kept across generations
        self._held_out = None  # [monitor] positions and generation 0's policy on them
        self._played: RLConfig | None = None  # the config as self-play runs it on this device
        self._device = ""  # what this session computes on (Device.describe)
        self._flops: dict[str, int] = {}  # forward FLOPs per position, by model name
        self.metrics = MetricsLog.of(self.path, config, tags=metric_tag)

    # --- files ------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        return self.path / "state.json"

    def model_path(self, lineage: str, generation: int) -> Path:
        prefix = "" if lineage == MAIN else f"{lineage}-"
        return self.path / "models" / f"{prefix}gen-{generation:04d}.keras"

    def read_state(self) -> GenerationState:
        values = read_json(self.state_path)
        if values is None:
            raise ConfigError(f"{self.path}: no rl run to resume (no state.json)")
        return GenerationState.from_json(values)

    def write_state(self, state: GenerationState) -> None:
        atomic_json(self.state_path, asdict(state), sort_keys=True)

    def exists(self) -> bool:
        return self.state_path.exists()

    # --- start --------------------------------------------------------------
    def create(self, until_flops: float | None = None) -> GenerationState:
        """Generation 0: the initial network(s) on disk, then the first commit
        (``until_flops``: what ends the run, for its first line)."""
        config = self.config
        self.path.mkdir(parents=True, exist_ok=True)
        save_config(config, self.path / "config.json")
        state = GenerationState(window=config.window.initial)
        main = Learner.fresh(MAIN, config, config.model, config.init)
        name = main.model.name if config.init else config.model  # a checkpoint names itself
        state.nets[MAIN] = NetState(name, "")
        self._save_learner(main, state.nets[MAIN], 0, self.compute(state))
        if config.curriculum.enabled:
            large = Learner.fresh(LARGE, config, config.curriculum.model)
            state.nets[LARGE] = NetState(config.curriculum.model, "")
            self._save_learner(large, state.nets[LARGE], 0, self.compute(state))
        self.learners = {MAIN: main, **({LARGE: large} if config.curriculum.enabled else {})}
        state.best = state.nets[MAIN].checkpoint
        self.write_state(state)
        length = (f"generations of {config.selfplay.games} games until {until_flops:.3g} "
                  "training and self-play FLOPs" if until_flops is not None else
                  f"{config.generations} generations of {config.selfplay.games} games")
        self.log(f"run {self.path}: {length}, {config.board_size}x{config.board_size} "
                 f"{config.rules}, {state.nets[MAIN].model}")
        return state

    def _rel(self, path: Path) -> str:
        return str(path.relative_to(self.path))

    def _save_learner(self, learner: Learner, net: NetState, generation: int,
                      compute) -> None:
        """Write the learner's generation, with the run's ``compute`` in its
        model info, and point ``net`` at it."""
        learner.model.model_info = dataclasses.replace(learner.model.model_info, compute=compute)
        path = self.model_path(learner.name, generation)
        raw = path.parent / "raw" / path.name if learner.average is not None else None
        learner.save(path, raw)
        net.checkpoint = self._rel(path)
        net.trainer = self._rel(raw) if raw is not None else ""

    # --- compute -------------------------------------------------------------
    def device(self) -> str:
        """What this session computes on, in one line."""
        if not self._device:
            from harness.devices import device

            self._device = device().describe()
        return self._device

    def forward_flops(self, state: GenerationState, lineage: str) -> int:
        """FLOPs of one position through ``lineage``'s network (once per run and process)."""
        name = state.nets[lineage].model
        if name not in self._flops:
            from harness.nets.summary import flops_per_position

            self._flops[name] = flops_per_position(self._learner(state, lineage).model)
        return self._flops[name]

    def compute(self, state: GenerationState, wall_s: float = 0.0, cpu_s: float = 0.0):
        """The run's cumulative compute: the committed totals plus ``wall_s``
        and ``cpu_s`` of the phase under way."""
        from harness.nets.compute import Compute

        return Compute(train_flops=state.train_flops, selfplay_flops=state.selfplay_flops,
                       wall_s=state.wall_time_s + wall_s, cpu_s=state.cpu_time_s + cpu_s,
                       device=self.device(), samples=state.train_samples_total,
                       evaluations=state.evaluations_total)

    # --- the loop -------------------------------------------------------------
    def run(self, *, resume: bool = False, generations: int | None = None,
            until_flops: float | None = None) -> GenerationState:
        """Create or resume the run and work until its last generation is done,
        or, with ``until_flops``, until the first generation whose cumulative
        compute (training and self-play FLOPs) reaches it: a compute-frontier
        study's largest savepoint, whose generation count nobody knows ahead."""
        if resume:
            state = self.read_state()
            self.log(f"resuming {self.path} at generation {state.generation} ({state.phase})")
        else:
            if self.exists():
                raise ConfigError(f"{self.path}: run already exists (use --resume)")
            state = self.create(until_flops)
        last = min(self.config.generations, generations or self.config.generations)
        try:
            while (state.generation <= last and not self.out_of_time(state)
                   and not compute_reached(state, until_flops)):
                self.generation(state)
        finally:
            if self._actors is not None:
                self._actors.close()
                self._actors = None
        return state

    def out_of_time(self, state: GenerationState) -> bool:
        """The time budget is checked between generations, so the run ends on a saved network.

        The clock is the run's own (self-play, training and evaluation time kept
        in its state), so a resumed run counts the time of its earlier sessions.
        """
        budget = self.config.max_hours * 3600.0
        if budget <= 0 or state.wall_time_s < budget or state.phase != "selfplay":
            return False
        self.log(f"time budget of {self.config.max_hours:g} h used "
                 f"({state.wall_time_s / 3600.0:.2f} h): stopping before generation "
                 f"{state.generation}")
        return True

    def generation(self, state: GenerationState) -> None:
        g = state.generation
        if state.phase == "selfplay":
            self._selfplay(state, g)
        if state.phase == "train":
            self._train(state, g)
        if state.phase == "evaluate":
            self._evaluate(state, g)

    def _learner(self, state: GenerationState, name: str) -> Learner:
        learner = self.learners.get(name)
        net = state.nets[name]
        expected = self.path / (net.trainer or net.checkpoint)
        if learner is None or learner.checkpoint != expected:
            learner = Learner.load(name, self.config, expected,
                                   averaged=self.path / net.checkpoint if net.trainer else None)
            self.learners[name] = learner
        return learner

    def played(self) -> RLConfig:
        """The config local self-play runs with: the run's, filled to the
        device (:func:`harness.rl.selfplay.filled_for_device`); the saved
        config keeps what was asked, so a resume on another device refills."""
        if self._played is None:
            from harness.devices import device

            dev = device()
            if self.config.selfplay.path == "auto":
                path, why = selfplay_path(self.config, dev)
                self.log(f"self-play path: {path} ({why})")
            self._played = filled_for_device(with_path_resolved(self.config, dev), dev)
            if self._played.selfplay.parallel != self.config.selfplay.parallel:
                self.log(f"self-play on {dev.describe()}: {self._played.selfplay.parallel} games "
                         f"at once (configured {self.config.selfplay.parallel}), evaluator "
                         f"batch {self._played.evaluator.batch_size}")
        return self._played

    def _evaluator(self, state: GenerationState, checkpoint: str):
        """The network of ``checkpoint`` behind the search's Evaluator interface.

        A learner's in-memory model is used when it holds that checkpoint's
        weights, and its evaluator is kept: the compiled forward pass reads
        the model's variables, so it follows training without being traced
        again (tracing costs more than a small generation's games).
        """
        from harness.nets import load_model
        from harness.search import NetworkEvaluator

        model = None
        for name, net in state.nets.items():
            if net.checkpoint == checkpoint and not net.trainer:  # raw weights play
                model = self._learner(state, name).model
        if model is None:
            model = load_model(self.path / checkpoint)
        evaluator = self._evaluators.get(id(model))
        if evaluator is None or evaluator.model is not model:
            evaluator = NetworkEvaluator(model, self.config.encoder, self.config.board_size,
                                         self.played().evaluator)
            self._evaluators = {id(model): evaluator}
        evaluator.clear_cache()
        return evaluator

    def _selfplay(self, state: GenerationState, g: int) -> None:
        from harness.nets.compute import selfplay_flops

        t0, cpu0 = time.perf_counter(), time.process_time()
        if not self.buffer.chunk_path(g).exists():
            player = Path(state.best).stem
            if self.config.backend == "ray":
                from harness.rl.remote import SelfPlayActors

                self._actors = self._actors or SelfPlayActors(self.config)
                play_generation(None, self.config, g, self.buffer, self.path, player=player,
                                log=self.log, checkpoint=self.path / state.best,
                                actors=self._actors)
            else:
                play_generation(self._evaluator(state, state.best), self.played(), g,
                                self.buffer, self.path, player=player, log=self.log)
            self.buffer.merge(g)
        else:
            self.buffer.merge(g)  # removes a stale parts directory
        progress = read_json(self.path / "stats" / f"gen-{g:04d}.selfplay.json", {})
        stats = generation_stats(self.buffer, g, progress)
        added = stats["games"] if self.config.window.unit == "games" else stats["positions"]
        state.window = next_window(state.window, added, g - 1, self.config.window)
        state.games_total += stats["games"]
        state.positions_total += stats["positions"]
        state.wall_time_s += stats["selfplay_s"] if stats["selfplay_s"] else (
            time.perf_counter() - t0)
        state.cpu_time_s += stats["selfplay_cpu_s"] if stats["selfplay_s"] else (
            time.process_time() - cpu0)
        # The network that played: the best checkpoint, of the active lineage.
        state.evaluations_total += stats["evaluations"]
        state.selfplay_flops += selfplay_flops(self.forward_flops(state, state.active),
                                               stats["evaluations"])
        state.last_selfplay = stats
        state.phase = "train"
        self.write_state(state)
        self.log(f"generation {g}: {stats['games']} games, mean length "
                 f"{stats['mean_length']:.1f}, {stats['games_per_hour']:.0f} games/h, "
                 f"{stats['evals_per_s']:.0f} evals/s")

    def _trained_lineages(self, state: GenerationState) -> list[str]:
        """Both networks train until the switch; afterwards only the large one."""
        if state.switched_at:
            return [LARGE]
        return [MAIN, LARGE] if LARGE in state.nets else [MAIN]

    def _train(self, state: GenerationState, g: int) -> None:
        from harness.nets.compute import train_flops

        t0, cpu0 = time.perf_counter(), time.process_time()
        results: dict[str, dict] = {}
        samples = 0
        learners = [self._learner(state, name) for name in self._trained_lineages(state)]
        # One window with every column either network needs: read once, shared.
        columns = tuple(dict.fromkeys(c for learner in learners for c in learner.columns()))
        window = self.buffer.window(state.window, self.config.window.unit, columns)
        for learner in learners:
            name = learner.name
            logs = learner.train(window, self.config.train.steps, g)
            samples += learner.samples
            state.train_samples_total += learner.samples
            state.train_flops += train_flops(self.forward_flops(state, name), learner.samples)
            self._save_learner(learner, state.nets[name], g, self.compute(
                state, time.perf_counter() - t0, time.process_time() - cpu0))
            results[name] = logs
            if "policy_loss" in logs:
                state.nets[name].policy_losses.append(float(logs["policy_loss"]))
            summary = ", ".join(f"{k} {v:.3f}" for k, v in logs.items()) or "no training"
            self.log(f"generation {g}: {name} net, window {window.n_games} games "
                     f"({len(window.target_rows())} samples): {summary}")
        state.last_train = results
        state.wall_time_s += time.perf_counter() - t0
        state.cpu_time_s += time.process_time() - cpu0
        state.last_selfplay["train_s"] = time.perf_counter() - t0
        state.last_selfplay["train_samples"] = samples
        state.phase = "evaluate"
        self.write_state(state)

    def _evaluate(self, state: GenerationState, g: int) -> None:
        t0, cpu0 = time.perf_counter(), time.process_time()
        config = self.config
        active = state.active
        candidate = state.nets[active].checkpoint
        gate = {"gate_games": 0, "gate_win_rate": float("nan")}
        promoted = True
        opponent = self._gate_opponent(state)
        if config.gating.enabled and g % config.gating.every:
            promoted = False  # not a gating generation: the candidate trains on
        elif config.gating.enabled and candidate != opponent:
            result = self._gate(state, candidate, opponent, g)
            promoted = passes(result, config.gating)
            gate = {"gate_games": result.games, "gate_win_rate": result.win_rate}
            if config.gating.sprt:
                gate["gate_llr"] = gate_sprt(config.gating).llr(*result.record)
            self.log(f"generation {g}: {Path(candidate).stem} scored {result.wins:g}/"
                     f"{result.games} against {Path(opponent).stem}: "
                     f"{'promoted' if promoted else 'kept the best'}")
        state.nets[active].promotions.append(promoted)
        if promoted:
            state.best = candidate
        main = state.nets[MAIN]
        if (LARGE in state.nets and not state.switched_at
                and small_net_stalled(config.curriculum, g, main.policy_losses, main.promotions)):
            state.switched_at = g
            state.active = LARGE
            state.best = state.nets[LARGE].checkpoint
            self.log(f"generation {g}: the small network stalled; "
                     f"{state.nets[LARGE].model} plays from now on")
        state.wall_time_s += time.perf_counter() - t0
        state.cpu_time_s += time.process_time() - cpu0
        row = {**self._stats_row(state, g, gate, promoted), **self._monitor(state)}
        self._record(g, row)
        state.generation = g + 1
        state.phase = "selfplay"
        self.write_state(state)

    def _gate_opponent(self, state: GenerationState) -> str:
        """The checkpoint a candidate must beat (``[gating] against``)."""
        if self.config.gating.against == "start":
            return self._rel(self.model_path(state.active, 0))
        return state.best

    def _gate(self, state: GenerationState, candidate: str, opponent: str, g: int):
        from harness.nets import load_model
        from harness.search import NetworkEvaluator

        gating = self.config.gating

        best = NetworkEvaluator(load_model(self.path / opponent), self.config.encoder,
                                self.config.board_size, self.played().evaluator)
        return play_match(
            self._evaluator(state, candidate), best, gating.games,
            size=self.config.board_size, komi=self.config.komi, rules=self.config.rules,
            playouts=gating.gate_playouts, parallel=gating.parallel,
            max_moves=self.config.selfplay.max_moves,
            seed=derive_seed(self.config.seed, g, 7919),
            sprt=gate_sprt(gating),
        )

    def _monitor(self, state: GenerationState) -> dict:
        """The active network's held-out figures (``[monitor]``); off the run's clock."""
        from harness.rl.monitor import forward, held_out_positions, measure, signed_value
        from harness.train import model_value_loss as value_loss_of

        monitor = self.config.monitor
        if not monitor.dataset:
            return {}
        if self._held_out is None:
            from harness.nets import load_model

            held = held_out_positions(monitor.dataset, monitor.positions,
                                      encoder=self.config.encoder,
                                      board_size=self.config.board_size)
            start = load_model(self.model_path(MAIN, 0))
            start_logits, start_value = forward(start, held.x)
            figures = measure(held, start_logits, signed_value(start_value, value_loss_of(start)),
                              start_logits)
            start_row = {"heldout_top1_start": figures["heldout_top1"],
                         "heldout_value_mse_start": figures["heldout_value_mse"]}
            self._held_out = (held, start_logits, start_row)
        held, start_logits, start_row = self._held_out
        learner = self._learner(state, state.active)
        with learner.averaged() as model:  # the network that plays
            logits, value = forward(model, held.x)
        return {**start_row,
                **measure(held, logits, signed_value(value, learner.value_loss), start_logits)}

    def _stats_row(self, state: GenerationState, g: int, gate: dict, promoted: bool) -> dict:
        s = state.last_selfplay
        row = {
            "generation": g, **s, "games_total": state.games_total,
            "positions_total": state.positions_total, "wall_time_s": state.wall_time_s,
            "cpu_time_s": state.cpu_time_s, "evaluations_total": state.evaluations_total,
            "train_samples_total": state.train_samples_total,
            "selfplay_flops": state.selfplay_flops, "train_flops": state.train_flops,
            "device": self.device(), "window": state.window, **gate, "promoted": promoted,
            "active": state.active, "best": state.best,
        }
        for name, logs in state.last_train.items():
            prefix = "" if name == MAIN else f"{name}_"
            for key, value in logs.items():
                row[f"{prefix}{key}"] = value
        return row

    def _record(self, g: int, row: dict) -> None:
        """Generation ``g``'s figures: its stats file, stats.csv and the live metrics."""
        atomic_json(self.path / "stats" / f"gen-{g:04d}.json", row, sort_keys=True)
        self._write_stats_csv(g)
        self.metrics.write(g, row)

    def _write_stats_csv(self, upto: int) -> None:
        rows = []
        for g in range(1, upto + 1):
            row = read_json(self.path / "stats" / f"gen-{g:04d}.json")
            if row is not None:
                rows.append(row)
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=self.stats_columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _fmt(row.get(k, "")) for k in self.stats_columns})
        atomic_write(self.path / "stats.csv", buf.getvalue())


def compute_reached(state: GenerationState, flops: float | None) -> bool:
    """Whether the committed generations' training and self-play FLOPs reach
    ``flops`` (never for None; only between generations, so the run ends on a
    finished one)."""
    return (flops is not None and state.phase == "selfplay"
            and state.train_flops + state.selfplay_flops >= flops)


def _fmt(value):
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.6g}"
    return value
