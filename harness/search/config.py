"""Search and evaluator settings as plain dataclasses.

Everything a tournament or self-play config may want to vary lives here, so
that a TOML table maps onto one of these classes field by field and a result
can say exactly which settings produced it.
"""

from __future__ import annotations

from dataclasses import dataclass

SYMMETRY_MODES = ("random", "none")
VALUE_CONVENTIONS = ("tanh", "sigmoid")
FORWARD_MODES = ("function", "predict_on_batch")
PASS_RULES = ("finished", "free")
ROOT_RULES = ("puct", "gumbel")
Q_NORMALISATIONS = ("range", "minmax")


@dataclass(frozen=True)
class MCTSConfig:
    """PUCT search settings (AlphaZero defaults, KataGo's playout cap optional).

    ``playouts`` is the number of root visits a full search reaches; visits
    kept from the previous move's tree count towards it, so a reused tree
    needs fewer new evaluations and the tree never outgrows its arrays.
    """

    playouts: int = 200
    # Exploration c(s) = c_puct + log((1 + N + c_base) / c_base); c_base <= 0
    # keeps c(s) = c_puct constant (NoGoZero+ style).
    c_puct: float = 1.25
    c_base: float = 19652.0
    # First-play urgency: an unvisited child is worth the parent's value minus
    # fpu_reduction * sqrt(prior mass already visited). None at the root means
    # the same as elsewhere.
    fpu_reduction: float = 0.25
    fpu_root_reduction: float | None = None
    # Dirichlet root noise: alpha = noise_alpha_total / legal moves unless a
    # fixed noise_alpha is given; mixed with weight noise_epsilon.
    add_noise: bool = False
    noise_alpha_total: float = 10.0
    noise_alpha: float | None = None
    noise_epsilon: float = 0.25
    # Move choice: temperature for the first temperature_moves moves, then
    # greedy (most visits).
    temperature_moves: int = 0
    temperature: float = 1.0
    # Leaves gathered per game per network call, kept apart by virtual loss
    # (each in-flight visit counts as virtual_loss lost games).
    leaves_per_game: int = 1
    virtual_loss: float = 1.0
    reuse_tree: bool = True
    # Resignation: resign when the root value and the best move's value are
    # both at or below the threshold (None disables); a fraction of games
    # never resigns so false resignations can be measured.
    resign_threshold: float | None = None
    resign_disabled_fraction: float = 0.1
    resign_min_moves: int = 0
    # Playout-cap randomisation (KataGo): with fast_playouts set, a move gets a
    # full search (playouts, root noise, recorded as a training target) with
    # probability full_search_prob and a fast one (fast_playouts, no noise,
    # not recorded) otherwise.
    fast_playouts: int | None = None
    full_search_prob: float = 0.25
    # Node capacity per game; None sizes it for the worst case of
    # max(playouts, fast_playouts) expansions of every legal move.
    max_nodes: int | None = None
    # "finished": in Go the search may pass only when nothing is left but
    # filling its own eyes, or to end the game with a Tromp-Taylor win after
    # the opponent passed (harness.search.leaves.restrict_pass). "free": pass
    # is always a candidate, as the rules allow.
    pass_rule: str = "finished"
    # Go: may the search play into one of its own true eyes (all four
    # neighbours its stones, not a false eye: harness.game.board.is_eye)?
    # False (the default since 2026-11-26; runs saved before then filled
    # eyes) keeps such moves out of the tree. Under area scoring filling an
    # own eye never gains a point; what it can do is kill the group: with
    # pass_rule "finished" a player that is behind when the opponent passes
    # may not accept the count, and fills its own area down to one eye.
    # Without eye fills it stops at its eyes, where pass becomes legal, and
    # the count stands (docs/results.md, "Why the losses to GNU Go end with
    # every stone dead": 9x9 self-play games 25% shorter, none at the move
    # cap, no group that lived at the winner's pass dying after it).
    fill_eyes: bool = False
    # "puct": AlphaZero's search above. "gumbel": Gumbel AlphaZero (Danihelka
    # et al., ICLR 2022; harness.search.gumbel): Gumbel-top-k sampling of at
    # most gumbel_k root moves and sequential halving of the budget among
    # them, the deterministic non-root rule, the sequential-halving winner as
    # the move and the completed-Q improved policy as the training target.
    # Completed Q values are mapped to [0, 1] and scaled by (c_visit + max
    # visits) * c_scale. q_normalisation "range": by the value range [-1, 1]
    # (the paper's c_scale = 1 for board games); "minmax": by the min and max
    # over the node's children (mctx's default, meant for c_scale ~ 0.1: with
    # c_scale = 1 any Q difference becomes a 50-logit gap).
    # There, add_noise means Gumbel noise on every search (full or fast: it is
    # how self-play explores, so temperature and Dirichlet noise are unused),
    # and each search starts from a fresh tree (the halving schedule counts
    # one search's simulations; the evaluation cache recovers reuse's savings).
    root: str = "puct"
    gumbel_k: int = 16
    c_visit: float = 50.0
    c_scale: float = 1.0
    q_normalisation: str = "range"
    # Overlap tree work with the network (self-play with many slots): the
    # slots split into two groups, and while one group's leaves are being
    # evaluated on a worker thread the main thread expands, backs up and
    # gathers the other's. Each group still searches exactly as it would
    # alone; only the order of the steps changes.
    overlap: bool = False
    # Threads that gather a step's leaves (descents, leaf positions, legal
    # moves: most of the search's own work), each on its own contiguous
    # share of a slot group's games (harness.search.shares). The shares'
    # leaves are packed in slot order, so the evaluator sees the batch one
    # thread builds and the search is the same, bit for bit, for any count;
    # only the host's time changes.
    host_threads: int = 1

    def __post_init__(self) -> None:
        if self.host_threads < 1:
            raise ValueError(f"host_threads must be >= 1, got {self.host_threads}")
        if self.pass_rule not in PASS_RULES:
            raise ValueError(f"pass_rule must be one of {PASS_RULES}, got {self.pass_rule!r}")
        if self.root not in ROOT_RULES:
            raise ValueError(f"root must be one of {ROOT_RULES}, got {self.root!r}")
        if self.q_normalisation not in Q_NORMALISATIONS:
            raise ValueError(
                f"q_normalisation must be one of {Q_NORMALISATIONS}, got {self.q_normalisation!r}"
            )
        if self.gumbel_k < 1:
            raise ValueError(f"gumbel_k must be >= 1, got {self.gumbel_k}")
        if self.c_visit < 0 or self.c_scale < 0:
            raise ValueError("c_visit and c_scale must be >= 0")
        if self.playouts < 1:
            raise ValueError(f"playouts must be >= 1, got {self.playouts}")
        if self.fast_playouts is not None and self.fast_playouts < 1:
            raise ValueError(f"fast_playouts must be >= 1, got {self.fast_playouts}")
        if not 0.0 <= self.full_search_prob <= 1.0:
            raise ValueError(f"full_search_prob must be in [0, 1], got {self.full_search_prob}")
        if not 0.0 <= self.noise_epsilon <= 1.0:
            raise ValueError(f"noise_epsilon must be in [0, 1], got {self.noise_epsilon}")
        if not 0.0 <= self.resign_disabled_fraction <= 1.0:
            raise ValueError("resign_disabled_fraction must be in [0, 1]")
        if self.leaves_per_game < 1:
            raise ValueError(f"leaves_per_game must be >= 1, got {self.leaves_per_game}")
        if self.virtual_loss < 0:
            raise ValueError(f"virtual_loss must be >= 0, got {self.virtual_loss}")
        if self.c_puct <= 0:
            raise ValueError(f"c_puct must be > 0, got {self.c_puct}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")

    @property
    def gumbel(self) -> bool:
        return self.root == "gumbel"

    @property
    def max_playouts(self) -> int:
        return max(self.playouts, self.fast_playouts or 0)

    @property
    def root_fpu_reduction(self) -> float:
        return self.fpu_reduction if self.fpu_root_reduction is None else self.fpu_root_reduction


@dataclass(frozen=True)
class EvaluatorConfig:
    """How a network is asked about positions.

    Forward passes run at a few fixed batch shapes (steps of an eighth of
    ``batch_size``, see ``evaluator.batch_shapes``) so that the compiled graph
    and the oneDNN kernels are built once per shape, never per call.
    """

    batch_size: int = 256
    # "random": a random symmetry per position; "none": identity; or a fixed
    # symmetry index 0..7.
    symmetry: str | int = "none"
    # Positions remembered (0 disables the cache). Keyed by the whole network
    # input (the history rows and the side to move).
    cache_size: int = 0
    value_head: str = "value"
    # "tanh" (value in [-1, 1]) or "sigmoid" (win probability, mapped to
    # 2p - 1); None asks the model and falls back to tanh.
    value_convention: str | None = None
    # Softmax temperature of the policy (NoGoZero+ uses 1.03 at the root).
    policy_temperature: float = 1.0
    forward: str = "function"
    seed: int | None = None
    # Threads one forward pass may use (0: the runtime's default, every core).
    # Overlapped self-play ([mcts] overlap) evaluates its two slot groups side
    # by side, and two one-thread passes outrun one two-thread pass on two
    # cores (harness bench selfplay --overlap).
    threads: int = 0
    # KataGo's score utility (harness.search.utility): the tree backs up
    # (1 - w) value + w (2/pi) atan(score / scale) instead of the value, from a
    # network with a score head. 0: off, the value alone. The root value a
    # self-play game records (and [train] value_mix blends) is then the utility.
    score_utility: float = 0.0
    # Points at which the score term is half its maximum; 0: the board's side.
    score_utility_scale: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.score_utility <= 1.0:
            raise ValueError(f"score_utility must be in [0, 1], got {self.score_utility}")
        if self.score_utility_scale < 0:
            raise ValueError(f"score_utility_scale must be >= 0, got {self.score_utility_scale}")
        if self.threads < 0:
            raise ValueError(f"threads must be >= 0, got {self.threads}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if isinstance(self.symmetry, str):
            if self.symmetry not in SYMMETRY_MODES:
                raise ValueError(
                    f"symmetry must be one of {SYMMETRY_MODES} or 0..7, got {self.symmetry!r}"
                )
        elif not 0 <= int(self.symmetry) <= 7:
            raise ValueError(f"symmetry index must be 0..7, got {self.symmetry}")
        if self.cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {self.cache_size}")
        if self.value_convention is not None and self.value_convention not in VALUE_CONVENTIONS:
            raise ValueError(
                f"value_convention must be one of {VALUE_CONVENTIONS}, "
                f"got {self.value_convention!r}"
            )
        if self.policy_temperature <= 0:
            raise ValueError("policy_temperature must be > 0")
        if self.forward not in FORWARD_MODES:
            raise ValueError(f"forward must be one of {FORWARD_MODES}, got {self.forward!r}")
