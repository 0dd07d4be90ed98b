"""The local process pool: results in order, dead workers replaced, early exits never hang."""

from __future__ import annotations

import os
import threading
import time

import pytest

from harness.distributed.executor import worker_pool
from harness.distributed.local import ProcessPool, WorkerStartError
from harness.distributed.pool import WorkerLost


class Squarer:
    """Squares numbers; dies on the numbers in ``fatal`` the first ``times`` tries."""

    def __init__(self, marker_dir: str = "", fatal: tuple = (), times: int = 1):
        self.marker_dir, self.fatal, self.times = marker_dir, fatal, times

    def square(self, n: int) -> int:
        if n in self.fatal:
            marker = os.path.join(self.marker_dir, f"{n}")
            tries = _bump(marker)
            if tries <= self.times:
                os._exit(3)  # a crash: no exception, no reply
        if n == -1:
            raise ValueError("negative one")
        time.sleep(0.002 * (n % 3))  # finish out of order
        return n * n

    def big(self, n: int) -> bytes:
        return bytes(4 << 20)  # larger than a pipe's buffer


def _bump(path: str) -> int:
    with open(path, "a") as f:
        f.write("x")
    return os.path.getsize(path)


class Broken:
    def __init__(self):
        raise OSError("no engine here")


def pool(*args, **options):
    return ProcessPool(Squarer, args, 2, start_method="fork", **options)


def test_ordered_results_come_in_input_order():
    with pool() as p:
        got = list(p.run("square", ((n, (n,)) for n in range(40)), ordered=True, window=5))
    assert got == [(n, n * n) for n in range(40)]


def test_a_worker_that_dies_is_replaced_and_its_item_replayed_once(tmp_path):
    with pool(str(tmp_path), (7, 23)) as p:
        got = dict(p.run("square", ((n, (n,)) for n in range(30))))
        assert p.replaced == 2 and p.replayed == 2
    assert got == {n: n * n for n in range(30)}


def test_an_item_that_keeps_killing_workers_is_given_up_with_a_reason(tmp_path):
    with pool(str(tmp_path), (5,), 99, max_replays=2) as p:
        got = dict(p.run("square", ((n, (n,)) for n in range(8)),
                         lost=lambda key, message: message))
    assert got[5].startswith("5: lost 3 workers (exit code 3)")
    assert all(got[n] == n * n for n in range(8) if n != 5)
    again = tmp_path / "again"
    again.mkdir()
    with pool(str(again), (5,), 99, max_replays=0) as p, pytest.raises(WorkerLost):
        list(p.run("square", ((n, (n,)) for n in range(8))))


def test_an_exception_in_the_method_is_raised_in_the_driver():
    with pool() as p, pytest.raises(ValueError, match="negative one"):
        list(p.run("square", ((n, (n,)) for n in (1, 2, -1, 4))))


def test_leaving_early_while_workers_send_large_results_does_not_hang():
    def leave_early():
        for _ in range(5):
            with pool() as p:
                results = p.run("big", ((n, (n,)) for n in range(50)), ordered=True)
                next(results)
                results.close()

    runner = threading.Thread(target=leave_early, daemon=True)
    runner.start()
    runner.join(timeout=120)  # liveness, not speed: a deadlock never finishes
    assert not runner.is_alive()


def test_a_worker_class_that_cannot_start_stops_the_pool_with_one_line():
    with pytest.raises(WorkerStartError, match="Broken worker did not start: OSError: no engine"):
        ProcessPool(Broken, (), 2, start_method="fork")


def test_the_executor_gives_the_same_answers_on_local_processes():
    with worker_pool(Squarer, (), 2, start_method="fork") as p:
        assert sorted(p.run("square", ((n, (n,)) for n in range(6)))) == [
            (n, n * n) for n in range(6)
        ]
