"""Inference runtimes: the forward pass of a policy-value network, as fast as this CPU runs it.

A *forward* is a callable from float32 planes ``(N, B, B, C)`` to raw policy
logits ``(N, B*B + 1)`` and raw values ``(N,)``. Keras is the source of truth
and the fallback; ONNX Runtime and OpenVINO run the graph exported from the
``.keras`` file (:mod:`harness.nets.export`), which on a CPU is 1.4-7x the
speed of Keras at search batch sizes (issue 19's table, and ``harness bench
runtime``). Which one wins depends on the CPU, the board, the model and the
batch size, so ``auto`` measures: every runtime that agrees with Keras on
sample positions is timed at the smallest and the largest batch shape the
evaluator uses, alternating the candidates, and each shape runs on the
runtime fastest at the nearer of the two.

An exported runtime is used only when its outputs agree with Keras within
:data:`TOLERANCE` (policy probabilities and values, absolute). A model loaded
from a ``.keras`` file whose weights do not change afterwards (players, GTP,
tournaments: :func:`mark_frozen`) is exported once and the graph cached beside
the file. A model trained in memory (RL self-play) is exported from its
current weights into a temporary file that lives only until the runtimes have
read it; an exported graph does not follow later weight changes, so whoever
changes the weights selects the runtime again (``NetworkEvaluator.clear_cache``
does), which costs about a second per export on 9x9 here.
``HARNESS_INFERENCE`` (set by ``--inference``) forces a runtime in this
process and its workers.

OpenVINO and ONNX Runtime send telemetry by default (``import openvino``
writes ``~/intel/openvino_ga_cid`` and ``~/intel/stats`` and starts a process
to post them; an ONNX Runtime session writes a device id under
``~/.cache/Microsoft``); :func:`import_openvino` and :func:`import_onnxruntime`,
the one place the harness imports each, turn that off first.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

RUNTIMES = ("keras", "onnx", "openvino")
INFERENCE_MODES = ("auto", *RUNTIMES)
ENVIRONMENT = "HARNESS_INFERENCE"
# Largest absolute difference allowed between an exported runtime and Keras,
# on softmax policy probabilities and on values. float32 graphs that fuse
# batch norm into convolutions differ by ~1e-6; 1e-3 leaves room for other
# summation orders and still catches a wrong graph (a broken layer differs by
# far more than a tenth of a percent).
TOLERANCE = 1e-3
CHECK_POSITIONS = 16
# Auto-selection times a shape only while one call of it takes about this long.
PROBE_SECONDS = 0.1

Forward = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


class RuntimeMismatch(RuntimeError):
    """An exported runtime whose outputs differ from Keras's."""


def default_inference() -> str:
    """The process's inference mode: ``$HARNESS_INFERENCE`` or ``auto``."""
    mode = os.environ.get(ENVIRONMENT, "").strip() or "auto"
    if mode not in INFERENCE_MODES:
        raise ValueError(f"{ENVIRONMENT}={mode!r}: choose from {', '.join(INFERENCE_MODES)}")
    return mode


def mark_frozen(model, path: str | os.PathLike) -> None:
    """Record that ``model`` holds the weights of ``path`` and keeps them, so
    ``auto`` may run it through an export of that file."""
    model.frozen_source = Path(path)


def frozen_source(model) -> Path | None:
    return getattr(model, "frozen_source", None)


def _outputs(model, value_head: str):
    names = list(getattr(model, "output_names", None) or [])

    def pick(out):
        if isinstance(out, dict):
            return out["policy"], out[value_head]
        if isinstance(out, (list, tuple)):
            return out[names.index("policy")], out[names.index(value_head)]
        raise TypeError(f"model returned {type(out).__name__}, expected a dict or list")

    return pick


class OneTracePerNetwork(logging.Filter):
    """Drops TensorFlow's "triggered tf.function retracing" warning.

    TensorFlow counts traces by the Python function's code, not by the
    ``tf.function`` object: every network's forward below is the same code, so
    a tournament worker holding eight networks, or an RL run loading each new
    checkpoint, is warned of "retracing" although each function is traced
    exactly once (its input signature has a free batch axis)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "triggered tf.function retracing" not in record.getMessage()


_ONE_TRACE = OneTracePerNetwork()


def keras_forward(model, value_head: str = "value", mode: str = "function") -> Forward:
    """Keras's forward pass, compiled by the backend (``mode="function"``) or
    through ``predict_on_batch``: on TensorFlow a ``tf.function`` with a free
    batch axis, traced once; on JAX a ``jax.jit`` of the model's stateless
    call; on PyTorch the model called without autograd."""
    import keras

    pick = _outputs(model, value_head)
    backend = keras.backend.backend()
    if mode == "function" and backend == "tensorflow":
        return _tensorflow_forward(model, pick)
    if mode == "function" and backend == "jax":
        return _jax_forward(model, pick)
    if mode == "function" and backend == "torch":
        return _torch_forward(model, pick)

    def forward(x):
        policy, value = pick(model.predict_on_batch(x))
        return np.asarray(policy), np.asarray(value).reshape(-1)

    return forward


def _tensorflow_forward(model, pick) -> Forward:
    import tensorflow as tf

    logger = tf.get_logger()
    if _ONE_TRACE not in logger.filters:
        logger.addFilter(_ONE_TRACE)

    spec = tf.TensorSpec((None, *model.inputs[0].shape[1:]), tf.float32)

    @tf.function(input_signature=[spec], jit_compile=False, reduce_retracing=True)
    def run(x):
        policy, value = pick(model(x, training=False))
        return policy, tf.reshape(value, [-1])

    def forward(x):
        policy, value = run(x)
        return policy.numpy(), value.numpy()

    return forward


def padded_rows(n: int) -> int:
    """The batch a shape-compiled forward runs ``n`` rows in: the next power
    of two, so that a search's many batch sizes compile about log2(max) times."""
    return 1 << max(0, int(n) - 1).bit_length()


def _pad(x: np.ndarray) -> np.ndarray:
    rows = padded_rows(len(x))
    if rows == len(x):
        return x
    return np.concatenate([x, np.zeros((rows - len(x), *x.shape[1:]), x.dtype)])


def _jax_forward(model, pick) -> Forward:
    """XLA compiles one program per input shape, so batches are padded to a
    power of two. The weights are read at each call: a model trained in this
    process (self-play's learner) is evaluated with its current weights."""
    import jax

    @jax.jit
    def run(trainable, non_trainable, x):
        out, _ = model.stateless_call(trainable, non_trainable, x, training=False)
        policy, value = pick(out)
        return policy, value.reshape(-1)

    def forward(x):
        n = len(x)
        policy, value = run([v.value for v in model.trainable_variables],
                            [v.value for v in model.non_trainable_variables], _pad(x))
        return np.asarray(policy[:n], np.float32), np.asarray(value[:n], np.float32)

    return forward


def _torch_forward(model, pick) -> Forward:
    import keras
    import torch

    def forward(x):
        with torch.no_grad():
            policy, value = pick(model(x, training=False))
        return (keras.ops.convert_to_numpy(policy).astype(np.float32),
                keras.ops.convert_to_numpy(value).astype(np.float32).reshape(-1))

    return forward


ORT_TELEMETRY_OPT_OUT = "ORT_DISABLE_TELEMETRY"


def import_onnxruntime():
    """``onnxruntime``, imported with its telemetry off.

    Since 1.29 ONNX Runtime's Linux builds report usage to Microsoft (1DS):
    the first session writes ``~/.cache/Microsoft/DeveloperTools/.onnxruntime/``
    (a device id and an event store) and uploads from there. The variable
    ``ORT_DISABLE_TELEMETRY`` (read when its environment is created) turns that
    off: nothing is written or sent. Set here, before the first import, and
    inherited by every process this one starts; a user who wants to report
    sets it to 0 first. Every use of ONNX Runtime comes through here (a test
    keeps it so).
    """
    os.environ.setdefault(ORT_TELEMETRY_OPT_OUT, "1")
    import onnxruntime

    return onnxruntime


def onnx_forward(path: str | os.PathLike, value_head: str = "value", threads: int = 0) -> Forward:
    """ONNX Runtime on the CPU, all graph optimisations on; ``threads`` per
    run (0: one per core). A session may run from several threads at once."""
    ort = import_onnxruntime()

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    wanted = ["policy", value_head]

    def forward(x):
        policy, value = session.run(wanted, {name: x})
        return policy, value.reshape(-1)

    return forward


def import_openvino():
    """``openvino``, imported with its telemetry off: nothing written under ``~``, nothing sent.

    The installed ``openvino_telemetry`` reads no opt-out variable: its
    documented opt-out (``opt_in_out --opt_out``) itself writes
    ``~/intel/openvino_telemetry`` and posts an opt-out event, and its only
    other off switch is guessing a CI job from ``CI``/``TF_BUILD``/
    ``JENKINS_URL``, which would mislead other tools. OpenVINO's own model
    conversion package falls back to its bundled no-op ``telemetry_stub``
    when ``openvino_telemetry`` cannot be imported; a ``None`` entry in
    ``sys.modules`` makes that import fail, in this process only, and every
    process that runs OpenVINO comes through here (a test keeps it so).
    """
    if "openvino" not in sys.modules:
        sys.modules["openvino_telemetry"] = None  # import -> ImportError -> the stub
    import openvino

    return openvino


def openvino_forward(path: str | os.PathLike, value_head: str = "value",
                     threads: int = 0) -> Forward:
    """OpenVINO on the CPU in float32 (its default on bfloat16-capable CPUs is
    bfloat16, which would not pass the check against Keras); ``threads`` per
    inference (0: its default). Each calling thread gets its own request."""
    ov = import_openvino()
    core = ov.Core()
    settings = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY"}
    if threads:
        settings["INFERENCE_NUM_THREADS"] = threads
    compiled = core.compile_model(core.read_model(str(path)), "CPU", settings)
    local = threading.local()
    policy_port, value_port = compiled.output("policy"), compiled.output(value_head)

    def forward(x):
        request = getattr(local, "request", None)
        if request is None:
            request = local.request = compiled.create_infer_request()
        results = request.infer({0: x})
        return np.array(results[policy_port]), np.array(results[value_port]).reshape(-1)

    return forward


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def sample_planes(shape: Sequence[int], count: int = CHECK_POSITIONS, seed: int = 0) -> np.ndarray:
    """Binary planes like an encoder's (stones, liberties, ones): the
    positions an export is checked on."""
    rng = np.random.default_rng(seed)
    return (rng.random((count, *shape)) < 0.3).astype(np.float32)


def disagreement(forward: Forward, reference: Forward, planes: np.ndarray) -> tuple[float, float]:
    """Largest absolute differences (policy probabilities, values) on ``planes``."""
    p, v = forward(planes)
    q, w = reference(planes)
    return (float(np.max(np.abs(_softmax(p) - _softmax(q)))),
            float(np.max(np.abs(np.asarray(v) - np.asarray(w)))))


def checked(forward: Forward, reference: Forward, planes: np.ndarray, name: str) -> Forward:
    """``forward`` if it agrees with ``reference`` within :data:`TOLERANCE`."""
    policy, value = disagreement(forward, reference, planes)
    if not (policy <= TOLERANCE and value <= TOLERANCE):
        raise RuntimeMismatch(f"{name} differs from Keras by {policy:.2g} in policy and "
                              f"{value:.2g} in value (tolerance {TOLERANCE:g})")
    return forward


def time_call(forward: Forward, x: np.ndarray) -> float:
    started = time.perf_counter()
    forward(x)
    return time.perf_counter() - started


Timer = Callable[[Forward, np.ndarray], float]


def fastest(candidates: dict[str, Forward], x: np.ndarray, rounds: int = 3,
            timer: Timer = time_call) -> str:
    """The candidate with the lowest median time on ``x``, calls alternating
    between candidates so that a busy machine slows them alike."""
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for forward in candidates.values():
        forward(x)  # warm-up: builds kernels for this shape
    for _ in range(rounds):
        for name, forward in candidates.items():
            times[name].append(timer(forward, x))
    return min(times, key=lambda name: float(np.median(times[name])))


@dataclass(frozen=True)
class Choice:
    """Which runtime runs each batch shape, and why the others were left out."""

    by_shape: dict[int, str]
    rejected: dict[str, str]

    def describe(self) -> str:
        used = sorted(set(self.by_shape.values()))
        text = ", ".join(f"{name} for batches {_ranges(self.by_shape, name)}" for name in used)
        if self.rejected:
            text += "; not used: " + "; ".join(f"{k} ({v})" for k, v in self.rejected.items())
        return text


def _ranges(by_shape: dict[int, str], name: str) -> str:
    shapes = [s for s, n in sorted(by_shape.items()) if n == name]
    return f"{shapes[0]}-{shapes[-1]}" if len(shapes) > 1 else str(shapes[0])


def choose(candidates: dict[str, Forward], shapes: Sequence[int], sample: np.ndarray,
           timer: Timer = time_call) -> Choice:
    """Pick the fastest candidate at the smallest shape and at the largest
    shape that runs in about :data:`PROBE_SECONDS`; every shape takes the
    pick of the nearer probe (in log scale). ``timer`` times one call."""
    shapes = sorted(shapes)
    if len(candidates) == 1:
        only = next(iter(candidates))
        return Choice({s: only for s in shapes}, {})
    reference = next(iter(candidates.values()))
    small = shapes[0]
    per_position = timer(reference, tile_sample(sample, small)) / small
    fitting = [s for s in shapes if s * per_position <= PROBE_SECONDS] or [small]
    probes = sorted({small, fitting[-1]})
    picks = {p: fastest(candidates, tile_sample(sample, p), timer=timer) for p in probes}
    by_shape = {s: picks[min(probes, key=lambda p: abs(np.log(s / p)))] for s in shapes}
    return Choice(by_shape, {})


def tile_sample(sample: np.ndarray, n: int) -> np.ndarray:
    """``n`` positions: ``sample`` repeated and cut."""
    reps = -(-n // sample.shape[0])
    return np.ascontiguousarray(np.concatenate([sample] * reps)[:n])


class ShapeDispatch:
    """A forward that sends each batch to the runtime chosen for its shape."""

    def __init__(self, forwards: dict[str, Forward], choice: Choice):
        self.choice = choice
        self._by_shape = {s: forwards[name] for s, name in choice.by_shape.items()}
        self._default = forwards[choice.by_shape[max(choice.by_shape)]]

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._by_shape.get(x.shape[0], self._default)(x)


BUILDERS: dict[str, Callable[[Path, str, int], Forward]] = {
    "onnx": onnx_forward,
    "openvino": openvino_forward,
}


def exported_runtimes_unavailable() -> str | None:
    """Why ONNX Runtime and OpenVINO cannot beat Keras here, or None where
    they may: TensorFlow (which exports the graph) on a CPU (where both run)."""
    from harness.devices import device

    dev = device()
    if dev.backend != "tensorflow":
        return (f"the graph is exported through TensorFlow; {dev.backend} runs its own "
                "compiled forward")
    if dev.is_gpu:
        return "ONNX Runtime and OpenVINO run on the CPU here; the GPU runs Keras"
    return None


def select_forward(model, inference: str, shapes: Sequence[int], *, value_head: str = "value",
                   keras_mode: str = "function", log: Callable[[str], None] | None = None,
                   threads: int = 0) -> ShapeDispatch:
    """The forward pass an evaluator runs: ``inference`` is ``keras``,
    ``onnx``, ``openvino`` (forced: an export that fails or disagrees with
    Keras is an error) or ``auto`` (measured among those that work).
    ``threads`` bounds an exported runtime's threads per call (Keras uses
    TensorFlow's process-wide pools)."""
    if inference not in INFERENCE_MODES:
        raise ValueError(f"inference must be one of {INFERENCE_MODES}, got {inference!r}")
    keras = keras_forward(model, value_head, keras_mode)
    forwards: dict[str, Forward] = {"keras": keras}
    rejected: dict[str, str] = {}
    wanted = [] if inference == "keras" else [inference] if inference != "auto" else list(BUILDERS)
    unavailable = exported_runtimes_unavailable()
    if unavailable and wanted:
        if inference != "auto":
            raise ValueError(f"inference {inference}: {unavailable}")
        rejected = dict.fromkeys(wanted, unavailable)
        wanted = []
    sample = sample_planes(model.inputs[0].shape[1:]) if wanted else None
    if wanted:
        from harness.nets.export import graph_file

        with graph_file(model, frozen_source(model)) as graph:
            reference = keras
            for name in wanted:
                try:
                    from harness.nets.precision import float32_copy, is_float32

                    if reference is keras and not is_float32(model):  # the export is float32
                        reference = keras_forward(float32_copy(model), value_head, keras_mode)
                    forward = BUILDERS[name](graph(), value_head, threads)
                    forwards[name] = checked(forward, reference, sample, name)
                except Exception as error:  # a runtime that is missing, fails or disagrees
                    if inference != "auto":
                        raise
                    rejected[name] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
    if inference not in ("auto", "keras"):
        forwards = {inference: forwards[inference]}
    choice = choose(forwards, shapes, sample) if len(forwards) > 1 else Choice(
        {s: next(iter(forwards)) for s in shapes}, {})
    choice = Choice(choice.by_shape, rejected)
    if log is not None and (wanted or rejected):
        log(f"inference: {choice.describe()}")
    return ShapeDispatch(forwards, choice)


def add_inference_argument(parser) -> None:
    """``--inference``, for the commands whose players run networks."""
    parser.add_argument(
        "--inference", choices=INFERENCE_MODES, default=None,
        help="network runtime: auto (default: the fastest that agrees with Keras, measured "
        "per batch size), keras, onnx or openvino")


def apply_inference(mode: str | None) -> None:
    """Make ``mode`` the runtime of this process and of the workers it starts
    (through the environment, which worker processes inherit)."""
    if mode:
        os.environ[ENVIRONMENT] = mode
