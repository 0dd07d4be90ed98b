"""Configs from TOML: wrong keys and wrong types stop with one line naming them."""

from dataclasses import dataclass, field

import pytest

from harness.config_io import ConfigError, from_mapping, read_toml


@dataclass
class Example:
    players: list[str]
    komi: float = 7.0
    parallel: int = 1
    anchor: str | None = None
    retry: bool = False
    weights: dict[str, float] = field(default_factory=dict)


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
    ],
)
def test_bad_values_name_the_file_and_the_key(values, message):
    with pytest.raises(ConfigError) as err:
        from_mapping(Example, values, "x.toml")
    assert str(err.value).startswith(message)


def test_unreadable_toml_is_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("players = [\n")
    with pytest.raises(ConfigError, match=r"bad.toml: not valid TOML"):
        read_toml(bad)
    with pytest.raises(ConfigError, match=r"missing.toml: config file not found"):
        read_toml(tmp_path / "missing.toml")
