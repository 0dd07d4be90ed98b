"""One way to run a stage's work items in parallel: local processes or Ray.

A stage gives a public worker class (built once per worker, keeping what is
costly to build) and calls :meth:`WorkerPool.run` on the pool this yields; the
same items, keys, ordering and dead-worker replay hold on both backends.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from harness.distributed.backend import check_backend, cluster_cpus, ray_session
from harness.distributed.pool import RayPool, WorkerPool


@contextlib.contextmanager
def worker_pool(worker_class: type, args: tuple, size: int, *, backend: str = "local",
                ray_address: str = "", start_method: str = "spawn", at_most: int = 0,
                max_replays: int = 3, gpus_each: float = 0) -> Iterator[WorkerPool]:
    """``size`` workers of ``worker_class(*args)`` (0: one per CPU, of the cluster on
    Ray), and no more than ``at_most`` when it is set (the items there are to run).

    ``start_method`` is for local processes: ``fork`` when the workers need
    nothing the parent's threads could hold, ``spawn`` for TensorFlow.
    ``gpus_each``: the GPUs each Ray actor reserves (local workers share the
    parent's devices).
    """
    check_backend(backend)
    if backend == "ray":
        with ray_session(ray_address, cpus=size) as ray, RayPool(
            ray, worker_class, args, _capped(size or cluster_cpus(ray), at_most),
            num_gpus=gpus_each, max_replays=max_replays,
        ) as pool:
            yield pool
        return
    from harness.distributed.local import ProcessPool

    with ProcessPool(worker_class, args, _capped(size or os.cpu_count() or 1, at_most),
                     start_method=start_method, max_replays=max_replays) as pool:
        yield pool


def _capped(size: int, at_most: int) -> int:
    return max(1, min(size, at_most) if at_most > 0 else size)
