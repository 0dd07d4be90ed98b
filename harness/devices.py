"""The Keras backend a process computes with, and the device under it.

Keras 3 runs the same model on TensorFlow, JAX or PyTorch, but fixes the
backend when Keras is first imported (``KERAS_BACKEND``). So the choice is
made here, before any stage imports Keras: ``harness --keras-backend``, a
config's ``keras_backend`` key, or the environment. Worker processes inherit
it through the environment.

TensorFlow stays the default: on the 2-core CPU it trained one 19x19 network
fastest (50-88 samples/s against JAX 24-30 and PyTorch 24-87, measured for
issue #40). A GPU changes the defaults that depend on the device, and only
those: ``precision = "auto"`` is bfloat16 on cards that compute in it
(compute capability 8.0 and later) and float16 with loss scaling on older
ones, where on a CPU it follows the CPU's instructions (:mod:`harness.cpu`).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass

from harness.config_io import ConfigError, setting
from harness.cpu import cpu_flags, cpu_name
from harness.cpu import native_precision as cpu_native_precision

BACKENDS = ("tensorflow", "jax", "torch")
BACKEND_ENV = "KERAS_BACKEND"
DEFAULT_BACKEND = "tensorflow"
# The first compute capability with bfloat16 arithmetic (NVIDIA Ampere).
BF16_CAPABILITY = (8, 0)
# Rows one forward pass should carry on a GPU. A GPU's forward of a small
# network costs about the same from 1 to several hundred rows (its cores idle
# below that), where a CPU's cost grows with every row; so on a GPU the
# search's batches and evaluation batches grow to this, and on a CPU the
# configured sizes stand.
GPU_FORWARD_ROWS = 1024


@dataclass(frozen=True)
class DeviceSettings:
    """The Keras backend of a run; empty keeps the process's (``--keras-backend``,
    ``KERAS_BACKEND``, else TensorFlow)."""

    # Not a subcommand flag: ``harness --keras-backend`` (before the
    # subcommand) sets it for every command, configs or not.
    keras_backend: str = setting(
        "", "Keras backend: tensorflow, jax or torch (empty: KERAS_BACKEND, else tensorflow)",
        cli=False)

    def __post_init__(self) -> None:
        if self.keras_backend:
            check_backend_name(self.keras_backend)
        getattr(super(), "__post_init__", lambda: None)()  # the next settings base, if any


def check_backend_name(name: str) -> None:
    """One-line :class:`ConfigError` for a name that is not a Keras backend."""
    if name not in BACKENDS:
        raise ConfigError(f"keras_backend {name!r}: choose from {', '.join(BACKENDS)}")


def backend_name() -> str:
    """The backend Keras uses (or will use when it loads) in this process."""
    keras = sys.modules.get("keras")
    if keras is not None and hasattr(keras, "backend"):
        return keras.backend.backend()
    return os.environ.get(BACKEND_ENV, "").strip() or DEFAULT_BACKEND


def use_backend(name: str) -> str:
    """Make ``name`` the Keras backend of this process and its workers; empty
    keeps the current one. Returns the backend in force. One-line
    :class:`ConfigError` when the backend's package is missing or Keras has
    already loaded on another backend (it cannot switch)."""
    if not name:
        return backend_name()
    check_backend_name(name)
    if importlib.util.find_spec(name) is None:
        raise ConfigError(f"keras backend {name}: the {name} package is not installed "
                          f"(pip install {name})")
    if "keras" in sys.modules and backend_name() != name:
        raise ConfigError(f"keras backend {name}: Keras already runs on {backend_name()} in "
                          f"this process; choose the backend first (harness --keras-backend "
                          f"{name} ..., or {BACKEND_ENV}={name})")
    os.environ[BACKEND_ENV] = name
    return name


@dataclass(frozen=True)
class Device:
    """What the backend computes on: its GPUs, or the CPU."""

    backend: str
    version: str
    gpus: tuple[str, ...] = ()
    capability: tuple[int, int] | None = None  # the first GPU's compute capability

    @property
    def is_gpu(self) -> bool:
        return bool(self.gpus)

    def describe(self) -> str:
        """One line for a table's header: backend and device."""
        if self.gpus:
            names = sorted(set(self.gpus))
            count = f"{len(self.gpus)} x " if len(self.gpus) > 1 else ""
            cc = f", compute {self.capability[0]}.{self.capability[1]}" if self.capability else ""
            return f"{self.backend} {self.version} on GPU: {count}{', '.join(names)}{cc}"
        return f"{self.backend} {self.version} on CPU: {cpu_name()}, {os.cpu_count()} cores"


def device() -> Device:
    """The device Keras's backend computes on (imports Keras and its backend)."""
    import keras

    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_physical_devices("GPU")
        details = [tf.config.experimental.get_device_details(g) for g in gpus]
        names = tuple(d.get("device_name", g.name) for d, g in zip(details, gpus, strict=True))
        capability = details[0].get("compute_capability") if details else None
        return Device(backend, tf.__version__, names, compute_capability(capability))
    if backend == "jax":
        import jax

        gpus = [d for d in jax.devices() if d.platform == "gpu"]
        capability = getattr(gpus[0], "compute_capability", None) if gpus else None
        return Device(backend, jax.__version__, tuple(d.device_kind for d in gpus),
                      compute_capability(capability))
    if backend == "torch":
        import torch

        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        names = tuple(torch.cuda.get_device_name(i) for i in range(count))
        capability = torch.cuda.get_device_capability(0) if count else None
        return Device(backend, torch.__version__, names, compute_capability(capability))
    return Device(backend, keras.__version__)


def forward_rows(dev: Device, configured: int) -> int:
    """The rows per forward pass for ``dev``: at least :data:`GPU_FORWARD_ROWS`
    on a GPU, ``configured`` on a CPU. Training batches are not scaled: their
    size changes what is learned (the noise of each step, the rate that
    suits it), not only how fast."""
    return max(configured, GPU_FORWARD_ROWS) if dev.is_gpu else configured


def compute_capability(value) -> tuple[int, int] | None:
    """A compute capability from ``(8, 0)`` or ``"8.0"``."""
    if value is None:
        return None
    if isinstance(value, str):
        major, _, minor = value.partition(".")
        return int(major), int(minor or 0)
    return int(value[0]), int(value[1])


def native_precision(dev: Device) -> str:
    """The Keras dtype policy that computes fastest on ``dev`` without losing
    accuracy: bfloat16 on GPUs that have it, float16 (Keras scales the loss)
    on older GPUs, the CPU's own on a CPU."""
    if dev.is_gpu:
        capable = dev.capability is not None and dev.capability >= BF16_CAPABILITY
        return "mixed_bfloat16" if capable else "mixed_float16"
    return cpu_native_precision(cpu_flags())


def resolve_precision(name: str) -> str:
    """A configured precision as a Keras dtype policy: ``auto`` becomes the
    device's native one, any other name stays as it is."""
    return native_precision(device()) if name == "auto" else name
