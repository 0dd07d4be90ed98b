"""The backend switch: flags and config keys on every parallel stage, one clear
line when Ray is missing, and self-play units whose games do not depend on
which worker plays them. None of these tests needs Ray."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.arena.datagen import DatagenConfig
from harness.arena.tournament import TournamentConfig
from harness.cli import build_parser, main
from harness.config_io import ConfigError, from_mapping
from harness.distributed import RAY_MISSING
from harness.rl.config import RLConfig
from harness.rl.selfplay import Unit, selfplay_units
from harness.train.sources import derive_seed

QUICK = Path(__file__).resolve().parents[1] / "configs" / "quick.toml"


@pytest.fixture
def no_ray(monkeypatch):
    """``import ray`` fails as on a machine without the extra."""
    monkeypatch.setitem(sys.modules, "ray", None)


def test_every_parallel_stage_takes_backend_and_ray_address_flags():
    parser = build_parser()
    commands = {
        "tournament": ["random", "uct:10"],
        "datagen": ["uct:10"],
        "ingest": ["x.sgf", "-o", "x.h5"],
        "rl": [],
        "suite": [str(QUICK)],
    }
    for command, rest in commands.items():
        args = parser.parse_args([command, *rest, "--backend", "ray", "--ray-address", "h:6379"])
        assert (args.backend, args.ray_address) == ("ray", "h:6379"), command


def test_configs_take_the_backend_keys_and_refuse_unknown_backends():
    assert TournamentConfig(players=["random", "uct:5"], backend="ray").backend == "ray"
    assert DatagenConfig(backend="ray", ray_address="auto").ray_address == "auto"
    rl = from_mapping(RLConfig, {"run": "r", "backend": "ray", "ray_address": "auto",
                              "selfplay": {"workers": 3, "unit_games": 4}}, "test")
    assert (rl.backend, rl.ray_address, rl.selfplay.workers) == ("ray", "auto", 3)
    with pytest.raises(ConfigError, match="backend must be one of"):
        from_mapping(TournamentConfig, {"players": ["random", "uct:5"], "backend": "dask"}, "t")
    with pytest.raises(ConfigError, match="backend must be one of"):
        from_mapping(RLConfig, {"run": "r", "backend": "spark"}, "test")


def test_the_suite_config_passes_its_backend_to_its_stages(tmp_path):
    from harness.suite.config import load_suite_config

    text = QUICK.read_text()
    path = tmp_path / "s.toml"
    path.write_text('backend = "ray"\nray_address = "auto"\n' + text)
    config = load_suite_config(path)
    assert (config.backend, config.ray_address) == ("ray", "auto")
    path.write_text('backend = "mpi"\n' + text)
    with pytest.raises(ConfigError, match="backend must be one of"):
        load_suite_config(path)


def test_without_ray_the_ray_backend_stops_with_one_line(no_ray, tmp_path, capsys):
    code = main(["tournament", "random", "uct:5", "--backend", "ray", "--board-size", "5",
                 "-o", str(tmp_path / "t"), "--no-progress"])
    reason, summary = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and reason == f"harness tournament: {RAY_MISSING}"
    assert "pip install .[ray]" in reason
    assert summary.startswith("harness tournament: stopped with exit code 2")  # the closing line

    code = main(["rl", "--run", "r", "--runs-dir", str(tmp_path), "--backend", "ray"])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[0] == f"harness rl: {RAY_MISSING}"
    assert not (tmp_path / "r").exists()  # stopped before generation 0 was written

    source = tmp_path / "g.sgf"
    source.write_text("(;GM[1]SZ[9];B[aa];W[bb])")
    code = main(["ingest", str(source), "-o", str(tmp_path / "d.h5"), "--board-size", "9",
                 "--backend", "ray", "--quiet"])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines()[0] == f"harness ingest: {RAY_MISSING}"


def rl(backend: str = "local", **selfplay):
    return from_mapping(RLConfig, {"run": "r", "seed": 7, "backend": backend,
                                "selfplay": {"games": 10, "parallel": 4, **selfplay}}, "test")


def test_locally_a_generation_is_one_unit_seeded_as_before():
    assert selfplay_units(rl(), 3, 0) == [Unit(0, 10, derive_seed(7, 3, 0))]
    # Resumed after 4 committed games: the rest, seeded by the first missing game.
    assert selfplay_units(rl(), 3, 4) == [Unit(4, 6, derive_seed(7, 3, 4))]


def test_units_cover_every_missing_game_once_with_seeds_of_their_own():
    for config in (rl("ray"), rl("local", unit_games=4), rl("ray", unit_games=4)):
        units = selfplay_units(config, 2, 0)
        assert [(u.first, u.count) for u in units] == [(0, 4), (4, 4), (8, 2)]
        assert [u.seed for u in units] == [derive_seed(7, 2, u.first) for u in units]
        assert len({u.seed for u in units}) == 3
    # A resume in the middle of a unit finishes that unit, then the boundaries hold.
    units = selfplay_units(rl("ray"), 2, 5)
    assert [(u.first, u.count) for u in units] == [(5, 3), (8, 2)]
    assert selfplay_units(rl("ray"), 2, 10) == []
