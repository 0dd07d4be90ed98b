"""The settings of a self-play run: one dataclass per stage, one TOML table each.

A config file has top-level keys (what is played and by which network) and
the tables ``[mcts]``, ``[evaluator]``, ``[selfplay]``, ``[train]``,
``[window]``, ``[gating]``, ``[curriculum]``, ``[monitor]`` and ``[pg]`` (the
policy-gradient algorithm's own settings). Every table maps field by
field onto its dataclass (a field whose type is a dataclass is a table) through
:func:`harness.config_io.from_mapping`, so a typo stops the run at once with
one line naming the key.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from harness.config_io import setting
from harness.distributed import BackendSettings
from harness.game.settings import GameSettings
from harness.jaxgo import DEVICE_ENCODERS
from harness.nets.names import EXTRA_HEADS
from harness.search import EvaluatorConfig, MCTSConfig
from harness.train import OptimizerSettings, RunSettings

WINDOW_UNITS = ("games", "positions")
CURRICULUM_CRITERIA = ("gating", "loss", "generation")
GATE_OPPONENTS = ("best", "start")
ALGORITHMS = ("alphazero", "policy-gradient")
SELFPLAY_PATHS = ("host", "device", "auto")
BASELINES = ("value", "mean", "none")
POOL_SAMPLING = ("uniform", "latest", "recent")


@dataclass(frozen=True)
class SelfPlayConfig:
    """How many games a generation plays and how they are run."""

    games: int = 64  # games per generation
    parallel: int = 16  # games played at once (search slots, one network batch)
    max_moves: int | None = None  # None: twice the number of points
    # Games per unit of work: a unit is played by one search with its own seed
    # (derived from the run seed, the generation and its first game index), so
    # its games do not depend on which worker plays it. 0: the whole
    # generation is one unit on the local backend, ``parallel`` games a unit
    # on Ray. Set it to make local and Ray runs play the same games.
    unit_games: int = 0
    workers: int = setting(0, "Ray self-play actors (0: one per CPU of the cluster)")
    # GPUs each Ray self-play actor reserves: 1 gives every actor a card of its
    # own (Ray sets its CUDA_VISIBLE_DEVICES), with path = "device" the way to
    # fill a machine's GPUs (docs/cluster.md). 0: actors use what they see.
    worker_gpus: float = 0.0
    # A share of games starts from the first moves of a dataset's games
    # (harness.rl.openings): probability, and the range of moves replayed.
    start_dataset: str = ""
    start_probability: float = 0.0
    start_min_moves: int = 0
    start_max_moves: int = 30
    # On a GPU, play enough games at once to fill one forward pass of
    # harness.devices.GPU_FORWARD_ROWS rows (local backend; a CPU keeps
    # ``parallel``). Off: ``parallel`` everywhere.
    fill_device: bool = True
    # "host": the numba tree search (harness.search) over any Keras backend.
    # "device": the whole move, rules, encoder, search (mctx) and network, one
    # jitted call for ``parallel`` games at once (harness.jaxgo.search), for
    # Keras's JAX backend on a GPU; what it does not do is refused
    # (RLSettings.device_path_refusal). "auto": the device path where Keras
    # runs on JAX with a GPU and the run uses nothing it refuses, else the
    # host's (harness.rl.selfplay.selfplay_path): on the 2-core CPU the device
    # path played at 0.86x (a0.6.64) and 0.14x (a0.tiny) of the host's pace.
    path: str = "host"

    def __post_init__(self) -> None:
        if self.games < 1 or self.parallel < 1:
            raise ValueError("selfplay games and parallel must be at least 1")
        if self.worker_gpus < 0:
            raise ValueError(f"selfplay worker_gpus must be >= 0, got {self.worker_gpus}")
        if self.path not in SELFPLAY_PATHS:
            raise ValueError(f"selfplay path must be one of {SELFPLAY_PATHS}, got {self.path!r}")
        if not 0.0 <= self.start_probability <= 1.0:
            raise ValueError(f"start_probability must be in [0, 1], got {self.start_probability}")
        if self.start_probability > 0 and not self.start_dataset:
            raise ValueError("start_probability > 0 needs a start_dataset")
        if not 0 <= self.start_min_moves <= self.start_max_moves:
            raise ValueError("selfplay needs 0 <= start_min_moves <= start_max_moves")
        if self.unit_games < 0 or self.workers < 0:
            raise ValueError("selfplay unit_games and workers must be >= 0")


@dataclass(frozen=True)
class LearnerSettings(OptimizerSettings):
    """Optimisation per generation: the supervised trainer's optimizer settings
    (batch size, optimizer, rate and its schedule over generations, weight
    decay, loss weights; NoGoZero+ section 4 weighs value 1.5, dominion 0.5,
    score 0.25) and what only self-play has. The optimizer state carries
    across generations."""

    steps: int = 100  # optimizer steps per generation
    # Value target (1 - w) z + w v: z the outcome, v the root value of the search.
    value_mix: float = 0.0
    min_positions: int = 0  # skip training until the window holds this many target rows
    augment: bool = True  # a random symmetry (of 8) per sample
    # Regularised continuation of a supervised network (harness.rl.anchor,
    # .mixing, .warmup); all off by default.
    anchor: str = ""  # the KL anchor: "start" (the run's generation 0) or a .keras file
    anchor_kl: float = 0.0  # beta of beta * KL(anchor's policy || network's policy)
    anchor_kl_decay: float = 1.0  # beta is multiplied by this every generation
    mix_dataset: str = ""  # an ingested positions file of the run's board and encoder
    mix_share: float = 0.0  # the share of every batch drawn from mix_dataset
    value_warmup_games: int = 0  # only the value head trains until the window holds these
    # The value loss's weight is scaled by value_weight_initial in generation 1,
    # rising linearly to its full weight over value_weight_ramp generations.
    value_weight_initial: float = 1.0
    value_weight_ramp: int = 0
    # KataGo: the network that plays, is gated and is published is an
    # exponential moving average of the weights (decay per optimizer step);
    # training continues on the raw weights. 0: off.
    ema_decay: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.ema_decay < 1.0:
            raise ValueError(f"ema_decay must be in [0, 1), got {self.ema_decay}")
        if self.steps < 0:
            raise ValueError("train steps must be >= 0")
        if self.anchor_kl < 0 or not 0 < self.anchor_kl_decay <= 1:
            raise ValueError("anchor_kl must be >= 0 and anchor_kl_decay in (0, 1]")
        if self.anchor_kl > 0 and not self.anchor:
            raise ValueError("anchor_kl > 0 needs an anchor ('start' or a .keras file)")
        if not 0.0 <= self.mix_share < 1.0:
            raise ValueError(f"mix_share must be in [0, 1), got {self.mix_share}")
        if self.mix_share > 0 and not self.mix_dataset:
            raise ValueError("mix_share > 0 needs a mix_dataset")
        if self.value_warmup_games < 0:
            raise ValueError("value_warmup_games must be >= 0")
        if self.value_weight_initial < 0 or self.value_weight_ramp < 0:
            raise ValueError("value_weight_initial and value_weight_ramp must be >= 0")
        if not 0.0 <= self.value_mix <= 1.0:
            raise ValueError(f"value_mix must be in [0, 1], got {self.value_mix}")


@dataclass(frozen=True)
class WindowConfig:
    """The replay window, counted in games or positions, growing early on.

    After each generation the window grows so that the data added last
    replaces at most ``replace_fraction`` of it; that fraction decays by
    ``fraction_decay`` per generation down to ``fraction_min`` (Mattisson,
    section 3.3: a small buffer first, so the poor early games leave quickly).
    """

    unit: str = "games"
    initial: int = 500
    maximum: int = 20000
    replace_fraction: float = 0.5
    fraction_decay: float = 0.9
    fraction_min: float = 0.1

    def __post_init__(self) -> None:
        if self.unit not in WINDOW_UNITS:
            raise ValueError(f"window unit must be one of {WINDOW_UNITS}, got {self.unit!r}")
        if not 1 <= self.initial <= self.maximum:
            raise ValueError("window needs 1 <= initial <= maximum")
        if not 0 < self.fraction_min <= self.replace_fraction <= 1:
            raise ValueError("window needs 0 < fraction_min <= replace_fraction <= 1")
        if not 0 < self.fraction_decay <= 1:
            raise ValueError("window fraction_decay must be in (0, 1]")


@dataclass(frozen=True)
class GatingConfig:
    """AlphaGo Zero's evaluator: the new network must beat the best one to play.

    With ``sprt`` the match is Leela Zero's instead: it stops as soon as an
    SPRT of H1 (the candidate is ``elo1`` Elo stronger) against H0 (``elo0``)
    decides, the candidate is promoted when H1 is accepted, and ``games`` is
    only the cap (a match that reaches it undecided keeps the best network).
    """

    enabled: bool = False
    games: int = 20  # half with each colour; with sprt, the most games a match plays
    threshold: float = 0.55  # promote when the win rate reaches this (draws count half)
    gate_playouts: int = 50  # each side's search per move
    parallel: int = 10
    sprt: bool = False  # decide by SPRT (harness.arena.sprt) instead of the threshold
    elo0: float = 0.0
    elo1: float = 35.0
    alpha: float = 0.05  # P(promoted | candidate elo0 stronger)
    beta: float = 0.05  # P(kept the best | candidate elo1 stronger)
    # "best": the candidate plays the network that plays self-play now (AlphaGo
    # Zero). "start": it plays generation 0, so a network is promoted (and
    # published as the run's result) only once it beats the network the run
    # continued, at the test's confidence.
    against: str = "best"
    # Gate every this many generations (those whose number it divides); the
    # generations between are not promoted and training goes on. At 19x19 on
    # two cores a 40-game gate costs three times a generation's self-play.
    every: int = 1

    def __post_init__(self) -> None:
        if self.games < 1 or self.gate_playouts < 1 or self.parallel < 1 or self.every < 1:
            raise ValueError("gating games, gate_playouts, parallel and every must be at least 1")
        if self.against not in GATE_OPPONENTS:
            raise ValueError(f"gating against must be one of {GATE_OPPONENTS}, "
                             f"got {self.against!r}")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"gating threshold must be in [0, 1], got {self.threshold}")
        if self.sprt:
            from harness.arena.sprt import SPRT

            SPRT(self.elo0, self.elo1, self.alpha, self.beta)  # refuses bad hypotheses


@dataclass(frozen=True)
class MonitorConfig:
    """Held-out figures per generation (``harness.rl.monitor``): the policy's KL
    divergence from generation 0, top-1, value MSE and calibration on the
    first ``positions`` of a dataset's validation split."""

    dataset: str = ""  # an ingested positions file of the run's board; "": off
    positions: int = 2048

    def __post_init__(self) -> None:
        if self.positions < 1:
            raise ValueError("monitor positions must be at least 1")


@dataclass(frozen=True)
class CurriculumConfig:
    """NoGoZero+ network curriculum: a small net plays, a large one learns too.

    The large network trains on every generation's window but plays no game
    until the small one stalls:

    - ``"gating"``: the small net failed gating ``patience`` generations in a row;
    - ``"loss"``: its policy loss improved by less than ``min_delta`` over the
      last ``patience`` generations;
    - ``"generation"``: at generation ``switch_generation``.
    """

    enabled: bool = False
    model: str = ""  # zoo name of the larger network
    criterion: str = "loss"
    patience: int = 3
    min_delta: float = 0.01
    switch_generation: int = 0

    def __post_init__(self) -> None:
        if self.criterion not in CURRICULUM_CRITERIA:
            raise ValueError(
                f"curriculum criterion must be one of {CURRICULUM_CRITERIA}, "
                f"got {self.criterion!r}"
            )
        if self.enabled and not self.model:
            raise ValueError("curriculum enabled but no large model given")
        if self.patience < 1:
            raise ValueError("curriculum patience must be at least 1")


@dataclass(frozen=True)
class PolicyGradientConfig:
    """AlphaGo's RL stage (Silver et al. 2016, section 2): raw-policy games of
    the current network against past selves, and REINFORCE on their outcomes.

    Each step plays ``games`` games to the end, one forward pass per move
    batched across the games in flight; the learner samples from its softmax
    at ``sample_temperature`` over the endgame rule's sensible moves
    (``harness.game.endgame``), against ``opponents`` networks drawn from the
    pool of its past selves (the start network included) so that it does not
    overfit to one opponent. The step ends with ``updates`` optimizer steps
    of ``[train]``'s optimizer on the learner's moves of those games. At
    temperature 1 the update is REINFORCE's unbiased gradient; any other
    temperature samples off the policy that is trained.
    """

    games: int = 64  # games per step, half with each colour
    parallel: int = 0  # games in flight at once (0: every game of the step)
    sample_temperature: float = 1.0  # both sides sample from softmax(logits / T)
    opening_moves: int = 0  # uniformly random sensible moves that open every game
    max_moves: int = 0  # a game is scored after this many moves (0: 2 x points)
    # The pool: the current network joins it every pool_every steps; with
    # pool_size the oldest member but the start network leaves when it is full.
    pool_every: int = 10
    pool_size: int = 0  # 0: unlimited
    # "uniform" (AlphaGo), "latest" (the newest member: plain self-play), or
    # "recent" (member i of n drawn with weight pool_decay ** (n - 1 - i)).
    pool_sampling: str = "uniform"
    pool_decay: float = 0.8
    opponents: int = 1  # opponents drawn per step; the games are shared among them
    # The baseline subtracted from the outcome: the learner's value head at the
    # position ("value"), a running mean of the learner's outcomes ("mean",
    # decayed by baseline_decay per step) or nothing ("none").
    baseline: str = "value"
    baseline_decay: float = 0.9
    # beta of beta * KL(start || policy) over the sensible moves (piKL; 0: off).
    kl_start: float = 0.0
    # An entropy bonus: the loss subtracts entropy_bonus x H(policy). When a
    # step's mean entropy falls below entropy_floor (nats; 0: off) the bonus
    # grows by entropy_boost, and it halves back towards entropy_bonus once
    # the entropy is above the floor again.
    entropy_bonus: float = 0.0
    entropy_floor: float = 0.0
    entropy_boost: float = 0.01
    updates: int = 1  # optimizer steps per step, each on a share of its positions
    # At most this many positions in one forward and backward pass: a step
    # with more makes more updates (0: no limit; 19x19 needs one).
    max_positions: int = 0

    def __post_init__(self) -> None:
        if self.games < 1 or self.parallel < 0 or self.opponents < 1 or self.updates < 1:
            raise ValueError("pg needs games, opponents and updates >= 1 and parallel >= 0")
        if self.max_positions < 0:
            raise ValueError("pg max_positions must be >= 0 (0: no limit)")
        if not self.sample_temperature > 0:
            raise ValueError(f"pg sample_temperature must be > 0, got {self.sample_temperature}")
        if self.opening_moves < 0 or self.max_moves < 0:
            raise ValueError("pg opening_moves and max_moves must be >= 0")
        if self.pool_every < 1 or self.pool_size < 0 or self.pool_size == 1:
            raise ValueError("pg needs pool_every >= 1 and pool_size 0 (unlimited) or >= 2")
        if self.pool_sampling not in POOL_SAMPLING:
            raise ValueError(f"pg pool_sampling must be one of {POOL_SAMPLING}, "
                             f"got {self.pool_sampling!r}")
        if not 0 < self.pool_decay <= 1 or not 0 <= self.baseline_decay < 1:
            raise ValueError("pg needs pool_decay in (0, 1] and baseline_decay in [0, 1)")
        if self.baseline not in BASELINES:
            raise ValueError(f"pg baseline must be one of {BASELINES}, got {self.baseline!r}")
        if min(self.kl_start, self.entropy_bonus, self.entropy_floor, self.entropy_boost) < 0:
            raise ValueError("pg kl_start and the entropy settings must be >= 0")


@dataclass(frozen=True)
class RLSettings(GameSettings, BackendSettings):
    """How self-play learns, whatever the run: the board, komi, rules and
    backend it inherits, the encoder and every stage's table. A run
    (:class:`RLConfig`) adds which network, how long and where; a self-play
    frontier study's ``[rl]`` table is this class, the study setting the rest
    per model."""

    encoder: str = "agz17"
    heads: list[str] = field(default_factory=list)  # extra heads of a fresh net
    # "alphazero": searched self-play into a replay window (the tables below);
    # "policy-gradient": AlphaGo's REINFORCE against a pool of past selves,
    # one generation per step ([pg]; [train] gives its optimizer).
    algorithm: str = setting("alphazero", "alphazero or policy-gradient")
    mcts: MCTSConfig = field(default_factory=MCTSConfig)
    evaluator: EvaluatorConfig = field(default_factory=EvaluatorConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    train: LearnerSettings = field(default_factory=LearnerSettings)
    window: WindowConfig = field(default_factory=WindowConfig)
    gating: GatingConfig = field(default_factory=GatingConfig)
    curriculum: CurriculumConfig = field(default_factory=CurriculumConfig)
    monitor: MonitorConfig = field(default_factory=MonitorConfig)
    pg: PolicyGradientConfig = field(default_factory=PolicyGradientConfig)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}")
        if self.algorithm == "policy-gradient":
            self._check_policy_gradient()
        if self.selfplay.path == "device" and (refusal := self.device_path_refusal()):
            raise ValueError(f"[selfplay] path = \"device\" {refusal}")
        if not 2 <= self.board_size <= 25:
            raise ValueError(f"board_size must be in 2..25, got {self.board_size}")
        if (self.curriculum.enabled and self.curriculum.criterion == "gating"
                and not self.gating.enabled):
            raise ValueError("curriculum criterion 'gating' needs [gating] enabled = true")
        for head in self.heads:
            if head not in EXTRA_HEADS:
                raise ValueError(f"unknown extra head {head!r} (choose from "
                                 f"{', '.join(EXTRA_HEADS)})")

    def device_path_refusal(self) -> str:
        """What of this run the device search does not do ('' when nothing):
        refused rather than ignored."""
        if self.encoder not in DEVICE_ENCODERS:
            return f"encodes {', '.join(DEVICE_ENCODERS)} only, not {self.encoder!r}"
        unsupported = [
            ('algorithm = "policy-gradient" (its games are unsearched)',
             self.algorithm == "policy-gradient"),
            ("[mcts] resign_threshold", self.mcts.resign_threshold is not None),
            ("[mcts] overlap", self.mcts.overlap),
            ("[selfplay] start_probability", self.selfplay.start_probability > 0),
            ("[evaluator] score_utility", self.evaluator.score_utility > 0),
        ]
        return next((f"does not support {what}" for what, used in unsupported if used), "")

    def _check_policy_gradient(self) -> None:
        """Refuse what the policy-gradient loop does not do, rather than ignore it."""
        unsupported = [
            ("[gating] enabled", self.gating.enabled),
            ("[curriculum] enabled", self.curriculum.enabled),
            ('backend = "ray"', self.backend == "ray"),
            ("[train] ema_decay", self.train.ema_decay > 0),
            ("[train] anchor_kl (use [pg] kl_start)", self.train.anchor_kl > 0),
            ("[train] mix_share", self.train.mix_share > 0),
            ("rules = \"nogo\"", self.rules == "nogo"),
        ]
        for what, used in unsupported:
            if used:
                raise ValueError(f"algorithm = \"policy-gradient\" does not support {what}")


@dataclass(frozen=True)
class RLConfig(RLSettings, RunSettings):
    """A self-play reinforcement-learning run: the settings of
    :class:`RLSettings` (``backend = "ray"``: self-play on Ray actors), the
    network, the run's length and where it lives."""

    model: str = setting("a0.tiny", "zoo name of a fresh network (a resumed run keeps its own)")
    generations: int = setting(
        10, "total generations (on --resume: extends or shortens the run)")
    max_hours: float = setting(
        0.0, "time budget in hours of the run's own clock (self-play and training; start-up, "
        "exports and checkpoints come on top): no new generation starts after it, 0: none "
        "(on --resume: replaces the saved budget)", flag="--hours")
    seed: int = setting(0, "random seed")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.generations < 1:
            raise ValueError("generations must be at least 1")
        if self.max_hours < 0:
            raise ValueError("max_hours must be >= 0 (0: no time limit)")
        if not self.run:
            raise ValueError("no run name given (set run = '...' or --run)")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
