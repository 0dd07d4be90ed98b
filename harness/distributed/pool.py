"""A fixed pool of Ray actors that survives its workers dying.

Why actors and not plain Ray tasks: a worker keeps what is costly to build
(players, a compiled network, parse settings) across many items. Why our own
replay instead of Ray's automatic retries: the driver must know which items a
dead worker took with it, replay exactly those on a fresh worker, and hand
each item's result to the caller exactly once, because the caller appends it
to a results file that resuming trusts.

Every item has a key (a game id, a shard number, a game index). A worker
that dies (killed, out of memory, its node lost) is replaced by a new actor
of the same class and its unfinished items go back to the front of the
queue; a result whose key was already yielded is dropped. An item that has
lost ``max_replays`` + 1 workers is given up (``lost``) instead of looping.
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


class WorkerPool:
    """``size`` actors of ``actor_class(*args)``, each running ``depth`` items at a time."""

    def __init__(self, ray: ModuleType, actor_class: type, args: tuple, size: int, *,
                 num_cpus: float = 1, depth: int = 1, max_replays: int = 3):
        self.ray = ray
        self._remote = ray.remote(num_cpus=num_cpus, max_restarts=0)(actor_class)
        self._args = args
        self.depth = max(1, depth)
        self.max_replays = max_replays
        self.actors = [self._start() for _ in range(max(1, size))]
        self.replaced = 0  # workers that died and were replaced
        self.replayed = 0  # items sent again after their worker died

    def _start(self):
        return self._remote.remote(*self._args)

    def _dead_errors(self) -> tuple[type[BaseException], ...]:
        exc = self.ray.exceptions
        return (exc.RayActorError, exc.WorkerCrashedError)

    def run(self, method: str, items: Iterable[tuple[Hashable, tuple]], *, ordered: bool = False,
            window: int | None = None,
            lost: Callable[[Hashable, str], Any] | None = None) -> Iterator[tuple[Hashable, Any]]:
        """Call ``actor.method(*args)`` for every ``(key, args)``; yield ``(key, result)``.

        Unordered: results come as they finish. ``ordered``: in the order of
        ``items``, with at most ``window`` items taken but not yet yielded
        (bounded memory). An exception raised by the method itself is not a
        dead worker: it is raised here. ``lost(key, message)`` supplies the
        result of an item given up; without it :class:`WorkerLost` is raised.
        """
        ray = self.ray
        source = iter(items)
        window = window or 4 * len(self.actors) * self.depth
        retry: deque = deque()  # (position, key, args, attempts) to send again first
        inflight: dict = {}  # ObjectRef -> (slot, actor, position, key, args, attempts)
        load = [0] * len(self.actors)
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
            for slot in range(len(self.actors)):
                while load[slot] < self.depth:
                    item = next_item()
                    if item is None:
                        return
                    position, key, args, attempts = item
                    actor = self.actors[slot]
                    ref = getattr(actor, method).remote(*args)
                    inflight[ref] = (slot, actor, position, key, args, attempts)
                    load[slot] += 1

        def give_up(key, attempts: int, exc: BaseException):
            message = f"{key}: lost {attempts} workers ({type(exc).__name__})"
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
            (ref,), _ = ray.wait(list(inflight), num_returns=1)
            slot, actor, position, key, args, attempts = inflight.pop(ref)
            load[slot] -= 1
            try:
                result = ray.get(ref)
            except self._dead_errors() as exc:
                if self.actors[slot] is actor:  # the first loss seen from this worker
                    self._replace(slot)
                if attempts >= self.max_replays:
                    result = give_up(key, attempts + 1, exc)
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
        old = self.actors[slot]
        self.actors[slot] = self._start()
        self.replaced += 1
        log.warning("a Ray worker died; started a replacement (%d so far)", self.replaced)
        with contextlib.suppress(Exception):  # already gone
            self.ray.kill(old, no_restart=True)

    def close(self, method: str | None = None, timeout: float = 30.0) -> None:
        """Ask every actor to ``method()`` (release engines), then end them all."""
        if method:
            refs = [getattr(a, method).remote() for a in self.actors]
            with contextlib.suppress(Exception):
                self.ray.wait(refs, num_returns=len(refs), timeout=timeout)
        for actor in self.actors:
            with contextlib.suppress(Exception):
                self.ray.kill(actor, no_restart=True)
        self.actors = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        if self.actors:
            self.close()
