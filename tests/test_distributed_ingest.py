"""``harness ingest --backend ray``: the shards go to Ray workers and come back
in input order, so the dataset is the local one, row for row."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import h5py
import pytest
from test_ingest import assert_same_content, run_ingest

from harness.data.synthetic import random_sgf, write_random_sgfs
from harness.devdata import dev_sgf_dir

pytestmark = pytest.mark.usefixtures("ray_cluster")


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Path:
    """Small SGF files (parsed by the workers), a compressed multi-game file
    (split by the driver, replayed by the workers), a duplicate game, and a
    slice of the dev data when it is there."""
    folder = tmp_path_factory.mktemp("sources")
    for n in range(12):
        (folder / f"single-{n:02d}.sgf").write_text(random_sgf(100 + n, moves=30))
    many = folder / "many.sgf"
    write_random_sgfs(many, 70, size=9, moves=30, seed=0)
    with open(many, "rb") as f, gzip.open(folder / "many.sgf.gz", "wb") as g:
        shutil.copyfileobj(f, g)
    many.unlink()
    (folder / "copy.sgf").write_text(random_sgf(5, moves=30))  # a duplicate of game 5
    return folder


def test_ray_ingest_gives_the_same_rows_as_local_processes(sources, tmp_path):
    options = {"board_size": 9, "val_games": 8, "test_games": 0.1, "cazenave_val": True,
               "commit_games": 20}
    local = run_ingest([sources], tmp_path / "local.h5", workers=2, **options)
    ray = run_ingest([sources], tmp_path / "ray.h5", workers=2, backend="ray", **options)

    assert_same_content(tmp_path / "local.h5", tmp_path / "ray.h5")
    assert ray["totals"] == local["totals"]
    assert local["totals"]["duplicates"] == 1 and local["games"] == 82


def test_sources_given_relative_and_through_a_symlink_keep_their_names(
        sources, tmp_path, monkeypatch):
    # Workers open absolute paths, but games/source must read as given, or a
    # dataset would depend on the backend that built it.
    (tmp_path / "linked").symlink_to(sources, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    local = run_ingest(["linked"], tmp_path / "local.h5", workers=2, board_size=9)
    ray = run_ingest(["linked"], tmp_path / "ray.h5", workers=2, backend="ray", board_size=9)

    assert_same_content(tmp_path / "local.h5", tmp_path / "ray.h5")
    assert ray["totals"] == local["totals"] and local["games"] == 82
    with h5py.File(tmp_path / "ray.h5", "r") as f:
        names = {s.decode() for s in f["games/source"][:]}
    assert "linked/single-00.sgf" in names


@pytest.mark.skipif(not dev_sgf_dir().is_dir(), reason=f"{dev_sgf_dir()} absent (dev data)")
def test_ray_ingest_of_real_games_matches_local(tmp_path):
    source = dev_sgf_dir() / "Dancer"
    local = run_ingest([source], tmp_path / "local.h5", workers=2)
    ray = run_ingest([source], tmp_path / "ray.h5", workers=0, backend="ray")

    assert_same_content(tmp_path / "local.h5", tmp_path / "ray.h5")
    assert ray["totals"] == local["totals"] and local["games"] > 100
