"""``harness gtp --model M`` as a GUI runs it: a subprocess fed over pipes,
``lz-analyze`` and ``kata-analyze`` streaming until the next command, every
line checked as Sabaki parses it. Slow: the subprocess starts TensorFlow.

Run as a script to write the two transcripts of the closing note::

    python tests/test_gtp_analysis_subprocess.py /tmp/gtp-analysis
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
from sabaki_lines import KATA_KEYS, LZ_KEYS, sabaki_parse  # noqa: E402

SETUP = ["boardsize 9", "clear_board", "komi 7.5", "play b e5", "play w c3"]


def headed_model(path: Path) -> Path:
    """A 9x9 zoo network with ownership and score heads (random weights)."""
    from harness.features import get_encoder
    from harness.nets import build_model, save_model

    return save_model(build_model("a0.tiny.own.score", 9, get_encoder("agz17").planes, seed=5),
                      path)


class Session:
    """A ``harness gtp`` subprocess and the exact bytes exchanged with it."""

    def __init__(self, model: Path, playouts: int = 64):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness", "gtp", "--model", str(model),
             "--playouts", str(playouts)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, bufsize=1,
        )
        self.transcript: list[str] = []

    def send(self, command: str) -> None:
        self.transcript.append(f"> {command}")
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def line(self) -> str:
        text = self.proc.stdout.readline()
        if not text:
            raise AssertionError("harness gtp closed its output")
        self.transcript.append("< " + text.rstrip("\n"))
        return text

    def answer(self) -> str:
        """One ordinary answer, up to its blank line."""
        lines = []
        while (text := self.line()) != "\n":
            lines.append(text)
        return "".join(lines)

    def analyze(self, command: str, lines: int) -> list[str]:
        """Start an analysis, read ``lines`` info lines, interrupt it with
        ``name`` and read on to the end of both answers."""
        self.send(command)
        assert self.line() == "=\n"
        infos = [self.line() for _ in range(lines)]
        self.send("name")
        while (text := self.line()) != "\n":  # lines already in flight, then the end
            infos.append(text)
        assert self.answer() == "= harness\n"
        return [i.rstrip("\n") for i in infos]

    def close(self) -> str:
        self.send("quit")
        self.answer()
        self.proc.wait(timeout=60)
        return "\n".join(self.transcript) + "\n"


def run_exchange(model: Path) -> tuple[str, list[str], str, list[str]]:
    """(lz transcript, lz info lines, kata transcript, kata info lines)."""
    lz = Session(model)
    for command in SETUP:
        lz.send(command)
        assert lz.answer() == "= \n"
    lz_lines = lz.analyze("lz-analyze 50", 3)
    lz_text = lz.close()
    kata = Session(model)
    for command in SETUP:
        kata.send(command)
        kata.answer()
    kata_lines = kata.analyze("kata-analyze b 50 ownership true", 2)
    kata_text = kata.close()
    return lz_text, lz_lines, kata_text, kata_lines


@pytest.mark.slow
def test_harness_gtp_streams_lz_and_kata_analysis_to_a_scripted_client(tmp_path):
    model = headed_model(tmp_path / "headed.keras")
    lz_text, lz_lines, kata_text, kata_lines = run_exchange(model)
    for line in lz_lines:
        variations, ownership = sabaki_parse(line)
        assert variations and ownership is None
        assert all(set(v) == LZ_KEYS for v in variations)
        assert all(0 <= int(v["winrate"]) <= 10000 for v in variations)
    for line in kata_lines:
        variations, ownership = sabaki_parse(line)
        assert variations and all(set(v) == KATA_KEYS for v in variations)
        assert len(ownership) == 81
    assert "> lz-analyze 50" in lz_text and "> kata-analyze b 50 ownership true" in kata_text


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    lz_text, _, kata_text, _ = run_exchange(headed_model(out / "headed.keras"))
    (out / "lz-analyze.txt").write_text(lz_text)
    (out / "kata-analyze.txt").write_text(kata_text)
    print(out / "lz-analyze.txt", out / "kata-analyze.txt")


@pytest.mark.parametrize("inference", [
    "auto",  # the default: every runtime is exported, checked and timed
    pytest.param("keras", marks=pytest.mark.slow),
    pytest.param("onnx", marks=pytest.mark.slow),
    pytest.param("openvino", marks=pytest.mark.slow),
])
def test_harness_gtp_exits_after_quit_while_a_gui_keeps_its_stdin_open(tmp_path, inference):
    """A GUI sends ``quit`` and waits for the engine to exit, its end of the
    pipe still open (issue 41: with OpenVINO's telemetry child the engine never
    exited)."""
    import time

    model = headed_model(tmp_path / "net.keras")
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "gtp", "--model", str(model), "--playouts", "8",
         "--inference", inference],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(b"boardsize 9\ngenmove b\n")
        proc.stdin.flush()
        assert proc.stdout.readline().startswith(b"=")  # boardsize
        proc.stdout.readline()
        assert proc.stdout.readline().startswith(b"= ")  # a move: the network ran
        proc.stdout.readline()
        asked = time.monotonic()
        proc.stdin.write(b"quit\n")
        proc.stdin.flush()  # and stdin stays open, as in a GUI
        assert proc.wait(timeout=60) == 0
        print(f"{inference}: exited {time.monotonic() - asked:.2f} s after quit")
        assert proc.stdout.read() == b"= \n\n"
    finally:
        proc.kill()
        proc.wait()
