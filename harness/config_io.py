"""Dataclass configs from TOML tables, command-line flags and saved JSON.

Every stage keeps its settings in a frozen dataclass; this module is the one
place that turns user text into one, so a typo anywhere stops with the same
kind of one-line message before any work starts. A field says once what it
is (:func:`setting`: default and help); the TOML keys, the ``--flags`` and
their help are all derived from it, so they cannot drift apart. A field whose
type is itself a dataclass is a TOML table (``[mcts]``), read the same way.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import tomllib
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    """A bad config; the message is the one line shown to the user."""


def setting(default: Any = dataclasses.MISSING, help: str = "", *, flag: str | None = None,
            aliases: tuple[str, ...] = (), metavar: str | None = None,
            choices: Iterable[str] | None = None, cli: bool = True,
            parse: Callable[[str], Any] | None = None, repeatable: bool = False) -> Any:
    """A dataclass field with its help text: the one place a setting is described.

    ``flag`` replaces the derived ``--kebab-name`` (``--hours`` for
    ``max_hours``), ``aliases`` adds short forms (``-o``), ``cli=False`` keeps
    a setting out of the command line (a positional argument, a table).
    ``parse`` reads the flag's text when the type alone cannot (``512M``, a
    count or a fraction); ``repeatable`` lets a list's flag be given several
    times, the values joined. A list or dict default is copied for each
    instance.
    """
    metadata = {"help": help, "flag": flag, "aliases": tuple(aliases), "metavar": metavar,
                "choices": tuple(choices) if choices is not None else None, "cli": cli,
                "parse": parse, "repeatable": repeatable}
    if isinstance(default, list | dict | set):
        return dataclasses.field(default_factory=lambda: copy.deepcopy(default),
                                 metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


# --- TOML and JSON ----------------------------------------------------------------------------


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


def read_table(path: str | Path, table: str | None = None) -> dict[str, Any]:
    """A TOML file's values; with ``table``, the keys of ``[table]`` over the
    file's top-level ones, so one file may serve several commands."""
    values = read_toml(path)
    section = values.get(table) if table else None
    if not isinstance(section, dict):
        return values
    top = {k: v for k, v in values.items() if not isinstance(v, dict)}
    return {**top, **section}


def load_config(cls: type[T], path: str | Path | Sequence[str | Path] | None,
                overrides: dict[str, Any] | None = None, table: str | None = None) -> T:
    """A TOML file (its ``[table]`` if given), then the flags that were set.

    Several files are layers: each later one changes only the keys it has,
    table by table (:func:`layered`), so a variant of a study (one arm of an
    ablation) is a small file over the study's own.
    """
    paths = [] if path is None else [path] if isinstance(path, str | Path) else list(path)
    values = layered(read_table(p, table) for p in paths)
    values.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return from_mapping(cls, values, " + ".join(map(str, paths)) or "flags")


def layered(layers: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The layers' keys, later over earlier; a table merges key by key."""
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                value = layered([merged[key], value])
            merged[key] = value
    return merged


def save_config(config: Any, path: str | Path) -> None:
    """The config a run directory keeps, as JSON that :func:`read_saved_config` reads back."""
    from harness.files import atomic_json

    atomic_json(path, dataclasses.asdict(config), sort_keys=True)


def read_saved_config(cls: type[T], path: str | Path) -> T:
    path = Path(path)
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no saved config (is this a run directory?)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: corrupt config ({e})") from None
    return from_mapping(cls, values, str(path))


# --- values to a dataclass --------------------------------------------------------------------


def from_mapping(cls: type[T], values: dict[str, Any], source: str) -> T:
    """Build ``cls`` from ``values``: unknown keys and wrong types are one-line
    errors naming ``source`` (and the table, ``source [mcts]``, for a section)."""
    check_keys(cls, values, source)
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for key, value in values.items():
        hint = hints[key]
        if _is_section(hint):
            if not isinstance(value, dict | hint):
                raise ConfigError(f"{source}: [{key}] must be a table")
            kwargs[key] = value if isinstance(value, hint) else \
                from_mapping(hint, value, f"{source} [{key}]")
        else:
            kwargs[key] = _coerce(hint, value, f"{source}: {key}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{source}: {e}") from None


def check_keys(cls: type, values: dict[str, Any], source: str) -> None:
    """Refuse a key ``cls`` has no setting for (a typo), naming the ones it has."""
    if not isinstance(values, dict):
        raise ConfigError(f"{source}: must be a table, got {values!r}")
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(
            f"{source}: unknown key {unknown[0]!r} (known: {', '.join(sorted(names))})"
        )


def _is_section(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


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


def values_of(config: Any, cls: type) -> dict[str, Any]:
    """The settings ``config`` has as a ``cls`` (a base it shares with another
    config, such as the game settings), to hand on as keyword arguments."""
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(cls) if f.init}


# --- command-line flags -----------------------------------------------------------------------


def add_config_flags(parser: argparse.ArgumentParser, cls: type,
                     only: Iterable[str] | None = None) -> None:
    """One ``--flag`` per setting of ``cls`` (or of those named in ``only``).

    Unset flags stay None, so the config file wins (:func:`given_values`).
    Booleans get ``--x/--no-x``, lists a comma-separated value, tables a
    repeatable ``KEY=VALUE``; the help ends with the default.
    """
    for f, hint in _flag_fields(cls, only):
        meta = f.metadata
        names = [meta.get("flag") or "--" + f.name.replace("_", "-"), *meta.get("aliases", ())]
        kwargs: dict[str, Any] = {"dest": f.name, "default": None, "help": _help(f)}
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if meta.get("parse") is not None:
            kwargs["type"] = meta["parse"]
        elif hint is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif origin in (list, tuple):
            kwargs.update(type=comma_list(args[0] if args else str), metavar="A,B,...")
            if meta.get("repeatable"):
                kwargs["action"] = "append"
        elif origin is dict:
            kwargs.update(action="append", type=_key_value(args[1] if args else str),
                          metavar="KEY=VALUE")
        elif hint in (int, float, str):
            kwargs["type"] = hint
        else:
            raise TypeError(f"{cls.__name__}.{f.name}: no flag for a {hint}")
        for key in ("metavar", "choices"):
            if meta.get(key) is not None:
                kwargs[key] = meta[key]
        parser.add_argument(*names, **kwargs)


def given_values(args: argparse.Namespace, cls: type,
                 only: Iterable[str] | None = None) -> dict[str, Any]:
    """The settings of ``cls`` the user set on the command line (flags from
    :func:`add_config_flags`), as config keys."""
    values = {}
    for f, hint in _flag_fields(cls, only):
        value = getattr(args, f.name, None)
        if value is None:
            continue
        if typing.get_origin(hint) is dict:
            value = dict(value)
        elif f.metadata.get("repeatable") and f.metadata.get("parse") is None:
            value = [item for part in value for item in part]  # one list per use of the flag
        values[f.name] = value
    return values


def _flag_fields(cls: type, only: Iterable[str] | None) -> Iterator[tuple[dataclasses.Field, Any]]:
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)
              if f.init and f.metadata.get("cli", True) and not _is_section(hints[f.name])}
    wanted = list(fields) if only is None else list(only)
    for name in wanted:
        if name not in fields:
            raise TypeError(f"{cls.__name__} has no command-line setting {name!r}")
        yield fields[name], _without_none(hints[name])


def _without_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(options) == 1:
            return options[0]
    return hint


def _help(f: dataclasses.Field) -> str:
    text = f.metadata.get("help", "")
    default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
    if default not in (None, "", (), [], {}, dataclasses.MISSING):
        shown = ",".join(map(str, default)) if isinstance(default, list | tuple) else default
        text = f"{text} (default: {shown})" if text else f"default: {shown}"
    return text.replace("%", "%%")  # argparse formats help with %


def comma_list(kind: type):
    """An argparse ``type`` reading ``"1, 0.3,0.1"`` as a list of ``kind``."""
    def parse(text: str) -> list:
        try:
            return [kind(part.strip()) for part in text.split(",") if part.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {kind.__name__} values separated by commas, got {text!r}") from None
    return parse


def _key_value(kind: type):
    def parse(text: str) -> tuple[str, Any]:
        key, sep, value = text.partition("=")
        try:
            if not sep or not key.strip():
                raise ValueError
            return key.strip(), kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected KEY={kind.__name__.upper()}, got {text!r}") from None
    return parse
