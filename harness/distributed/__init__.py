"""The parallel executor: a stage's work items on local processes or Ray actors.

Tournament and datagen games, ingest shards and RL self-play fan work out to
workers. Each stage defines a public worker class (``GameWorker``,
``IngestWorker``, ``SelfPlayWorker``) and runs its items through
:func:`~harness.distributed.executor.worker_pool`; this package imports no
stage.

- :mod:`~harness.distributed.executor`: ``worker_pool(worker_class, args,
  size, backend=...)``, the one entry point;
- :mod:`~harness.distributed.pool`: the scheduler every pool shares (replace
  a dead worker, replay its items, never yield one twice, ordered or not) and
  the Ray actor pool;
- :mod:`~harness.distributed.local`: the local process pool (a pipe per
  worker; ending it early never blocks);
- :mod:`~harness.distributed.backend`: the backend names, the command-line
  flags, and the Ray session (a local instance, or joining a cluster); Ray is
  imported only here and only when chosen.

The driver (the process that ran ``harness ...``) stays the only writer of
results files, journals, buffers and checkpoints, so resuming works the same
on both backends.
"""

from harness.distributed.backend import (
    BACKENDS,
    RAY_MISSING,
    BackendError,
    BackendSettings,
    check_backend,
)

__all__ = ["BACKENDS", "RAY_MISSING", "BackendError", "BackendSettings", "check_backend"]
