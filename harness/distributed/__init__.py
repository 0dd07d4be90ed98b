"""Scale-out: the parallel stages on a Ray cluster instead of local processes.

Tournament and datagen games, ingest shards and RL self-play fan work out to
workers. With ``backend = "local"`` (the default) they use the stage's own
worker processes and nothing here is imported. With ``backend = "ray"`` they
hand their work to this package:

- :mod:`~harness.distributed.backend`: the backend names, the command-line
  flags, and the Ray session (a local instance, or joining a cluster); Ray is
  imported only here and only when chosen;
- :mod:`~harness.distributed.pool`: a pool of Ray actors that replaces a dead
  worker, replays what it was doing and never yields an item twice;
- :mod:`~harness.distributed.games`: tournament and datagen games;
- :mod:`~harness.distributed.shards`: ingest shards, in input order;
- :mod:`~harness.distributed.selfplay`: RL self-play actors.

The driver (the process that ran ``harness ...``) stays the only writer of
results files, journals, buffers and checkpoints, so resuming works the same
on both backends.
"""

from harness.distributed.backend import BACKENDS, RAY_MISSING, BackendError, check_backend

__all__ = ["BACKENDS", "RAY_MISSING", "BackendError", "check_backend"]
