"""The ``harness`` command: one subcommand per pipeline stage.

Each subcommand is a module of :mod:`harness.commands` with ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. Those modules keep heavy
imports (TensorFlow) inside ``run`` so that ``harness --help`` and the GTP
engine start fast. The console is kept quiet and honest (``console.py``):
native start-up noise filtered unless ``--verbose``, and every long command
ends with a one-line summary.

Errors are reported here, once: a command raises, and an expected error (a
bad config or flag, a plugin that fails, unreadable data, a missing file, a
backend that cannot start) becomes one line, ``harness COMMAND: why``, and
exit code 2. Anything else is a bug and keeps its traceback, as every error
does with ``--debug``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import time

# (subcommand, module). Order is the order of ``harness --help``.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("suite", "harness.commands.suite"),
    ("bench", "harness.commands.bench"),
    ("models", "harness.commands.models"),
    ("ingest", "harness.commands.ingest"),
    ("gtp", "harness.commands.gtp"),
    ("datagen", "harness.commands.datagen"),
    ("tournament", "harness.commands.tournament"),
    ("train", "harness.commands.train"),
    ("evaluate", "harness.commands.evaluate"),
    ("compare", "harness.commands.compare"),
    ("frontier", "harness.commands.frontier"),
    ("plot", "harness.commands.plot"),
    ("rl", "harness.commands.rl"),
    ("rl-report", "harness.commands.rl_report"),
    ("rl-targets", "harness.commands.rl_targets"),
    ("rl-value", "harness.commands.rl_value"),
)
# Commands that run long enough to deserve a closing line (not gtp: a GUI's console).
LONG = frozenset(name for name, _ in COMMANDS) - {"gtp", "models", "plot"}
# Commands whose caller waits on the process itself: a GUI waits for the
# engine to exit after ``quit`` (Sabaki's Controller.stop). Once they return,
# all they do is answered and closed, and the interpreter's teardown
# (TensorFlow's threads and destructors: 1.4 to 9 s measured here) is only
# that wait; they leave at once, their output flushed.
PROMPT_EXIT = frozenset({"gtp"})


def build_parser() -> argparse.ArgumentParser:
    from harness import __version__
    from harness.devices import BACKENDS

    parser = argparse.ArgumentParser(
        prog="harness",
        description="Compare neural-network architectures for computer Go.",
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    parser.add_argument(
        "--verbose", action="store_true",
        help="keep TensorFlow's native start-up messages (also HARNESS_VERBOSE=1)",
    )
    parser.add_argument(
        "--debug", action="store_true",
        help="show the traceback of an expected error too (a bad config, plugin or file), "
        "not only its one line")
    parser.add_argument(
        "--keras-backend", choices=BACKENDS, default=None,
        help="the Keras backend of this command and its workers (default: KERAS_BACKEND, "
        "else tensorflow; a config's keras_backend key does the same)")
    parser.add_argument(
        "--plugin", action="append", default=[], metavar="MODULE",
        help="load a plugin (a module name or a .py file) whose networks every command may "
        "then use by name or as MODULE:FUNCTION; repeatable (docs/plugins.md)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # one broken stage must not take every command down
            p = sub.add_parser(name, help=f"(unavailable: {exc})")
            p.set_defaults(_run=_unavailable(name, exc))
            continue
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _unavailable(name: str, exc: Exception):
    def run(_args: argparse.Namespace) -> int:
        print(f"harness {name}: cannot load ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 2

    return run


def main(argv: list[str] | None = None) -> int:
    from harness import console

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verbose:
        os.environ[console.VERBOSE_ENV] = "1"
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    # TensorFlow's C++ start-up chatter on a CPU-only machine reads as a
    # failure; it is dropped (real errors still show) unless --verbose. Only
    # for the program itself: a caller passing argv (a test, a notebook) keeps
    # its own file descriptors.
    if argv is None:
        console.quiet_native_noise()
        signal.signal(signal.SIGTERM, _terminate)
    started = time.monotonic()
    refusal = _prepare(args)
    if refusal:
        print(f"harness: {refusal}", file=sys.stderr)
        return 2
    try:
        code = _run(args)
    except Terminated:
        print("terminated", file=sys.stderr)
        code = 143
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        code = 130
    if args.command in LONG:
        console.summary(args.command, _outcome(code, time.monotonic() - started))
    if argv is None and args.command in PROMPT_EXIT:
        _exit_now(code)
    return code


def _run(args: argparse.Namespace) -> int:
    """The command's exit code; an expected error is one line and code 2."""
    try:
        return int(args._run(args) or 0)
    except Exception as exc:
        if args.debug or not expected_error(exc):
            raise
        name = " ".join(filter(None, ("harness", args.command, getattr(args, "kind", None))))
        print(f"{name}: {one_line(exc)}", file=sys.stderr)
        return 2


def expected_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the user's to fix, not a bug: a ``ValueError``
    (``ConfigError``, ``PluginError``, ``IngestError``, ``DatasetError``,
    ``ModelFileError``, a bad player spec, a bad value), an ``OSError`` (a
    missing or unreadable file) or a ``BackendError`` (Ray missing or
    unreachable)."""
    from harness.distributed import BackendError

    return isinstance(exc, ValueError | OSError | BackendError)


def one_line(exc: BaseException) -> str:
    """The error's message on one line (its lines joined), or its type if it has none."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return "; ".join(lines) or type(exc).__name__


def _prepare(args: argparse.Namespace) -> str | None:
    """The Keras backend chosen (before anything loads Keras), then the
    plugins loaded; the one-line refusal, if any. ``ConfigError`` and
    ``PluginError`` are both ``ValueError``s."""
    try:
        if args.keras_backend:
            from harness.devices import use_backend

            use_backend(args.keras_backend)
        if args.plugin:
            from harness.nets.plugins import load_plugins

            load_plugins(args.plugin)
    except ValueError as exc:
        return str(exc)
    return None


def _exit_now(code: int) -> None:
    """Leave the process without the interpreter's teardown (see PROMPT_EXIT),
    after what it said: stdout flushed, stderr's filter drained."""
    from harness import console

    with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing left to say
        sys.stdout.flush()
    console.restore_stderr()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: the command unwinds, so its worker pools
    close (killing their processes, which would otherwise play on as orphans,
    GTP engines and all) and what it wrote stays resumable."""


def _terminate(signum, frame) -> None:
    raise Terminated


def _outcome(code: int, seconds: float) -> str:
    took = f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
    return f"finished in {took}" if code == 0 else f"stopped with exit code {code} after {took}"


if __name__ == "__main__":
    raise SystemExit(main())
