"""Player spec strings: one short text names any player in configs and on the command line.

    random                         uniform legal moves, no eye filling
    uct:1000                       UCT with random playouts, 1,000 per move
    policy:models/run/best.keras   the network's top policy move (``@T``: sample at temperature T)
    mcts:models/run/best.keras@200 PUCT search with the network, 200 playouts per move
    gnugo:10                       GNU Go at level 10
    gtp:"pachi -t =5000"           any GTP engine, split like a shell would (no shell runs)

Options may follow as ``,key=value``: ``seed=N`` for any player, ``resign=R``
for uct (win rate), ``randomize=1`` for mcts (Cazenave's tournament choice;
Gumbel noise under the Gumbel root), ``root=gumbel`` and ``gumbel_k=N`` for
mcts (Gumbel AlphaZero's search, at most N root moves sampled),
``encoder=NAME`` for policy and mcts (when the run does not say). Networks
load only when asked for, so parsing never imports TensorFlow.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from harness.players.base import Player, PlayerSpecError

FORMS = 'random, uct:N, policy:PATH[@T], mcts:PATH[@N], gnugo:LEVEL, gtp:"COMMAND ARGS"'
_OPTION = re.compile(r",([a-z_]+)=([^,]*)$")


def make_player(spec: str, *, seed: int | None = None, name: str | None = None) -> Player:
    """The player ``spec`` names; raises :class:`PlayerSpecError` with a one-line reason."""
    text = spec.strip()
    kind, _, rest = text.partition(":")
    kind = kind.strip().lower()
    rest, options = _split_options(spec, rest)
    if "seed" in options:
        seed = _int_option(spec, options, "seed")
    label = name or text
    if kind == "random":
        _no_argument(spec, rest)
        _no_options(spec, options)
        from harness.players.random_player import RandomPlayer

        return RandomPlayer(seed=seed, name=label)
    if kind == "uct":
        playouts = _positive_int(spec, rest or "1000", "playouts")
        resign = _float_option(spec, options, "resign") if "resign" in options else None
        _no_options(spec, options, allowed=("resign",))
        from harness.players.uct import UCTPlayer

        return UCTPlayer(playouts, seed=seed, resign_below=resign, name=label)
    if kind == "policy":
        path, temperature = _path_at(spec, rest, "temperature")
        _no_options(spec, options, allowed=("encoder",))
        from harness.players.policy import PolicyPlayer

        t = 0.0 if temperature is None else _nonnegative_float(spec, temperature, "temperature")
        encoder = options.get("encoder")
        return _network(spec, lambda: PolicyPlayer(
            path, temperature=t, encoder=encoder, seed=seed, name=label))
    if kind == "mcts":
        path, playouts = _path_at(spec, rest, "playouts")
        count = 200 if playouts is None else _positive_int(spec, playouts, "playouts")
        randomize = "randomize" in options and bool(_int_option(spec, options, "randomize"))
        _no_options(spec, options, allowed=("randomize", "encoder", "root", "gumbel_k"))
        encoder = options.get("encoder")
        from harness.search.config import ROOT_RULES

        root = _choice(spec, options.get("root", "puct"), "root", ROOT_RULES)
        k = _positive_int(spec, options.get("gumbel_k", "16"), "gumbel_k")
        from harness.players.mcts import MCTSPlayer

        return _network(spec, lambda: MCTSPlayer(
            path, playouts=count, randomize=randomize, encoder=encoder, root=root, gumbel_k=k,
            seed=seed, name=label))
    if kind == "gnugo":
        level = _int_in(spec, rest or "10", "level", 0, 10)
        _no_options(spec, options)
        from harness.players.gtp_player import gnugo_player

        return _engine(spec, lambda: gnugo_player(level, seed=seed, name=label))
    if kind == "gtp":
        argv = _command_line(spec, rest)
        _no_options(spec, options)
        from harness.players.gtp_player import GTPPlayer

        return _engine(spec, lambda: GTPPlayer(argv, name=label))
    raise PlayerSpecError(f"unknown player {spec!r} (expected one of: {FORMS})")


# --- pieces ---------------------------------------------------------------------


def _split_options(spec: str, rest: str) -> tuple[str, dict[str, str]]:
    """Peel trailing ``,key=value`` options off the argument (a gtp command keeps its commas)."""
    options: dict[str, str] = {}
    if rest.lstrip().startswith(('"', "'")) or spec.strip().lower().startswith("gtp:"):
        return rest, options
    while (match := _OPTION.search(rest)) is not None:
        options[match.group(1)] = match.group(2)
        rest = rest[: match.start()]
    return rest, options


def _fail(spec: str, why: str) -> PlayerSpecError:
    return PlayerSpecError(f"bad player spec {spec!r}: {why}")


def _no_argument(spec: str, rest: str) -> None:
    if rest.strip():
        raise _fail(spec, "random takes no argument")


def _no_options(spec: str, options: dict[str, str], allowed: tuple[str, ...] = ()) -> None:
    unknown = sorted(set(options) - set(allowed) - {"seed"})
    if unknown:
        raise _fail(spec, f"unknown option {unknown[0]!r}")


def _positive_int(spec: str, text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise _fail(spec, f"{what} must be a positive integer, got {text!r}") from None
    if value < 1:
        raise _fail(spec, f"{what} must be a positive integer, got {text!r}")
    return value


def _choice(spec: str, text: str, what: str, choices: tuple[str, ...]) -> str:
    if text not in choices:
        raise _fail(spec, f"{what} must be one of {', '.join(choices)}, got {text!r}")
    return text


def _int_in(spec: str, text: str, what: str, low: int, high: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise _fail(spec, f"{what} must be an integer from {low} to {high}, got {text!r}")
    return value


def _nonnegative_float(spec: str, text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise _fail(spec, f"{what} must be a number >= 0, got {text!r}")
    return value


def _int_option(spec: str, options: dict[str, str], key: str) -> int:
    try:
        return int(options[key])
    except ValueError:
        raise _fail(spec, f"option {key} must be an integer, got {options[key]!r}") from None


def _float_option(spec: str, options: dict[str, str], key: str) -> float:
    try:
        return float(options[key])
    except ValueError:
        raise _fail(spec, f"option {key} must be a number, got {options[key]!r}") from None


def _path_at(spec: str, rest: str, what: str) -> tuple[Path, str | None]:
    """``PATH`` or ``PATH@VALUE``; the file must exist."""
    text = rest.strip()
    value = None
    if "@" in text:
        text, value = text.rsplit("@", 1)
    if not text:
        raise _fail(spec, "a model path is needed")
    path = Path(text).expanduser()
    if not path.is_file():
        raise _fail(spec, f"model file {str(path)!r} not found")
    if value is not None and not value.strip():
        raise _fail(spec, f"{what} missing after '@'")
    return path, value


def _command_line(spec: str, rest: str) -> list[str]:
    try:
        argv = shlex.split(rest)
    except ValueError as exc:
        raise _fail(spec, f"cannot split the command line ({exc})") from None
    if len(argv) == 1 and " " in argv[0]:
        argv = shlex.split(argv[0])  # gtp:"pachi -t =5000" arrives quoted as one word
    if not argv:
        raise _fail(spec, 'gtp needs a command, e.g. gtp:"gnugo --mode gtp"')
    return argv


def _network(spec: str, load: Any) -> Player:
    """Load a network player; an unreadable model file is a one-line spec error."""
    try:
        return load()
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _fail(spec, first) from None


def _engine(spec: str, start: Any) -> Player:
    """Start an external engine; a missing program is a spec error, not a crash later."""
    from harness.gtp.client import GTPEngineError

    try:
        return start()
    except (FileNotFoundError, GTPEngineError) as exc:
        first = str(exc).splitlines()[0]
        raise _fail(spec, first) from None
