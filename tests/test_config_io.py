"""Configs from TOML: wrong keys and wrong types stop with one line naming them."""

import argparse
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.config_io import (
    ConfigError,
    add_config_flags,
    from_mapping,
    given_values,
    load_config,
    read_saved_config,
    read_toml,
    save_config,
    setting,
)


@dataclass
class Example:
    players: list[str]
    komi: float = 7.0
    parallel: int = 1
    anchor: str | None = None
    retry: bool = False
    weights: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Search:
    playouts: int = 8


@dataclass(frozen=True)
class Run:
    name: str = "r"
    search: Search = field(default_factory=Search)


def test_values_are_coerced_to_the_field_types():
    c = from_mapping(Example, {"players": ["a", "b"], "komi": 6, "weights": {"value": 1}}, "x.toml")
    assert c.komi == 6.0 and isinstance(c.komi, float)
    assert c.weights == {"value": 1.0}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"players": ["a"], "komy": 7.5}, "x.toml: unknown key 'komy'"),
        ({"players": ["a"], "parallel": "2"}, "x.toml: parallel must be int, got '2'"),
        ({"players": ["a"], "retry": 1}, "x.toml: retry must be true or false, got 1"),
        ({"players": "a"}, "x.toml: players must be a list, got 'a'"),
        ({"players": ["a"], "anchor": 3}, "x.toml: anchor must be str, got 3"),
        # A field whose type is a dataclass is a table; its errors name the table.
        ({"search": {"playout": 3}}, "x.toml [search]: unknown key 'playout'"),
        ({"search": {"playouts": "3"}}, "x.toml [search]: playouts must be int"),
        ({"search": 3}, "x.toml: [search] must be a table"),
    ],
)
def test_bad_values_name_the_file_and_the_key(values, message):
    cls = Run if "search" in values else Example
    with pytest.raises(ConfigError) as err:
        from_mapping(cls, values, "x.toml")
    assert str(err.value).startswith(message)


def test_unreadable_toml_is_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("players = [\n")
    with pytest.raises(ConfigError, match=r"bad.toml: not valid TOML"):
        read_toml(bad)
    with pytest.raises(ConfigError, match=r"missing.toml: config file not found"):
        read_toml(tmp_path / "missing.toml")


# --- nested tables ----------------------------------------------------------------------------


def test_a_dataclass_field_is_a_table_read_the_same_way():
    assert from_mapping(Run, {"search": {"playouts": 3}}, "x.toml").search == Search(3)
    assert from_mapping(Run, {}, "x.toml").search == Search()


def test_load_config_reads_a_sub_table_then_applies_the_flags_that_were_set(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('name = "top"\n[run]\nname = "table"\n[run.search]\nplayouts = 4\n')
    config = load_config(Run, path, {"name": "flag", "search": None}, table="run")
    assert config == Run("flag", Search(4))
    assert load_config(Run, path, table="run").name == "table"


def test_a_saved_config_reads_back_equal(tmp_path):
    config = Run("saved", Search(5))
    save_config(config, tmp_path / "config.json")
    assert read_saved_config(Run, tmp_path / "config.json") == config
    with pytest.raises(ConfigError, match="no saved config"):
        read_saved_config(Run, tmp_path / "missing.json")


# --- flags ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Flagged:
    out: str = setting("results", "where to write", aliases=("-o",))
    komi: float = setting(7.5, "points for White")
    max_hours: float = setting(0.0, "time budget", flag="--hours")
    quick: bool = setting(False, "fewer games")
    heads: tuple[str, ...] = setting((), "extra heads")
    seeds: tuple[int, ...] = setting((), "seeds")
    weights: dict[str, float] = setting({}, "loss weights", flag="--weight")
    players: list[str] = setting([], cli=False)
    search: Search = field(default_factory=Search)


def _parse(*argv: str) -> tuple[argparse.ArgumentParser, dict]:
    parser = argparse.ArgumentParser()
    add_config_flags(parser, Flagged)
    return parser, given_values(parser.parse_args(argv), Flagged)


def test_flags_are_the_field_names_and_help_shows_the_default():
    parser, _ = _parse()
    text = parser.format_help()
    for flag in ("--out", "-o", "--komi", "--hours", "--quick", "--no-quick", "--heads",
                 "--weight"):
        assert flag in text
    assert "points for White (default: 7.5)" in " ".join(text.split())
    assert "--players" not in text and "--search" not in text  # cli=False, a table


def test_flags_not_given_are_not_overrides():
    assert _parse()[1] == {}
    assert _parse("--komi", "6.5", "-o", "x")[1] == {"komi": 6.5, "out": "x"}


def test_booleans_lists_and_tables_from_the_command_line():
    _, given = _parse("--no-quick", "--heads", "ownership,score", "--seeds", "1,2",
                      "--weight", "value=0.25", "--weight", "policy=1", "--hours", "2")
    assert given == {"quick": False, "heads": ["ownership", "score"], "seeds": [1, 2],
                     "weights": {"value": 0.25, "policy": 1.0}, "max_hours": 2.0}
    assert from_mapping(Flagged, given, "flags").heads == ("ownership", "score")


def test_a_bad_list_item_is_a_usage_error():
    with pytest.raises(SystemExit):
        _parse("--seeds", "1,two")


# --- every bundled config ---------------------------------------------------------------------

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def _load_bundled(path: Path):
    """Each file with its stage's loader: rl-* are ``harness rl`` configs, sl-*
    ``harness train`` ones, frontier-* ``harness frontier`` ones, the others
    suites (read without checking that their archives exist, which the suite
    does before it runs)."""
    from harness.rl.config import RLConfig
    from harness.suite.config import SuiteConfig
    from harness.train.config import TrainConfig

    if path.name.startswith("rl-"):
        return load_config(RLConfig, path)
    if path.name.startswith("sl-"):
        return load_config(TrainConfig, path, table="train")
    if path.name.startswith("frontier-"):
        from harness.frontier.config import FrontierConfig

        return load_config(FrontierConfig, path, table="frontier")
    return from_mapping(SuiteConfig, {"name": path.stem, **read_toml(path)}, str(path))


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.toml")), ids=lambda p: p.name)
def test_every_bundled_config_loads_with_its_stage_loader(path):
    config = _load_bundled(path)
    shared = {k: v for k, v in read_toml(path).items() if k in ("board_size", "komi", "rules")}
    assert {k: getattr(config, k) for k in shared} == shared  # still top-level keys


def test_every_config_that_plays_games_shares_one_statement_of_the_game_and_backend():
    from harness.arena.datagen import DatagenConfig
    from harness.arena.tournament import TournamentConfig
    from harness.distributed import BackendSettings
    from harness.game.position import Game
    from harness.game.settings import GameSettings
    from harness.rl.config import RLConfig
    from harness.suite.config import SuiteConfig

    assert GameSettings.komi == Game(9).komi  # the rules engine's komi is the default
    for cls in (TournamentConfig, DatagenConfig, RLConfig, SuiteConfig):
        assert issubclass(cls, GameSettings) and issubclass(cls, BackendSettings)
    with pytest.raises(ConfigError, match="rules 'japanese' unknown"):
        from_mapping(RLConfig, {"run": "r", "rules": "japanese"}, "x.toml")
