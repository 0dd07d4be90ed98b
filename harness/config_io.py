"""Dataclass configs from TOML tables and command-line flags.

Every stage keeps its settings in a dataclass; this module is the one place
that turns user text into one, so a typo anywhere stops with the same kind of
one-line message before any work starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    """A bad config; the message is the one line shown to the user."""


def read_toml(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError, RecursionError) as e:
        # ValueError: an integer past Python's digit limit; RecursionError: deep nesting.
        raise ConfigError(f"{path}: not valid TOML ({type(e).__name__}: "
                          f"{str(e)[:200]})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the config ({e.strerror or e})") from None


def add_flags(parser: argparse.ArgumentParser, flags: dict[str, tuple[str, type]]) -> None:
    """One ``--flag`` per config field; unset flags stay None so the config file wins."""
    for key, (flag, kind) in flags.items():
        names = ["-o", "--out"] if flag == "-o" else [flag]
        parser.add_argument(*names, dest=key, type=kind, default=None)


def given_flags(args: argparse.Namespace, flags: dict[str, tuple[str, type]]) -> dict[str, Any]:
    """The config fields the user set on the command line."""
    return {key: getattr(args, key) for key in flags if getattr(args, key) is not None}


def from_mapping(cls: type[T], values: dict[str, Any], source: str) -> T:
    """Build ``cls`` from ``values``: unknown keys and wrong types are one-line errors."""
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(
            f"{source}: unknown key {unknown[0]!r} (known: {', '.join(sorted(names))})"
        )
    kwargs = {key: _coerce(hints[key], value, f"{source}: {key}") for key, value in values.items()}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{source}: {e}") from None


def _coerce(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _coerce(option, value, where)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(errors[0])
    if origin in (list, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where} must be a list, got {value!r}")
        item = args[0] if args else Any
        items = [_coerce(item, v, where) for v in value]
        return items if origin is list else tuple(items)
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a table, got {value!r}")
        return {str(k): _coerce(args[1], v, where) if args else v for k, v in value.items()}
    if hint is Any:
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(hint, type) and (
        not isinstance(value, hint) or (isinstance(value, bool) and hint is not bool)
    ):
        raise ConfigError(f"{where} must be {hint.__name__}, got {value!r}")
    return value
