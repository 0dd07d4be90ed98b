"""Shared fixtures: GNU Go, the independent referee of the rules tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from harness.players.gtp_client import GTPClient, find_gnugo, gnugo_command

# Players would export every test model to ONNX and time the runtimes (seconds
# each); tests/test_runtime.py covers that path by asking for it explicitly.
os.environ.setdefault("HARNESS_INFERENCE", "keras")

@pytest.fixture(scope="session")
def dataset_5x5(tmp_path_factory):
    """40 random 5x5 games ingested, 4 of them the validation split."""
    from harness.data.ingest import IngestConfig, ingest
    from harness.data.synthetic import write_random_sgfs

    folder = tmp_path_factory.mktemp("games5x5")
    source = write_random_sgfs(folder / "games.sgf", 40, size=5, moves=12, seed=2)
    out = folder / "games.h5"
    ingest(IngestConfig(sources=[str(source)], output=out, board_size=5, val_games=4, seed=1,
                        workers=1, progress=False))
    return out


GNUGO_MISSING = (
    "GNU Go not installed (looked for /usr/games/gnugo and 'gnugo' on PATH; "
    "'make gnugo' installs it)"
)


@pytest.fixture(scope="session")
def gnugo_path() -> str:
    """Path of the GNU Go binary; skips the test when it is absent."""
    path = find_gnugo()
    if path is None:
        pytest.skip(GNUGO_MISSING)
    return path


@pytest.fixture
def gnugo_factory(gnugo_path) -> Iterator[Callable[..., GTPClient]]:
    """Start GNU Go engines (``gnugo_command`` keywords), all closed after the test."""
    started: list[GTPClient] = []

    def start(**options) -> GTPClient:
        options.setdefault("level", 1)
        options.setdefault("seed", 1)
        client = GTPClient(gnugo_command(**options), timeout=60.0, name="gnugo")
        started.append(client)
        return client

    yield start
    for client in started:
        client.close()


@pytest.fixture
def gnugo(gnugo_factory) -> GTPClient:
    """A running GNU Go 3.8 in GTP mode: Chinese rules, simple ko, suicide forbidden."""
    return gnugo_factory()


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray cluster with two worker CPUs, shared by the Ray tests of one
    pytest process; skips when Ray is not installed (``pip install .[ray]``)."""
    ray = pytest.importorskip("ray", reason="Ray not installed (pip install .[ray])")
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def pytest_terminal_summary(terminalreporter) -> None:
    """One line per Keras backend from tests/test_backends.py: the backend matrix."""
    counts: dict[str, dict[str, int]] = {}
    for outcome in ("passed", "failed", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            nodeid = getattr(report, "nodeid", "")
            if "test_backends.py::test_a_family" not in nodeid or report.when != "call":
                continue
            backend = nodeid.rsplit("[", 1)[-1].split("-", 1)[0]
            row = counts.setdefault(backend, {"passed": 0, "failed": 0, "skipped": 0})
            row[outcome] += 1
    for backend, row in sorted(counts.items()):
        terminalreporter.write_line(
            f"keras backend {backend}: {row['passed']} families passed, {row['failed']} failed, "
            f"{row['skipped']} skipped")
