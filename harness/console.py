"""What a long command writes on its console: quiet start-up, progress that
suits the reader, and a closing one-line summary.

- TensorFlow's native start-up lines on a machine without a GPU (``Could not
  find cuda drivers``, ``failed call to cuInit ... (303)``, oneDNN notices)
  look like failures and are not. They are written by C++ straight to file
  descriptor 2 before Python can configure anything, so
  :func:`quiet_native_noise` routes descriptor 2 through a filter thread that
  drops exactly those lines and passes everything else on.
  ``--verbose`` or ``HARNESS_VERBOSE=1`` keeps them.
- :func:`progress` is a tqdm bar on a terminal and, in a log file or CI, a
  plain line every ``HARNESS_PROGRESS_SECONDS`` (default 30) seconds and one
  at the end, instead of thousands of carriage-return redraws on one line.
- :func:`summary` prints the closing line of a command.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import sys
import threading
import time
import warnings
from typing import TextIO

VERBOSE_ENV = "HARNESS_VERBOSE"
TERMINAL_ENV = "HARNESS_STDERR_TTY"  # remembered before descriptor 2 becomes a pipe
INTERVAL_ENV = "HARNESS_PROGRESS_SECONDS"

# Native lines that say nothing is wrong on a CPU-only machine.
NOISE = re.compile(
    r"All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|Could not find cuda drivers on your machine"
    r"|failed call to cuInit"
    r"|oneDNN custom operations are on"
    r"|Unable to register cu(DNN|FFT|BLAS) factory"
    r"|computation_placer\.cc.*Computation placer already registered"
    r"|TF-TRT Warning: Could not find TensorRT"
    r"|This TensorFlow binary is optimized to use available CPU instructions"
    r"|To enable the following instructions: .* in other operations, rebuild TensorFlow"
    r"|cuda_executor\.cc.*could not open file to read NUMA node"
)


# Python warnings from libraries that say nothing about the run: Keras imports
# tf2onnx's shim, which probes ``np.object`` on every start (message prefixes,
# as ``-W`` and ``PYTHONWARNINGS`` match them).
PYTHON_NOISE = (("In the future `np.object` will be defined", FutureWarning),)


def verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0")


def is_noise(line: str) -> bool:
    """Whether ``line`` is one of the harmless native start-up lines."""
    return NOISE.search(line) is not None


def stderr_is_terminal() -> bool:
    """Whether the user watches stderr live (decided before any filtering)."""
    remembered = os.environ.get(TERMINAL_ENV)
    if remembered is not None:
        return remembered == "1"
    try:
        return os.isatty(2)
    except OSError:
        return False


class _NoiseFilter:
    """Descriptor 2 replaced by a pipe; a thread copies it to the real stderr
    line by line, leaving out :data:`NOISE`. Partial lines holding a carriage
    return (a terminal progress bar) are passed on at once."""

    def __init__(self) -> None:
        self.original = os.dup(2)
        read_end, write_end = os.pipe()
        os.dup2(write_end, 2)
        os.close(write_end)
        self._read_end = read_end
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        pending = b""
        while chunk := os.read(self._read_end, 65536):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            out = [line + b"\n" for line in lines if not is_noise(line.decode("utf-8", "replace"))]
            if b"\r" in pending:  # a progress redraw: show it now
                cut = pending.rindex(b"\r") + 1
                out.append(pending[:cut])
                pending = pending[cut:]
            if out:
                os.write(self.original, b"".join(out))
        if pending and not is_noise(pending.decode("utf-8", "replace")):
            os.write(self.original, pending)
        os.close(self._read_end)

    def stop(self) -> None:
        """Put the real stderr back and let the thread drain the pipe."""
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        os.dup2(self.original, 2)  # closes the pipe's last write end: the thread sees EOF
        self._thread.join(timeout=2)


_filter: _NoiseFilter | None = None


def quiet_native_noise() -> None:
    """Filter TensorFlow's CPU-only start-up lines out of stderr for the rest
    of the process (and its children), unless verbose. Also asks TensorFlow
    itself for warnings and errors only. Call once, early."""
    global _filter
    os.environ.setdefault(TERMINAL_ENV, "1" if stderr_is_terminal() else "0")
    if verbose() or _filter is not None:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    quiet_python_noise()
    try:
        _filter = _NoiseFilter()
    except OSError:  # no descriptor 2 to filter (a daemon): nothing to hide
        return
    atexit.register(_filter.stop)


def restore_stderr() -> None:
    """End the filter of :func:`quiet_native_noise` now, every line it holds
    written: for a process about to leave without running its exit handlers."""
    global _filter
    if _filter is not None:
        _filter.stop()
        _filter = None


def quiet_python_noise() -> None:
    """Ignore :data:`PYTHON_NOISE` here and, through ``PYTHONWARNINGS``, in the
    worker processes this one starts."""
    entries = []
    for message, category in PYTHON_NOISE:
        warnings.filterwarnings("ignore", message=re.escape(message), category=category)
        entries.append(f"ignore:{message}:{category.__name__}")
    existing = os.environ.get("PYTHONWARNINGS", "")
    missing = [e for e in entries if e not in existing.split(",")]
    if missing:
        os.environ["PYTHONWARNINGS"] = ",".join([existing, *missing] if existing else missing)


def _interval() -> float:
    try:
        return max(float(os.environ.get(INTERVAL_ENV, "30")), 0.0)
    except ValueError:
        return 30.0


class LineProgress:
    """The part of tqdm's interface the harness uses, printed as plain lines:
    ``desc: n/total unit (p%), rate/s, postfix`` every interval and at close."""

    def __init__(
        self,
        total: float | None = None,
        desc: str = "",
        unit: str = "it",
        initial: float = 0,
        disable: bool = False,
        file: TextIO | None = None,
        interval: float | None = None,
        **_ignored,
    ):
        self.total = total
        self.desc = desc
        self.unit = unit.strip()
        self.n = initial
        self.disable = disable
        self._initial = initial
        self._file = file
        self._interval = _interval() if interval is None else interval
        self._started = time.monotonic()
        self._last = self._started
        self._postfix = ""
        self._closed = False

    def update(self, n: float = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self._last >= self._interval:
            self._last = now
            self._print()

    def set_postfix(self, ordered_dict=None, refresh: bool = True, **kwargs) -> None:
        items = dict(ordered_dict or {}, **kwargs)
        self._postfix = ", ".join(f"{k}={v}" for k, v in items.items())

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self._postfix = s

    def set_description(self, desc: str | None = None, refresh: bool = True) -> None:
        self.desc = desc or ""

    def refresh(self) -> None:
        pass

    def write(self, s: str) -> None:
        if not self.disable:
            print(s, file=self._file or sys.stderr, flush=True)

    def line(self) -> str:
        """The progress line as it would be printed now."""
        elapsed = max(time.monotonic() - self._started, 1e-9)
        done = f"{self.n:g}" if self.total is None else f"{self.n:g}/{self.total:g}"
        parts = [f"{self.desc}: {done} {self.unit}" if self.desc else f"{done} {self.unit}"]
        if self.total:
            parts[0] += f" ({100.0 * self.n / self.total:.0f}%)"
        parts.append(f"{(self.n - self._initial) / elapsed:.3g} {self.unit}/s")
        parts.append(f"{elapsed:.0f} s")
        if self._postfix:
            parts.append(self._postfix)
        return ", ".join(parts)

    def _print(self) -> None:
        if not self.disable:
            print(self.line(), file=self._file or sys.stderr, flush=True)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._print()

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress(*args, **kwargs):
    """A progress bar with tqdm's signature: tqdm itself on a terminal,
    :class:`LineProgress` otherwise."""
    if stderr_is_terminal():
        from tqdm import tqdm

        return tqdm(*args, **kwargs)
    return LineProgress(*args, **kwargs)


def summary(command: str, text: str, file: TextIO | None = None) -> None:
    """The one line a long command ends with: ``harness COMMAND: TEXT``."""
    print(f"harness {command}: {text}", file=file or sys.stderr, flush=True)
