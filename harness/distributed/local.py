"""Workers as local processes, each with its own pipe.

Why not :class:`multiprocessing.pool.Pool`: leaving it early (an ingest that
reached ``--limit``) calls ``terminate()``, which can deadlock on the pool's
shared queue locks when a worker is mid-way through sending a large result,
and a worker that dies makes ``get()`` wait forever. Here every worker has a
pipe of its own, a finished or dead worker is seen through
:func:`multiprocessing.connection.wait` on its pipe and its process sentinel,
and ending the pool kills the processes, which cannot block.

One item per worker at a time (the pool's ``depth`` is 1): a worker never
receives while it is sending, so neither end of a pipe waits on the other.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import pickle
import signal
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from harness.distributed.pool import WorkerDied, WorkerPool


class WorkerStartError(RuntimeError):
    """A worker could not be built (its class raised); the message is one line."""


@dataclass(eq=False)
class _Worker:
    process: Any
    conn: Connection
    busy: Hashable | None = None  # the ticket it is working on
    tickets: itertools.count = field(default_factory=itertools.count)


def _serve(conn: Connection, worker_class: type, args: tuple) -> None:
    """A worker process: build the worker, then answer (method, args) until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    try:
        worker = worker_class(*args)
    except Exception as exc:
        conn.send(("start-error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("started", None))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        method, call_args = message
        try:
            reply = ("ok", getattr(worker, method)(*call_args))
        except Exception as exc:
            reply = ("error", _portable(exc))
        conn.send(reply)


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives the pipe, else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


class ProcessPool(WorkerPool):
    """``size`` local processes of ``worker_class(*args)``.

    ``start_method``: ``fork`` starts fast and shares the parent's imports;
    ``spawn`` gives a fresh interpreter, which TensorFlow and GTP engines need.
    """

    def __init__(self, worker_class: type, args: tuple, size: int, *,
                 start_method: str = "spawn", max_replays: int = 3):
        if start_method not in multiprocessing.get_all_start_methods():
            start_method = "spawn"
        self._context = multiprocessing.get_context(start_method)
        super().__init__(worker_class, args, size, depth=1, max_replays=max_replays)
        for worker in self.workers:
            self._started(worker)

    def _start(self) -> _Worker:
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(child, self.worker_class, self.args),
                                        daemon=True)
        process.start()
        child.close()
        return _Worker(process, parent)

    def _started(self, worker: _Worker) -> None:
        """Wait for ``worker`` to be built; a class that raises stops the pool."""
        try:
            status, detail = worker.conn.recv()
        except (EOFError, OSError):
            status, detail = "start-error", f"exit code {worker.process.exitcode}"
        if status != "started":
            self.close()
            raise WorkerStartError(f"a {self.worker_class.__name__} worker did not start: {detail}")

    def _replace(self, slot: int) -> None:
        super()._replace(slot)
        self._started(self.workers[slot])

    def _kill(self, worker: _Worker) -> None:
        with contextlib.suppress(Exception):
            worker.process.kill()
        worker.process.join(timeout=5)
        worker.conn.close()

    def _submit(self, worker: _Worker, method: str, args: tuple) -> Hashable:
        ticket = (id(worker), next(worker.tickets))
        worker.busy = ticket
        with contextlib.suppress(OSError):  # a dead worker: _wait reports it
            worker.conn.send((method, args))
        return ticket

    def _wait(self, tickets: list) -> tuple[Hashable, Any]:
        wanted = set(tickets)
        busy = [w for w in self.workers if w.busy in wanted]
        while True:
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy]))
            for worker in busy:
                if worker.conn in ready:
                    try:
                        status, result = worker.conn.recv()
                    except (EOFError, OSError):
                        return self._died(worker)
                    ticket, worker.busy = worker.busy, None
                    if status == "error":
                        raise result
                    return ticket, result
            for worker in busy:
                if worker.process.sentinel in ready and not worker.conn.poll():
                    return self._died(worker)

    def _died(self, worker: _Worker) -> tuple[Hashable, WorkerDied]:
        ticket, worker.busy = worker.busy, None
        worker.process.join(timeout=1)
        return ticket, WorkerDied(f"exit code {worker.process.exitcode}")

    def _call_all(self, method: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for worker in self.workers:
            worker.conn.send((method, ()))
        for worker in self.workers:
            if worker.conn.poll(max(0.0, deadline - time.monotonic())):
                worker.conn.recv()
