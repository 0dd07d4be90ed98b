"""Ingest shards as work for a pool of Ray actors, results in input order.

The parent of an ingest decides kept / duplicate / rejected in input order,
so the workers' outcomes must come back in the order of the tasks; the
pool's ordered mode does that with a bounded number of shards in flight, so
the dataset is the same, row for row, as on the local backend. Small SGF
files are read by the workers (the paths must be visible to every node: a
shared filesystem); archives are split by the driver and sent as records.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from harness.distributed.backend import cluster_cpus, ray_session
from harness.distributed.pool import WorkerPool

if TYPE_CHECKING:
    from harness.data.rows import Outcome


class ShardWorker:
    """A Ray actor: replays ingest tasks with fixed convert settings."""

    def __init__(self, settings, max_member_bytes: int):
        from harness.data.ingest import _init_worker

        _init_worker(settings, max_member_bytes)

    def run(self, task):
        from harness.data.ingest import _run_task

        return _run_task(task)


def ray_outcomes(tasks: Iterator, settings, max_member_bytes: int, workers: int,
                 address: str = "") -> Iterator[tuple[str, object]]:
    """(source, outcome) in input order, like the local ``_outcomes``.

    ``workers`` (0: all CPUs) sizes a local Ray instance and caps the pool.
    """
    def absolute(task):
        """The task with paths every node can open (a shared filesystem), and
        the names as given: outcomes must name sources the way the local
        backend does, even when the given path is relative or a symlink."""
        if not task.files:
            return task, {}
        opened = tuple(os.path.abspath(f) for f in task.files)
        names = dict(zip(opened, map(str, task.files), strict=True))
        return dataclasses.replace(task, files=opened), names

    with ray_session(address, cpus=workers) as ray:
        size = workers or cluster_cpus(ray)
        with WorkerPool(ray, ShardWorker, (settings, max_member_bytes), size, depth=2) as pool:
            given: dict[int, tuple[str, dict]] = {}

            def keyed():
                for n, task in enumerate(tasks):
                    sent, names = absolute(task)
                    given[n] = (task.top, names)
                    yield n, (sent,)

            for n, outcomes in pool.run("run", keyed(), ordered=True, window=4 * size):
                top, names = given.pop(n)
                for outcome in outcomes:
                    yield top, renamed(outcome, names)


def renamed(outcome: Outcome, names: dict[str, str]) -> Outcome:
    """``outcome`` with its source under the name the user gave for the file."""
    label = outcome.source
    for opened, name in names.items():
        if label == opened or label.startswith(opened + "!"):
            source = name + label[len(opened):]
            info = outcome.info and dataclasses.replace(outcome.info, source=source)
            return dataclasses.replace(outcome, source=source, info=info)
    return outcome
