"""Player specs: one short text names any player in configs and on the command line.

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
``fill_eyes=1`` for mcts (the search may play into its own true eyes, as
before 2026-11-26; default 0: it never does), ``score_utility=W`` for mcts
(a network with a score head: the search maximises the win value blended
with the margin, ``harness.search.utility``),
``value=PATH`` for mcts (the search's value from that network, its prior
from the first: AlphaGo's supervised prior with a value network),
``encoder=NAME`` for policy and mcts (when the run does not say),
``endgame=0`` for policy and random (pick among every legal move, as before
2026-11-29; default 1: never an own eye, a self-atari in own territory or a
string of two handed over, and pass when nothing else is left:
:mod:`harness.game.endgame`).

The text is parsed once, by :func:`parse_player`, into a :class:`PlayerSpec`;
from then on the spec travels as a value (to worker processes, into game
tasks) and is never formatted back into text to be parsed again. A spec's
:attr:`~PlayerSpec.label` is written from its fields, so a budget changed
after parsing (a tournament's ``playouts``: :meth:`PlayerSpec.with_playouts`)
shows in the name a ranking prints. Parsing checks the syntax only; whether a
model file or a program exists is :func:`check_available`'s question, and
networks load (TensorFlow is imported) only in :meth:`PlayerSpec.build`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from harness.players.base import Player, PlayerSpecError

FORMS = 'random, uct:N, policy:PATH[@T], mcts:PATH[@N], gnugo:LEVEL, gtp:"COMMAND ARGS"'
KINDS = ("random", "uct", "policy", "mcts", "gnugo", "gtp")
SEARCH_KINDS = ("uct", "mcts")  # the players a playout budget applies to
NETWORK_KINDS = ("policy", "mcts")
DEFAULT_PLAYOUTS = {"uct": 1000, "mcts": 200}
GNUGO_DEFAULT_LEVEL = 10
DEFAULT_ROOT = "puct"
DEFAULT_GUMBEL_K = 16
_OPTION = re.compile(r",([a-z_]+)=([^,]*)$")
_OPTIONS = {  # the options each kind takes besides seed (gtp takes none: commas are its own)
    "random": ("endgame",),
    "uct": ("resign",),
    "policy": ("encoder", "endgame"),
    "mcts": ("value", "randomize", "encoder", "root", "gumbel_k", "fill_eyes", "score_utility"),
    "gnugo": (),
}


@dataclass(frozen=True)
class PlayerSpec:
    """One player, as its spec text named it, with every default filled in.

    Fields a kind does not use keep their defaults (``None``, ``()``), so two
    specs are equal exactly when they name the same player.
    """

    kind: str  # one of KINDS
    model: Path | None = None  # policy, mcts: the .keras file
    playouts: int | None = None  # uct, mcts: per move
    temperature: float = 0.0  # policy: 0 plays the top move
    level: int | None = None  # gnugo
    command: tuple[str, ...] = ()  # gtp: argv, no shell
    seed: int | None = None  # any kind but gtp: wins over a seed given to build()
    resign: float | None = None  # uct: resign below this win rate
    randomize: bool = False  # mcts
    root: str = DEFAULT_ROOT  # mcts: "puct" or "gumbel"
    gumbel_k: int = DEFAULT_GUMBEL_K  # mcts
    fill_eyes: bool = False  # mcts: True lets the search play into its own eyes
    score_utility: float = 0.0  # mcts: the score term's weight in what the search maximises
    encoder: str | None = None  # policy, mcts: when the model does not say
    endgame: bool = True  # policy, random: keep to sensible moves (harness.game.endgame)
    value_model: Path | None = None  # mcts: the network the search's value comes from

    @property
    def label(self) -> str:
        """Spec text for what this spec plays: the budget and every option that
        is not a default, so two players that differ never share a label and
        the label read back by :func:`parse_player` is this spec again."""
        if self.kind == "gtp":
            joined = shlex.join(self.command)
            return f'gtp:"{joined}"' if '"' not in joined else f"gtp:{joined}"
        head = {
            "random": "random",
            "uct": f"uct:{self.playouts}",
            "policy": f"policy:{self.model}" + (f"@{_short(self.temperature)}"
                                                if self.temperature else ""),
            "mcts": f"mcts:{self.model}@{self.playouts}",
            "gnugo": f"gnugo:{self.level}",
        }[self.kind]
        options = {
            "value": None if self.value_model is None else str(self.value_model),
            "root": None if self.root == DEFAULT_ROOT else self.root,
            "gumbel_k": None if self.gumbel_k == DEFAULT_GUMBEL_K else str(self.gumbel_k),
            "randomize": "1" if self.randomize else None,
            "fill_eyes": "1" if self.fill_eyes else None,
            "score_utility": _short(self.score_utility) if self.score_utility else None,
            "encoder": self.encoder,
            "endgame": None if self.endgame else "0",
            "resign": None if self.resign is None else _short(self.resign),
            "seed": None if self.seed is None else str(self.seed),
        }
        return head + "".join(f",{key}={value}" for key, value in options.items()
                              if value is not None)

    def with_playouts(self, playouts: int | None) -> PlayerSpec:
        """This spec searching ``playouts`` per move instead of its own count.

        A budget set for a whole tournament or datagen run replaces each
        searching player's own ``@N`` (players without a playout budget are
        unchanged, and ``None`` changes nothing), so that the label, built
        from the fields, names the budget actually played.
        """
        if playouts is None or self.kind not in SEARCH_KINDS:
            return self
        return replace(self, playouts=_positive(self.label, playouts, "playouts"))

    def build(self, *, seed: int | None = None, name: str | None = None) -> Player:
        """The player; ``name`` defaults to the label. Loads the network or
        starts the engine, so a missing file or program is a
        :class:`PlayerSpecError` here, with a one-line reason."""
        seed = self.seed if self.seed is not None else seed
        name = name or self.label
        if self.kind == "random":
            from harness.players.random_player import RandomPlayer

            return RandomPlayer(seed=seed, name=name, endgame=self.endgame)
        if self.kind == "uct":
            from harness.players.uct import UCTPlayer

            return UCTPlayer(self.playouts, seed=seed, resign_below=self.resign, name=name)
        if self.kind == "policy":
            from harness.players.policy import PolicyPlayer

            return self._network(lambda: PolicyPlayer(
                self.model, temperature=self.temperature, encoder=self.encoder, seed=seed,
                name=name, endgame=self.endgame))
        if self.kind == "mcts":
            from harness.players.mcts import MCTSPlayer

            return self._network(lambda: MCTSPlayer(
                self.model, playouts=self.playouts, randomize=self.randomize,
                encoder=self.encoder, root=self.root, gumbel_k=self.gumbel_k,
                fill_eyes=self.fill_eyes, score_utility=self.score_utility,
                value_model=self.value_model, seed=seed, name=name))
        if self.kind == "gnugo":
            from harness.players.gtp_player import gnugo_player

            return self._engine(lambda: gnugo_player(self.level, seed=seed, name=name))
        from harness.players.gtp_player import GTPPlayer

        return self._engine(lambda: GTPPlayer(self.command, name=name))

    def _network(self, load: Callable[[], Player]) -> Player:
        """Load a network player; an unreadable model file is a one-line spec error."""
        check_available(self)
        try:
            return load()
        except (OSError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise _fail(self.label, first) from None

    def _engine(self, start: Callable[[], Player]) -> Player:
        """Start an external engine; a missing program is a spec error, not a crash later."""
        from harness.players.gtp_client import GTPEngineError

        try:
            return start()
        except (FileNotFoundError, GTPEngineError) as exc:
            raise _fail(self.label, str(exc).splitlines()[0]) from None


def parse_player(text: str) -> PlayerSpec:
    """The spec ``text`` names; raises :class:`PlayerSpecError` with a one-line reason.

    Only the syntax is checked (no file is opened, nothing is imported), so
    configs can be parsed anywhere, e.g. in a parent before its workers start.
    """
    kind, colon, rest = text.strip().partition(":")
    if not colon and "," in kind:  # random,seed=3: options without an argument
        kind, rest = kind.split(",", 1)
        rest = "," + rest
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise PlayerSpecError(f"unknown player {text!r} (expected one of: {FORMS})")
    if kind == "gtp":
        return PlayerSpec("gtp", command=_command_line(text, rest))
    rest, options = _split_options(rest)
    unknown = sorted(set(options) - set(_OPTIONS[kind]) - {"seed"})
    if unknown:
        raise _fail(text, f"unknown option {unknown[0]!r}")
    seed = _integer(text, options["seed"], "option seed") if "seed" in options else None
    endgame = "endgame" not in options or bool(_integer(text, options["endgame"],
                                                        "option endgame"))
    if kind == "random":
        if rest.strip():
            raise _fail(text, "random takes no argument")
        return PlayerSpec("random", seed=seed, endgame=endgame)
    if kind == "uct":
        resign = _number(text, options["resign"], "option resign") if "resign" in options else None
        return PlayerSpec("uct", playouts=_positive(text, rest or DEFAULT_PLAYOUTS["uct"],
                                                    "playouts"), seed=seed, resign=resign)
    if kind == "gnugo":
        return PlayerSpec("gnugo", level=_level(text, rest or str(GNUGO_DEFAULT_LEVEL)), seed=seed)
    model, after_at = _path_at(text, rest, "temperature" if kind == "policy" else "playouts")
    encoder = options.get("encoder")
    if kind == "policy":
        temperature = 0.0 if after_at is None else _temperature(text, after_at)
        return PlayerSpec("policy", model=model, temperature=temperature, encoder=encoder,
                          seed=seed, endgame=endgame)
    from harness.search.config import ROOT_RULES, EvaluatorConfig

    root = options.get("root", DEFAULT_ROOT)
    if root not in ROOT_RULES:
        raise _fail(text, f"root must be one of {', '.join(ROOT_RULES)}, got {root!r}")
    randomize = "randomize" in options and bool(_integer(text, options["randomize"],
                                                         "option randomize"))
    fill_eyes = "fill_eyes" in options and bool(_integer(text, options["fill_eyes"],
                                                         "option fill_eyes"))
    score_utility = 0.0
    if "score_utility" in options:
        score_utility = _number(text, options["score_utility"], "option score_utility")
        try:  # the evaluator's own check, at parse time
            EvaluatorConfig(score_utility=score_utility)
        except ValueError as exc:
            raise _fail(text, str(exc)) from None
    value = options.get("value")
    if value is not None and not value.strip():
        raise _fail(text, "value= needs a model path")
    return PlayerSpec(
        "mcts", model=model,
        value_model=Path(value.strip()).expanduser() if value is not None else None,
        playouts=_positive(text, after_at or DEFAULT_PLAYOUTS["mcts"], "playouts"),
        randomize=randomize, encoder=encoder, root=root, fill_eyes=fill_eyes,
        score_utility=score_utility,
        gumbel_k=_positive(text, options.get("gumbel_k", DEFAULT_GUMBEL_K), "gumbel_k"),
        seed=seed,
    )


def make_player(spec: str | PlayerSpec, *, seed: int | None = None,
                name: str | None = None) -> Player:
    """The player ``spec`` names (text is parsed first); raises :class:`PlayerSpecError`."""
    parsed = parse_player(spec) if isinstance(spec, str) else spec
    return parsed.build(seed=seed, name=name)


def check_available(spec: PlayerSpec) -> None:
    """Refuse a spec whose model file or program is missing, without loading or
    starting anything: a parent checks this before its workers play a game."""
    if spec.kind in NETWORK_KINDS and not spec.model.is_file():
        raise _fail(spec.label, f"model file {str(spec.model)!r} not found")
    if spec.value_model is not None and not spec.value_model.is_file():
        raise _fail(spec.label, f"value model file {str(spec.value_model)!r} not found")
    if spec.kind == "gnugo":
        from harness.players.gtp_client import find_gnugo

        if find_gnugo() is None:
            raise _fail(spec.label, "GNU Go not found")
    if spec.kind == "gtp":
        import shutil

        program = spec.command[0]
        if shutil.which(program) is None and not Path(program).is_file():
            raise _fail(spec.label, f"program {program!r} not found")


# --- pieces of the grammar --------------------------------------------------------


def _split_options(rest: str) -> tuple[str, dict[str, str]]:
    """Peel trailing ``,key=value`` options off the argument."""
    options: dict[str, str] = {}
    while (match := _OPTION.search(rest)) is not None:
        options[match.group(1)] = match.group(2)
        rest = rest[: match.start()]
    return rest, options


def _short(number: float) -> str:
    """``0.5`` rather than ``0.50000``, and never a rounded value (labels parse back)."""
    text = f"{number:g}"
    return text if float(text) == number else repr(number)


def _fail(text: str, why: str) -> PlayerSpecError:
    return PlayerSpecError(f"bad player spec {text!r}: {why}")


def _positive(text: str, value: str | int, what: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise _fail(text, f"{what} must be a positive integer, got {value!r}")
    return number


def _level(text: str, value: str) -> int:
    try:
        level = int(value)
    except ValueError:
        level = None
    if level is None or not 0 <= level <= 10:
        raise _fail(text, f"level must be an integer from 0 to 10, got {value!r}")
    return level


def _temperature(text: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not number >= 0:
        raise _fail(text, f"temperature must be a number >= 0, got {value!r}")
    return number


def _integer(text: str, value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise _fail(text, f"{what} must be an integer, got {value!r}") from None


def _number(text: str, value: str, what: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise _fail(text, f"{what} must be a number, got {value!r}") from None


def _path_at(text: str, rest: str, what: str) -> tuple[Path, str | None]:
    """``PATH`` or ``PATH@VALUE`` (the file need not exist yet: :func:`check_available`)."""
    path_text, value = rest.strip(), None
    if "@" in path_text:
        path_text, value = path_text.rsplit("@", 1)
    if not path_text:
        raise _fail(text, "a model path is needed")
    if value is not None and not value.strip():
        raise _fail(text, f"{what} missing after '@'")
    return Path(path_text).expanduser(), value


def _command_line(text: str, rest: str) -> tuple[str, ...]:
    try:
        argv = shlex.split(rest)
    except ValueError as exc:
        raise _fail(text, f"cannot split the command line ({exc})") from None
    if len(argv) == 1 and " " in argv[0]:
        argv = shlex.split(argv[0])  # gtp:"pachi -t =5000" arrives quoted as one word
    if not argv:
        raise _fail(text, 'gtp needs a command, e.g. gtp:"gnugo --mode gtp"')
    return tuple(argv)
