"""Position evaluators: the one interface the search asks for priors and values.

An evaluator takes a batch of leaves as the search builds them (history rows,
side to move, legal mask) and returns the policy over legal moves (masked,
renormalised) and the value for the side to move in [-1, 1]. The search never
sees planes, symmetries or caches, so a test oracle and a Keras network are
interchangeable.

:class:`NetworkEvaluator` wraps a Keras model. Its forward pass runs on the
fastest runtime that agrees with Keras (:mod:`harness.search.runtime`) and
always at one of a few padded batch shapes, because on a CPU building graphs
and kernels for every new shape costs more than the padding.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol, runtime_checkable

import numpy as np
from numba import njit

from harness.game.geometry import geometry
from harness.search.cache import EvalCache, position_keys
from harness.search.config import EvaluatorConfig
from harness.search.runtime import default_inference, frozen_source, select_forward
from harness.search.utility import UTILITY, utility_model, utility_scale

_log = logging.getLogger(__name__)


@runtime_checkable
class Evaluator(Protocol):
    """What the search needs from a network (or an oracle standing in for one)."""

    size: int  # board size
    history: int  # T: positions per leaf (current last) the evaluator reads

    def evaluate(
        self, stones: np.ndarray, to_play: np.ndarray, legal: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Priors and values for a batch of positions.

        ``stones`` int8 (N, T, P) history rows (current last, empty before the
        game), ``to_play`` int8 (N,), ``legal`` bool (N, P + 1). Returns
        ``policy`` float32 (N, P + 1), zero on illegal moves and summing to 1,
        and ``value`` float32 (N,) in [-1, 1] for the side to move.
        """
        ...


@njit(cache=True, nogil=True)
def masked_softmax(logits, legal, inv_temperature, out):
    """Softmax over the legal moves only; uniform over them if the logits are
    not finite (a broken network must not stop a long self-play run)."""
    n, moves = logits.shape
    for i in range(n):
        top = -np.inf
        for m in range(moves):
            if legal[i, m] and logits[i, m] > top:
                top = logits[i, m]
        total = 0.0
        for m in range(moves):
            if legal[i, m]:
                e = np.exp((logits[i, m] - top) * inv_temperature)
                out[i, m] = e
                total += e
            else:
                out[i, m] = 0.0
        if not (total > 0.0 and np.isfinite(total)):
            count = 0
            for m in range(moves):
                if legal[i, m]:
                    count += 1
            total = 0.0
            for m in range(moves):
                out[i, m] = 1.0 if legal[i, m] else 0.0
            total = max(count, 1)
        for m in range(moves):
            out[i, m] /= total
    return out


@njit(cache=True, nogil=True)
def permuted_stones(stones, ks, source, out):
    """``out[i, t, q] = stones[i, t, source[ks[i], q]]``: each position under its symmetry."""
    for i in range(stones.shape[0]):
        k = ks[i]
        for t in range(stones.shape[1]):
            for q in range(stones.shape[2]):
                out[i, t, q] = stones[i, t, source[k, q]]
    return out


@njit(cache=True, nogil=True)
def unpermuted_logits(logits, ks, source, out):
    """Logits of positions seen under symmetry ``ks[i]`` back on the board's own
    points: the logit the network gave point ``q`` belongs to ``source[k, q]``
    (pass stays)."""
    points = source.shape[1]
    for i in range(logits.shape[0]):
        k = ks[i]
        for q in range(points):
            out[i, source[k, q]] = logits[i, q]
        out[i, points] = logits[i, points]
    return out


@njit(cache=True, nogil=True)
def clean_values(values, sigmoid):
    """Values in [-1, 1] in place: a sigmoid's [0, 1] rescaled, NaN as 0 (a
    broken network must not stop a long run), the rest clipped."""
    for i in range(values.shape[0]):
        v = values[i]
        if sigmoid:
            v = 2.0 * v - 1.0
        if np.isnan(v):
            v = 0.0
        values[i] = min(max(v, -1.0), 1.0)
    return values


def value_convention(model, head: str = "value") -> str:
    """"tanh" or "sigmoid": what the model's value output means.

    The zoo records it for the ``value`` head as ``model.value_loss`` ("mse" =
    tanh, "bce" = sigmoid); other heads (and models from elsewhere) tell
    through the activation of their output layer. Unknown means tanh.
    """
    if head == "value":
        loss = getattr(model, "value_loss", None)
        if loss in ("mse", "bce"):
            return "tanh" if loss == "mse" else "sigmoid"
        stated = getattr(model, "value_convention", None)
        if stated in ("tanh", "sigmoid"):
            return stated
    try:
        layer = model.get_layer(head)
    except (ValueError, AttributeError):
        return "tanh"
    activation = getattr(layer, "activation", None)
    name = getattr(activation, "__name__", str(activation))
    return "sigmoid" if "sigmoid" in name else "tanh"


def batch_shapes(batch_size: int) -> list[int]:
    """The padded shapes forward passes use: powers of two up to an eighth of
    the batch size (at least 16), then multiples of that step.

    A fixed few shapes keep the oneDNN kernels built once per shape; steps of
    an eighth waste at most that share of a pass on padding. Self-play
    batches are rarely full (cache hits, finished games): 96 positions padded
    to 128 cost a 9x9 ``a0.4.32`` 24 ms instead of 21.
    """
    step = max(16, batch_size // 64 * 8)
    shapes, s = [], 8
    while s < min(step, batch_size):
        shapes.append(s)
        s *= 2
    shapes.extend(range(s, batch_size, step))
    shapes.append(batch_size)
    return shapes


class NetworkEvaluator:
    """A Keras policy-value model behind the :class:`Evaluator` interface.

    ``encoder`` is an encoder name or object (``harness.features``); the model
    takes its planes ``(N, B, B, C)`` and returns ``policy`` logits
    ``(N, B*B + 1)`` and a value output (``config.value_head``) ``(N, 1)``.
    ``inference`` picks the runtime (``auto``, ``keras``, ``onnx``,
    ``openvino``; None: ``$HARNESS_INFERENCE`` or ``auto``); ``runtime.choice``
    says which one runs each batch shape. With ``config.score_utility`` the
    value it returns is the win value blended with the score head's margin
    (:mod:`harness.search.utility`), computed inside the forward pass.

    ``evaluate`` may be called from two threads at once (overlapped search):
    each thread encodes into its own input buffer and runs the network
    unlocked; the cache, the symmetry draws and the counters are shared
    under a lock.
    """

    def __init__(self, model, encoder, size: int, config: EvaluatorConfig | None = None,
                 inference: str | None = None):
        from harness.features import get_encoder

        self.config = config or EvaluatorConfig()
        self.model = model
        self.encoder = get_encoder(encoder) if isinstance(encoder, str) else encoder
        self.size = int(size)
        self.history = int(self.encoder.history)
        self.planes = int(self.encoder.planes)
        self.moves = self.size * self.size + 1
        self._check_model()
        self.convention = self.config.value_convention or value_convention(
            model, self.config.value_head
        )
        # The model the forward pass runs: the network, or its utility wrapper.
        self._served, self._value_output = model, self.config.value_head
        if self.config.score_utility:
            self._served = utility_model(
                model, self.config.score_utility,
                utility_scale(self.config.score_utility_scale, self.size),
                self.config.value_head, sigmoid=self.convention == "sigmoid")
            self._value_output, self.convention = UTILITY, "tanh"
        self._zobrist = geometry(self.size).zobrist
        self._rng = np.random.default_rng(self.config.seed)
        self._shapes = batch_shapes(self.config.batch_size)
        self._local = threading.local()  # each calling thread's input buffer
        self._lock = threading.Lock()
        self.cache = (
            EvalCache(self.config.cache_size, self.moves) if self.config.cache_size else None
        )
        self._sources: np.ndarray | None = None
        self.inference = inference or default_inference()
        self._exported_weights = ""
        self._forward = self._select_runtime()
        self.positions = 0  # positions the network evaluated (cache misses)
        self.calls = 0  # forward passes run
        self.seconds = 0.0  # wall time inside forward passes

    # --- the network ----------------------------------------------------
    def _check_model(self) -> None:
        """Fail at once, in one line, when model and encoder do not fit."""
        name = getattr(self.model, "name", type(self.model).__name__)
        inputs = getattr(self.model, "inputs", None)
        if inputs:
            shape = tuple(inputs[0].shape[1:])
            wanted = (self.size, self.size, self.planes)
            if shape != wanted:
                raise ValueError(
                    f"model {name} takes inputs {shape}, but a {self.size}x{self.size} board "
                    f"with encoder {getattr(self.encoder, 'name', '?')} gives {wanted}"
                )
        names = list(getattr(self.model, "output_names", None) or [])
        for output in ("policy", self.config.value_head):
            if names and output not in names:
                raise ValueError(f"model {name} has no {output!r} output (outputs: {names})")

    def _select_runtime(self):
        """The forward pass: Keras, or an export of it that agrees with Keras
        and runs faster here (:mod:`harness.search.runtime`)."""
        if self.inference != "keras" and frozen_source(self._served) is None:
            from harness.nets.export import weights_hash

            self._exported_weights = weights_hash(self._served)  # what an export would hold
        return select_forward(self._served, self.inference, self._shapes,
                              value_head=self._value_output,
                              keras_mode=self.config.forward, log=_log.info,
                              threads=self.config.threads)

    def _input(self) -> np.ndarray:
        """This thread's padded input buffer."""
        x = getattr(self._local, "x", None)
        if x is None:
            x = self._local.x = np.zeros(
                (self.config.batch_size, self.size, self.size, self.planes), np.float32)
        return x

    def forward(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Raw logits (N, P + 1) and values in [-1, 1] (N,) for encoded planes."""

        def copy(x, start, stop):
            x[...] = planes[start:stop]

        return self._batches(planes.shape[0], copy)

    def _batches(self, n: int, fill) -> tuple[np.ndarray, np.ndarray]:
        """Run ``n`` positions in chunks of at most ``batch_size``: ``fill(x, a,
        b)`` writes the planes of positions a..b into ``x``, a view of the
        padded input buffer, which then runs at the next fixed shape (rows
        past the chunk hold stale planes whose outputs are ignored)."""
        started = time.perf_counter()
        logits = np.empty((n, self.moves), np.float32)
        values = np.empty(n, np.float32)
        limit = self.config.batch_size
        x, forward, calls = self._input(), self._forward, 0
        for start in range(0, n, limit):
            stop = min(start + limit, n)
            count = stop - start
            fill(x[:count], start, stop)
            shape = next(s for s in self._shapes if s >= count)
            p, v = forward(x[:shape])
            logits[start:stop] = p[:count]
            values[start:stop] = v[:count]
            calls += 1
        clean_values(values, self.convention == "sigmoid")
        with self._lock:
            self.calls += calls
            self.positions += n
            self.seconds += time.perf_counter() - started
        return logits, values

    def _symmetries(self, n: int) -> np.ndarray | None:
        mode = self.config.symmetry
        if mode == "none":
            return None
        if mode == "random":
            return self._rng.integers(0, 8, n)
        if int(mode) == 0:
            return None
        return np.full(n, int(mode), np.int64)

    def _network(self, stones: np.ndarray, to_play: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Logits in the board's own orientation and values, from the network.

        A symmetry is applied to the int8 stones before encoding rather than
        to the float planes after: the same result, since every encoder is a
        geometric function of the stones, at a fraction of the memory traffic.
        """
        with self._lock:
            ks = self._symmetries(stones.shape[0])
        if ks is not None:
            stones = permuted_stones(stones, ks, self._point_sources(), np.empty_like(stones))

        def encode(x, start, stop):
            planes = self.encoder.encode(stones[start:stop], to_play[start:stop], self.size, out=x)
            if planes is not x:  # an encoder that ignores ``out``
                x[...] = planes

        logits, values = self._batches(stones.shape[0], encode)
        if ks is not None:
            logits = unpermuted_logits(logits, ks, self._point_sources(), np.empty_like(logits))
        return logits, values

    def _point_sources(self) -> np.ndarray:
        """``sources[k, q]``: the point whose stone lands on ``q`` under symmetry ``k``."""
        if self._sources is None:
            from harness.features.symmetry import transform_points

            points = np.arange(self.size * self.size)
            self._sources = np.stack(
                [np.argsort(transform_points(points, k, self.size)) for k in range(8)]
            )
        return self._sources

    # --- the Evaluator interface ------------------------------------------
    def evaluate(
        self, stones: np.ndarray, to_play: np.ndarray, legal: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        n = stones.shape[0]
        if self.cache is None:
            logits, values = self._network(stones, to_play)
        else:
            keys = position_keys(stones, to_play, self._zobrist, np.empty(n, np.uint64))
            logits = np.empty((n, self.moves), np.float32)
            values = np.empty(n, np.float32)
            with self._lock:
                hit = self.cache.lookup(keys, logits, values)
            miss = np.flatnonzero(~hit)
            if miss.size:
                fresh_logits, fresh_values = self._network(stones[miss], to_play[miss])
                logits[miss] = fresh_logits
                values[miss] = fresh_values
                with self._lock:
                    self.cache.insert(keys[miss], fresh_logits, fresh_values)
        policy = np.empty((n, self.moves), np.float32)
        masked_softmax(logits, legal, 1.0 / self.config.policy_temperature, policy)
        return policy, values

    @property
    def runtime(self):
        """The forward pass in use; ``runtime.choice`` names its runtimes."""
        return self._forward

    def reseed(self, seed: int) -> None:
        """Restart the random-symmetry draws from ``seed``.

        Self-play reseeds at each unit of games, so that a unit's games depend
        on the run's seed only, not on which process played it or on what the
        evaluator served before.
        """
        self._rng = np.random.default_rng(seed)

    def clear_cache(self) -> None:
        """Forget cached outputs (call after changing the model's weights).

        An exported graph holds the weights it was exported with, so a model
        that is not frozen to a file and runs through one is exported again
        when its weights have changed since.
        """
        if self.cache is not None:
            self.cache.clear()
        exported = set(self._forward.choice.by_shape.values()) != {"keras"}
        if exported and frozen_source(self._served) is None:
            from harness.nets.export import weights_hash

            if weights_hash(self._served) != self._exported_weights:
                self._forward = self._select_runtime()


def reseed_symmetries(evaluator, seed: int) -> None:
    """Restart ``evaluator``'s random symmetries from ``seed``, where it draws any.

    What plays games from a seed (a self-play unit, a gating match) calls
    this, so its games follow from that seed alone.
    """
    reseed = getattr(evaluator, "reseed", None)
    if reseed is not None:
        reseed(seed)
