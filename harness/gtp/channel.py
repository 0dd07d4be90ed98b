"""Standard input read on a background thread, so a long answer can notice
that the controller has already sent its next command.

``lz-analyze`` and ``kata-analyze`` print ``info`` lines until the next
command arrives; that needs a way to ask "is there input?" without consuming
it and without blocking, which plain ``for line in stdin`` cannot give (and
``select`` does not work on pipes under Windows or on Python file objects
with buffered data). A reader thread moves each line into a buffer; the
engine asks :meth:`InputChannel.waiting` between search steps.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import TextIO


class InputChannel:
    """Lines of ``stdin`` (``None`` once it is closed) and answers to ``stdout``."""

    def __init__(self, stdin: TextIO, stdout: TextIO):
        self._stdout = stdout
        self._buffer: deque[str | None] = deque()
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stdin,), daemon=True)
        self._thread.start()

    def _read(self, stdin: TextIO) -> None:
        try:
            for line in stdin:
                self._put(line)
        finally:
            self._put(None)

    def _put(self, line: str | None) -> None:
        with self._ready:
            self._buffer.append(line)
            self._ready.notify_all()

    def next_line(self) -> str | None:
        """The next input line, waiting for it; None at the end of input."""
        with self._ready:
            self._ready.wait_for(lambda: bool(self._buffer))
            return self._buffer.popleft()

    def waiting(self, timeout: float = 0.0) -> bool:
        """True as soon as input (or its end) is waiting, False after ``timeout`` seconds."""
        with self._ready:
            return self._ready.wait_for(lambda: bool(self._buffer), max(timeout, 0.0))

    def write(self, text: str) -> None:
        self._stdout.write(text)
        self._stdout.flush()
