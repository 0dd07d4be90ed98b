"""A fixed pool of workers that survives its workers dying: the one scheduler
behind every parallel stage, on local processes or on Ray actors.

Why long-lived workers and not plain tasks: a worker keeps what is costly to
build (players, a compiled network, parse settings) across many items. Why our
own replay instead of a library's automatic retries: the driver must know which
items a dead worker took with it, replay exactly those on a fresh worker, and
hand each item's result to the caller exactly once, because the caller appends
it to a results file that resuming trusts.

Every item has a key (a game id, a shard number, a game index). A worker that
dies (killed, out of memory, its node lost) is replaced by a new one of the
same class and its unfinished items go back to the front of the queue; a
result whose key was already yielded is dropped. An item that has lost
``max_replays`` + 1 workers is given up (``lost``) instead of looping.

:class:`WorkerPool` holds that bookkeeping; a subclass only says how to start,
stop and talk to one worker (:class:`RayPool` here,
:class:`harness.distributed.local.ProcessPool` for local processes).
"""

from __future__ import annotations

import contextlib
import logging
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)


class WorkerLost(RuntimeError):
    """An item whose workers kept dying; the message is one line."""


class WorkerDied(Exception):
    """Reported by :meth:`WorkerPool._wait` for an item whose worker is gone."""


class WorkerPool:
    """``size`` workers of ``worker_class(*args)``, each running ``depth`` items at a time."""

    def __init__(self, worker_class: type, args: tuple, size: int, *, depth: int = 1,
                 max_replays: int = 3):
        self.worker_class = worker_class
        self.args = args
        self.depth = max(1, depth)
        self.max_replays = max_replays
        self.workers: list = []
        self.replaced = 0  # workers that died and were replaced
        self.replayed = 0  # items sent again after their worker died
        self.workers = [self._start() for _ in range(max(1, size))]

    # --- what a subclass provides -----------------------------------------------------------

    def _start(self) -> Any:
        """A new worker."""
        raise NotImplementedError

    def _kill(self, worker: Any) -> None:
        """End ``worker`` now; it may already be gone."""
        raise NotImplementedError

    def _submit(self, worker: Any, method: str, args: tuple) -> Hashable:
        """Start ``worker.method(*args)``; a ticket naming this call."""
        raise NotImplementedError

    def _wait(self, tickets: list) -> tuple[Hashable, Any]:
        """One finished call among ``tickets``: (ticket, result), the result being a
        :class:`WorkerDied` when its worker died. An exception raised by the
        method itself is raised here."""
        raise NotImplementedError

    def _call_all(self, method: str, timeout: float) -> None:
        """``worker.method()`` on every worker, waiting at most ``timeout`` s."""
        raise NotImplementedError

    # --- the scheduler ----------------------------------------------------------------------

    def run(self, method: str, items: Iterable[tuple[Hashable, tuple]], *, ordered: bool = False,
            window: int | None = None,
            lost: Callable[[Hashable, str], Any] | None = None) -> Iterator[tuple[Hashable, Any]]:
        """Call ``worker.method(*args)`` for every ``(key, args)``; yield ``(key, result)``.

        Unordered: results come as they finish. ``ordered``: in the order of
        ``items``, with at most ``window`` items taken but not yet yielded
        (bounded memory). An exception raised by the method itself is not a
        dead worker: it is raised here. ``lost(key, message)`` supplies the
        result of an item given up; without it :class:`WorkerLost` is raised.
        """
        source = iter(items)
        window = window or 4 * len(self.workers) * self.depth
        retry: deque = deque()  # (position, key, args, attempts) to send again first
        inflight: dict = {}  # ticket -> (slot, worker, position, key, args, attempts)
        load = [0] * len(self.workers)
        done: set = set()
        ready_out: dict[int, tuple] = {}  # ordered: position -> (key, result)
        taken = yielded = 0
        exhausted = False

        def next_item():
            nonlocal taken, exhausted
            if retry:
                return retry.popleft()
            if exhausted or (ordered and taken - yielded >= window):
                return None
            try:
                key, args = next(source)
            except StopIteration:
                exhausted = True
                return None
            taken += 1
            return taken - 1, key, args, 0

        def fill() -> None:
            for slot in range(len(self.workers)):
                while load[slot] < self.depth:
                    item = next_item()
                    if item is None:
                        return
                    position, key, args, attempts = item
                    worker = self.workers[slot]
                    ticket = self._submit(worker, method, args)
                    inflight[ticket] = (slot, worker, position, key, args, attempts)
                    load[slot] += 1

        def give_up(key, attempts: int, exc: BaseException):
            message = f"{key}: lost {attempts} workers ({exc})"
            if lost is None:
                raise WorkerLost(message)
            return lost(key, message)

        fill()
        while inflight or ready_out:
            if ordered and yielded in ready_out:
                key, result = ready_out.pop(yielded)
                yielded += 1
                fill()
                yield key, result
                continue
            if not inflight:  # cannot happen: the next position is always in flight
                raise RuntimeError("worker pool lost track of an item")
            ticket, result = self._wait(list(inflight))
            slot, worker, position, key, args, attempts = inflight.pop(ticket)
            load[slot] -= 1
            if isinstance(result, WorkerDied):
                if self.workers[slot] is worker:  # the first loss seen from this worker
                    self._replace(slot)
                if attempts >= self.max_replays:
                    result = give_up(key, attempts + 1, result)
                else:
                    log.warning("worker died; replaying %s", key)
                    self.replayed += 1
                    retry.append((position, key, args, attempts + 1))
                    fill()
                    continue
            if key in done:  # a replayed item whose first run also finished
                fill()
                continue
            done.add(key)
            if ordered:
                ready_out[position] = (key, result)
                fill()
                continue
            yielded += 1
            fill()  # keep the workers busy while the caller writes the result
            yield key, result

    def _replace(self, slot: int) -> None:
        old = self.workers[slot]
        self.workers[slot] = self._start()
        self.replaced += 1
        log.warning("a worker died; started a replacement (%d so far)", self.replaced)
        with contextlib.suppress(Exception):  # already gone
            self._kill(old)

    def close(self, method: str | None = None, timeout: float = 30.0) -> None:
        """Ask every worker to ``method()`` (release engines), then end them all."""
        if method and self.workers:
            with contextlib.suppress(Exception):
                self._call_all(method, timeout)
        for worker in self.workers:
            with contextlib.suppress(Exception):
                self._kill(worker)
        self.workers = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        if self.workers:
            self.close()


class RayPool(WorkerPool):
    """Workers as Ray actors (``num_cpus`` and ``num_gpus`` each) of a running Ray
    session; Ray gives an actor that reserves a GPU its own ``CUDA_VISIBLE_DEVICES``."""

    def __init__(self, ray: ModuleType, worker_class: type, args: tuple, size: int, *,
                 num_cpus: float = 1, num_gpus: float = 0, depth: int = 1,
                 max_replays: int = 3):
        self.ray = ray
        self._remote = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus,
                                  max_restarts=0)(worker_class)
        super().__init__(worker_class, args, size, depth=depth, max_replays=max_replays)

    @property
    def actors(self) -> list:
        return self.workers

    def _start(self):
        return self._remote.remote(*self.args)

    def _kill(self, worker) -> None:
        self.ray.kill(worker, no_restart=True)

    def _submit(self, worker, method: str, args: tuple):
        return getattr(worker, method).remote(*args)

    def _wait(self, tickets: list):
        exc = self.ray.exceptions
        (ref,), _ = self.ray.wait(tickets, num_returns=1)
        try:
            return ref, self.ray.get(ref)
        except (exc.RayActorError, exc.WorkerCrashedError) as error:
            return ref, WorkerDied(type(error).__name__)

    def _call_all(self, method: str, timeout: float) -> None:
        refs = [getattr(a, method).remote() for a in self.workers]
        self.ray.wait(refs, num_returns=len(refs), timeout=timeout)
