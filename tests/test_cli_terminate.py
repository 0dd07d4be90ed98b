"""SIGTERM stops a command the way Ctrl-C does: it unwinds, so its worker
processes die with it instead of playing on as orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(),
                                reason="reads child processes from Linux /proc")


def workers_of(pid: int) -> list[int]:
    """The multiprocessing workers ``pid`` has started."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    found = []
    for child in (int(c) for c in children.read_text().split()):
        cmdline = Path(f"/proc/{child}/cmdline")
        if cmdline.exists() and b"spawn_main" in cmdline.read_bytes():
            found.append(child)
    return found


def running(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().split()[2] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_a_terminated_tournament_takes_its_workers_with_it(tmp_path):
    driver = subprocess.Popen(
        [sys.executable, "-m", "harness", "tournament", "uct:20000", "uct:20001",
         "--games-per-pair", "20", "--parallel", "2", "--no-progress", "--out", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        workers: list[int] = []
        deadline = time.monotonic() + 120
        while len(workers) < 2 and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.2)
            workers = workers_of(driver.pid)
        assert len(workers) == 2, "the tournament did not start two workers"
        time.sleep(2)  # into their first games
        driver.send_signal(signal.SIGTERM)
        _, err = driver.communicate(timeout=60)
        assert driver.returncode == 143 and "terminated" in err
        deadline = time.monotonic() + 15
        while any(running(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(running(w) for w in workers)
    finally:
        if driver.poll() is None:
            driver.kill()
        for worker in workers:
            if running(worker):
                os.kill(worker, signal.SIGKILL)
