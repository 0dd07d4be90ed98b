"""Drive an external Go engine (GNU Go, Pachi, Leela Zero, KataGo...) over GTP v2.

The engine runs as a child process without a shell. A reader thread moves its
stdout lines into a queue so that every wait has a deadline: an engine that
hangs costs a timeout, never a stuck tournament. Another thread keeps the tail
of stderr, which is what explains most crashes, and keeps the pipe drained so
a chatty engine never blocks on a full stderr buffer.

Each reader thread owns its pipe and is the only one to close it, at end of
file. Closing it from another thread frees the descriptor number while the
reader may be between taking it and entering ``read``; the next engine's pipe
can then receive that number, and the old thread steals the first byte of the
new engine's first answer (its ``=``), which then never arrives: a timeout on
the first command, about once in a thousand engine starts under load.

Protocol (GTP v2, section 2): a command is one line ``[id] name [args]``; the
answer is ``=[id] text`` or ``?[id] message``, possibly over several lines,
ended by an empty line. Carriage returns are dropped; lines that arrive
before a response starts (some engines print banners on stdout) are kept in
:attr:`GTPClient.stray_lines` and otherwise ignored.

Failures are split by who is at fault, because callers treat them differently:
:class:`GTPError` is the engine refusing a command (``? illegal move``) and
the engine is still usable; :class:`GTPEngineError` (:class:`GTPTimeout`,
:class:`GTPEngineDied`) means the process is gone or out of step, so the client
stops it and only :meth:`GTPClient.restart` brings it back.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import shutil
import subprocess
import threading
import time
import weakref
from collections.abc import Iterable, Sequence

GNUGO_PATHS = ("/usr/games/gnugo",)
STDERR_TAIL_LINES = 40
# Commands written before their answers are read; kept far below the pipe
# buffer (64 KiB on Linux) so that writing can never block on an engine that is
# itself blocked writing answers nobody reads yet.
PIPELINE_BYTES = 8192

_EOF = None  # queued by the reader thread when stdout closes
_DIGITS = frozenset("0123456789")
MAX_ID_DIGITS = 18  # a GTP id is an int; 18 digits fit in 64 bits


class GTPError(RuntimeError):
    """The engine answered ``? message``: it refused the command but lives on."""

    def __init__(self, command: str, message: str, engine: str = "engine"):
        self.command = command
        self.message = message
        self.engine = engine
        super().__init__(f"{engine} refused {command!r}: {message}")


class GTPEngineError(RuntimeError):
    """The engine process failed: no usable answer is coming."""

    def __init__(self, what: str, command: str | None, stderr_tail: str, engine: str):
        self.command = command
        self.stderr_tail = stderr_tail
        self.engine = engine
        text = f"{engine}: {what}"
        if command is not None:
            text += f" (command {command!r})"
        if stderr_tail:
            text += "\n--- engine stderr (tail) ---\n" + stderr_tail
        super().__init__(text)


class GTPTimeout(GTPEngineError):
    """No complete answer within the timeout; the engine was stopped."""


class GTPEngineDied(GTPEngineError):
    """The engine exited (or closed stdout) before answering."""


def parse_response(lines: Sequence[str]) -> tuple[bool, int | None, str]:
    """``(success, id, text)`` of one response given its lines (blank line excluded).

    The first line starts with ``=`` or ``?`` followed by an optional numeric
    id; the text is the rest of that line plus the following lines, stripped.
    """
    if not lines or not lines[0] or lines[0][0] not in "=?":
        raise ValueError(f"not a GTP response: {lines[:3]!r}"[:300])
    first = lines[0]
    success = first[0] == "="
    i = 1
    while i < len(first) and first[i] in _DIGITS:  # ASCII only: int() refuses "²"
        i += 1
    if i - 1 > MAX_ID_DIGITS:  # int() of over 4,300 digits raises; no engine numbers so high
        raise ValueError(f"not a GTP response: an id of {i - 1:,} digits")
    ident = int(first[1:i]) if i > 1 else None
    text = "\n".join([first[i:], *lines[1:]]).strip()
    return success, ident, text


def _split_id(command: str) -> tuple[int | None, str]:
    """Split an optional leading numeric id from a command line."""
    head, _, rest = command.partition(" ")
    if head and len(head) <= MAX_ID_DIGITS and all(c in _DIGITS for c in head):
        return int(head), rest.strip()
    return None, command


def _drain_stdout(stream, lines: queue.Queue) -> None:
    try:
        for raw in iter(stream.readline, b""):
            lines.put(raw.decode("utf-8", errors="replace").replace("\r", "").rstrip("\n"))
    except (OSError, ValueError):
        pass
    finally:
        stream.close()
        lines.put(_EOF)


def _drain_stderr(stream, tail: collections.deque) -> None:
    try:
        for raw in iter(stream.readline, b""):
            tail.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
    except (OSError, ValueError):
        pass
    finally:
        stream.close()


def _stop_process(proc: subprocess.Popen, grace: float) -> None:
    """terminate, then kill: used by close() and as the last-resort finaliser."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class GTPClient:
    """One external GTP engine process.

    ``argv`` is the full command line as a list (never run through a shell);
    ``timeout`` is the default seconds to wait for each answer (``send`` can
    override it, e.g. for a slow ``genmove``); ``name`` labels errors and logs
    (default: the program's file name). ``use_ids`` numbers every command and
    checks that each answer carries the same id, which catches an engine that
    has fallen out of step; a command that already starts with an id keeps it.

    Use as a context manager, or call :meth:`close`. After a
    :class:`GTPEngineError` the process is stopped; :meth:`restart` starts a
    fresh one (the caller replays whatever state it needs).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 30.0,
        name: str | None = None,
        use_ids: bool = False,
        cwd: str | os.PathLike | None = None,
        env: dict[str, str] | None = None,
    ):
        if isinstance(argv, str) or not argv:
            raise TypeError("argv must be a non-empty list of strings (no shell is used)")
        self.argv = [str(a) for a in argv]
        self.timeout = timeout
        self.name = name or os.path.basename(self.argv[0])
        self.use_ids = use_ids
        self.cwd = cwd
        self.env = env
        self.stray_lines: collections.deque[str] = collections.deque(maxlen=200)
        self._next_id = 1
        self._commands: set[str] | None = None
        self._proc: subprocess.Popen | None = None
        self._finalizer: weakref.finalize | None = None
        self._start()

    # --- process lifetime ----------------------------------------------------
    def _start(self) -> None:
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                bufsize=0,
            )
        except OSError as exc:
            raise GTPEngineDied(f"cannot start {self.argv!r}: {exc}", None, "", self.name) from exc
        self._proc = proc
        self._lines: queue.Queue = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._readers = [
            threading.Thread(target=target, args=args, daemon=True)
            for target, args in (
                (_drain_stdout, (proc.stdout, self._lines)),
                (_drain_stderr, (proc.stderr, self._stderr)),
            )
        ]
        for reader in self._readers:
            reader.start()
        # If the client is dropped without close(), the engine must not outlive it.
        self._finalizer = weakref.finalize(self, _stop_process, proc, 1.0)
        self._commands = None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    @property
    def stderr_tail(self) -> str:
        """The engine's last lines of stderr (what usually explains a failure)."""
        return "\n".join(self._stderr)

    def close(self, grace: float = 2.0) -> None:
        """Ask the engine to ``quit``; terminate, then kill, if it does not exit.

        Only stdin is closed here: the readers close stdout and stderr at end
        of file (see the module's docstring). A reader still waiting after
        ``grace`` (a grandchild of the engine holds the pipe) is left to end
        on its own; it is a daemon thread.
        """
        proc = self._proc
        if proc is None:
            return
        self._proc = None
        if proc.poll() is None:
            try:
                proc.stdin.write(b"quit\n")
                proc.stdin.flush()
                proc.wait(grace)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        _stop_process(proc, grace)
        with contextlib.suppress(OSError):
            proc.stdin.close()
        for reader in self._readers:
            reader.join(grace)
        if self._finalizer is not None:
            self._finalizer.detach()

    def restart(self) -> None:
        """Stop the engine (if running) and start a fresh one with the same argv."""
        self.close()
        self._start()

    def __enter__(self) -> GTPClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self.alive else "stopped"
        return f"GTPClient({self.name!r}, {state})"

    # --- commands --------------------------------------------------------------
    def send(self, command: str, timeout: float | None = None) -> str:
        """Send one command and return the text of its ``=`` answer.

        Raises :class:`GTPError` on a ``?`` answer, :class:`GTPTimeout` or
        :class:`GTPEngineDied` when no answer comes (the engine is then stopped).
        """
        return self.send_many([command], timeout)[0]

    def send_many(self, commands: Iterable[str], timeout: float | None = None) -> list[str]:
        """Several commands pipelined (written before their answers are read).

        Much faster than one round trip each for long query runs (``is_legal``
        on every point). All answers are read even if one fails, so the stream
        stays in step; then the first ``?`` answer raises :class:`GTPError`.
        ``timeout`` applies to each answer.
        """
        if self._proc is None:
            raise GTPEngineDied("engine is not running (closed, or failed earlier)", None,
                                self.stderr_tail, self.name)
        wait = self.timeout if timeout is None else timeout
        prepared = [self._prepare(c) for c in commands]
        answers: list[tuple[bool, str]] = []
        start = 0
        while start < len(prepared):
            stop, size = start, 0
            while stop < len(prepared) and (stop == start or size < PIPELINE_BYTES):
                size += len(prepared[stop][2])
                stop += 1
            batch = prepared[start:stop]
            self._write(b"".join(line for _, _, line in batch), batch[0][1])
            for ident, text, _ in batch:
                answers.append(self._read_answer(ident, text, wait))
            start = stop
        for (_, text, _), (ok, answer) in zip(prepared, answers, strict=True):
            if not ok:
                raise GTPError(text, answer, self.name)
        return [answer for _, answer in answers]

    def known_command(self, command: str) -> bool:
        """Whether the engine lists ``command`` (cached per process)."""
        return command in self.list_commands()

    def list_commands(self) -> set[str]:
        if self._commands is None:
            self._commands = set(self.send("list_commands").split())
        return self._commands

    # --- internals ---------------------------------------------------------------
    def _prepare(self, command: str) -> tuple[int | None, str, bytes]:
        text = command.strip()
        if not text or "\n" in text or "\r" in text:
            raise ValueError(f"a GTP command is one non-empty line, got {command!r}")
        ident, body = _split_id(text)
        if ident is None and self.use_ids:
            ident = self._next_id
            self._next_id += 1
            text = f"{ident} {body}"
        return ident, text, (text + "\n").encode()

    def _write(self, data: bytes, command: str) -> None:
        try:
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        except (OSError, ValueError) as exc:
            self._fail(GTPEngineDied, f"engine closed its input ({exc})", command)

    def _read_answer(self, ident: int | None, command: str, wait: float) -> tuple[bool, str]:
        deadline = time.monotonic() + wait
        lines: list[str] = []
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self._fail(GTPTimeout, f"no answer within {wait:g} s", command)
            if line is _EOF:
                self._fail(GTPEngineDied, self._exit_text(), command)
            if not lines:
                if line.strip() == "":
                    continue  # blank lines between responses
                if line[0] not in "=?":
                    self.stray_lines.append(line)
                    continue
                lines.append(line)
            elif line.strip() == "":
                break
            else:
                lines.append(line)
        try:
            ok, got_id, text = parse_response(lines)
        except ValueError as exc:
            self._fail(GTPEngineError, f"malformed answer ({exc})", command)
        if ident is not None and got_id != ident:
            self._fail(GTPEngineError, f"answer id {got_id} does not match command id {ident}",
                       command)
        return ok, text

    def _exit_text(self) -> str:
        proc = self._proc
        code = None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(1.0)
            # Give the stderr thread a moment to collect the last words.
            time.sleep(0.05)
        return "engine exited" + (f" with code {code}" if code is not None else "")

    def _fail(self, kind: type[GTPEngineError], what: str, command: str | None):
        """Stop the (unusable) engine and raise ``kind`` with its stderr tail."""
        proc = self._proc
        if proc is not None:
            _stop_process(proc, 1.0)
        time.sleep(0.02)
        tail = self.stderr_tail
        self.close(grace=0.5)
        raise kind(what, command, tail, self.name)


def find_gnugo() -> str | None:
    """Path of the GNU Go binary (``/usr/games/gnugo`` or ``gnugo`` on PATH), or None."""
    for path in GNUGO_PATHS:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which("gnugo")


def gnugo_command(
    level: int = 10,
    seed: int | None = None,
    chinese_rules: bool = True,
    capture_all_dead: bool = False,
    *,
    positional_superko: bool = False,
    extra: Sequence[str] = (),
) -> list[str]:
    """argv for GNU Go in GTP mode.

    Chinese (area) rules make its ``final_score`` comparable with Tromp-Taylor
    counts; ``capture_all_dead`` makes it remove dead stones before passing,
    so that a plain area count of the final position is the real result.
    GNU Go forbids suicide and, unless ``positional_superko``, uses simple ko.
    """
    path = find_gnugo()
    if path is None:
        raise FileNotFoundError(
            "GNU Go not found: looked for /usr/games/gnugo and 'gnugo' on PATH "
            "(install it with 'apt-get install gnugo', or run 'make gnugo')"
        )
    argv = [path, "--mode", "gtp", "--quiet", "--level", str(int(level))]
    if seed is not None:
        argv += ["--seed", str(int(seed))]
    if chinese_rules:
        argv.append("--chinese-rules")
    if capture_all_dead:
        argv.append("--capture-all-dead")
    if positional_superko:
        argv.append("--positional-superko")
    argv += list(extra)
    return argv
