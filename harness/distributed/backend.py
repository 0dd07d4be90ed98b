"""The backend switch and the Ray session every Ray stage runs inside.

Why a session helper: a stage may run on its own (``harness tournament
--backend ray``: start Ray, work, shut it down) or inside a caller that
already started Ray (``harness suite``, a test fixture): then the stage joins
that session and leaves it running. Ray is imported lazily, so a machine
without it can use every stage on the local backend.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType

from harness.config_io import setting
from harness.devices import backend_name

BACKENDS = ("local", "ray")
RAY_MISSING = "the ray backend needs Ray: pip install .[ray]"


class BackendError(RuntimeError):
    """The chosen backend cannot run here; the message is one line."""


def check_backend(backend: str) -> None:
    """Raise ValueError (a one-line config error) for an unknown backend name."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


@dataclass(frozen=True)
class BackendSettings:
    """Where a stage's parallel work runs; every config that has any inherits it,
    so ``backend`` and ``ray_address`` are top-level keys everywhere and
    ``--backend``/``--ray-address`` mean the same in every command."""

    backend: str = setting("local", "where the parallel work runs: local processes or Ray",
                           choices=BACKENDS)
    ray_address: str = setting("", "join this Ray cluster (e.g. HEAD:6379 or auto); without it "
                               "--backend ray starts a local Ray instance", metavar="ADDR")

    def __post_init__(self) -> None:
        check_backend(self.backend)
        getattr(super(), "__post_init__", lambda: None)()  # the next settings base, if any


def import_ray() -> ModuleType:
    """``ray``, or :class:`BackendError` telling how to install it."""
    try:
        import ray
    except ImportError:
        raise BackendError(RAY_MISSING) from None
    return ray


@contextlib.contextmanager
def ray_session(address: str = "", cpus: int = 0) -> Iterator[ModuleType]:
    """Yield ``ray`` with a session running.

    ``address`` empty: start a local Ray instance with ``cpus`` CPUs (0: the
    machine's); otherwise join the cluster there (``auto``, ``HOST:6379`` or
    ``ray://HOST:10001``). A session that was already running is used as it
    is and left running.
    """
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    options: dict = {"include_dashboard": False, "log_to_driver": False,
                     "logging_level": logging.WARNING, "configure_logging": True}
    # Workers started by a local instance inherit this environment: keep
    # TensorFlow's start-up chatter out of their logs as the CLI does.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        if address:
            ray.init(address=address, **options)
        else:
            ray.init(num_cpus=cpus or None, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise BackendError(f"cannot start {where}: {first}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def cluster_cpus(ray: ModuleType) -> int:
    """CPUs the session has (the whole cluster when joined to one)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def limit_compute_threads(cpus: int) -> None:
    """Size the Keras backend's thread pools to a worker's CPUs, before it starts.

    Several Ray workers share a machine; each TensorFlow (or XLA, or PyTorch)
    would otherwise start one thread per core and they would fight over the
    cores.
    """
    cpus = max(1, int(cpus))
    for name in ("OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"):
        os.environ[name] = str(cpus)
    os.environ["TF_NUM_INTEROP_THREADS"] = "1"
    flags = os.environ.get("XLA_FLAGS", "")
    if "intra_op_parallelism_threads" not in flags:  # JAX reads it when it starts
        os.environ["XLA_FLAGS"] = (f"{flags} --xla_cpu_multi_thread_eigen=false "
                                   f"intra_op_parallelism_threads={cpus}").strip()
    backend = backend_name()
    if backend == "torch":
        with contextlib.suppress(ImportError, RuntimeError):
            import torch

            torch.set_num_threads(cpus)
        return
    if backend != "tensorflow":
        return
    with contextlib.suppress(ImportError, RuntimeError):
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(cpus)
        tf.config.threading.set_inter_op_parallelism_threads(1)
