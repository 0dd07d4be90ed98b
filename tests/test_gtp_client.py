"""The GTP client against a scripted fake engine (every failure mode) and GNU Go."""

from __future__ import annotations

import sys
import textwrap
import time

import pytest

from harness.players import gtp_client as gtp
from harness.players.gtp_client import (
    GTPClient,
    GTPEngineDied,
    GTPEngineError,
    GTPError,
    GTPTimeout,
    gnugo_command,
    parse_response,
)

FAKE_ENGINE = textwrap.dedent(
    r'''
    """A GTP engine that misbehaves on request."""
    import signal, sys, time

    if "--ignore-term" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if "--orphan" in sys.argv:  # a grandchild that keeps our stdout and stderr open
        import subprocess
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])
    out = sys.stdout
    out.write("Fake engine 1.0 starting (a banner on stdout)\n")
    out.flush()

    def answer(ident, text, ok=True, end="\n"):
        out.write(("=" if ok else "?") + ident + " " + text + end + end)
        out.flush()

    for raw in sys.stdin:
        line = raw.split("#")[0].strip()
        if not line:
            continue
        words = line.split()
        ident = words.pop(0) if words[0].isdigit() else ""
        name, args = words[0], words[1:]
        if name == "quit":
            if "--ignore-quit" in sys.argv:
                continue
            answer(ident, "")
            break
        elif name == "name":
            answer(ident, "fake")
        elif name == "list_commands":
            answer(ident, "\n".join(["name", "echo", "quit", "list_commands"]))
        elif name == "echo":
            answer(ident, " ".join(args))
        elif name == "multi":
            answer(ident, "first\nsecond\nthird")
        elif name == "crlf":
            answer(ident, "windows", end="\r\n")
        elif name == "fail":
            answer(ident, "not today", ok=False)
        elif name == "hang":
            time.sleep(3600)
        elif name == "die":
            sys.stderr.write("fatal: out of cheese\n")
            sys.stderr.flush()
            sys.exit(3)
        elif name == "badid":
            answer("999", "wrong id")
        elif name == "chatter":
            for i in range(int(args[0])):
                sys.stderr.write(f"debug line {i} " + "x" * 100 + "\n")
            answer(ident, "done")
        elif name == "big":
            answer(ident, "\n".join(f"row {i}" for i in range(int(args[0]))))
        else:
            answer(ident, "unknown command", ok=False)
    '''
)


@pytest.fixture(scope="module")
def fake_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("engine") / "fake_gtp.py"
    path.write_text(FAKE_ENGINE)
    return str(path)


@pytest.fixture
def fake(fake_path):
    with GTPClient([sys.executable, fake_path], timeout=10.0, name="fake") as client:
        yield client


def test_parse_response_with_and_without_id():
    assert parse_response(["= C3"]) == (True, None, "C3")
    assert parse_response(["=12 C3"]) == (True, 12, "C3")
    assert parse_response(["?7 illegal move"]) == (False, 7, "illegal move")
    assert parse_response(["=", ]) == (True, None, "")
    assert parse_response(["= a", "b", "c"]) == (True, None, "a\nb\nc")
    with pytest.raises(ValueError):
        parse_response(["hello"])


def test_answers_are_returned_and_banners_set_aside(fake):
    assert fake.send("name") == "fake"
    assert fake.send("echo hello   world") == "hello world"
    assert any("banner" in line for line in fake.stray_lines)


def test_commands_with_ids_get_their_answers(fake):
    assert fake.send("12 echo with id") == "with id"


def test_automatic_ids_are_checked(fake_path):
    with GTPClient([sys.executable, fake_path], timeout=10.0, use_ids=True) as client:
        assert client.send("echo numbered") == "numbered"
        assert client.send("echo again") == "again"
        with pytest.raises(GTPEngineError, match="does not match"):
            client.send("badid")
        assert not client.alive  # out of step: stopped


def test_multi_line_answers_and_carriage_returns(fake):
    assert fake.send("multi") == "first\nsecond\nthird"
    assert fake.send("crlf") == "windows"
    assert fake.send("big 2000").splitlines()[-1] == "row 1999"
    assert fake.send("name") == "fake"  # still in step afterwards


def test_refusal_raises_gtp_error_and_the_engine_lives_on(fake):
    with pytest.raises(GTPError) as info:
        fake.send("fail")
    assert info.value.message == "not today"
    assert info.value.command == "fail"
    assert fake.alive
    assert fake.send("name") == "fake"


def test_pipelined_commands_stay_in_order_and_in_step(fake):
    answers = fake.send_many([f"echo {i}" for i in range(3000)])
    assert answers == [str(i) for i in range(3000)]
    with pytest.raises(GTPError, match="not today"):
        fake.send_many(["echo a", "fail", "echo b"])
    assert fake.send("echo after") == "after"


def test_known_command(fake):
    assert fake.known_command("echo")
    assert not fake.known_command("genmove")


def test_bad_commands_are_refused_before_sending(fake):
    for bad in ("", "   ", "play b C3\ngenmove w", "name\rgenmove b"):
        with pytest.raises(ValueError):
            fake.send(bad)
    assert fake.send("name") == "fake"


def test_timeout_stops_the_engine_and_restart_brings_it_back(fake):
    start = time.monotonic()
    with pytest.raises(GTPTimeout, match=r"no answer within 0\.5 s"):
        fake.send("hang", timeout=0.5)
    assert time.monotonic() - start < 5
    assert not fake.alive
    with pytest.raises(GTPEngineDied, match="not running"):
        fake.send("name")
    fake.restart()
    assert fake.alive and fake.send("name") == "fake"


def test_engine_death_reports_exit_code_and_stderr(fake):
    with pytest.raises(GTPEngineDied) as info:
        fake.send("die")
    message = str(info.value)
    assert "code 3" in message
    assert "out of cheese" in message and "out of cheese" in info.value.stderr_tail
    assert not fake.alive


def test_a_chatty_stderr_never_blocks_the_engine(fake):
    assert fake.send("chatter 3000", timeout=20) == "done"  # ~300 KB, beyond a pipe buffer
    assert fake.stderr_tail.count("\n") == gtp.STDERR_TAIL_LINES - 1


def test_close_quits_politely(fake_path):
    client = GTPClient([sys.executable, fake_path])
    proc = client._proc
    client.close()
    assert proc.returncode == 0
    client.close()  # idempotent


def test_close_kills_an_engine_that_ignores_quit_and_sigterm(fake_path):
    client = GTPClient([sys.executable, fake_path, "--ignore-quit", "--ignore-term"])
    assert client.send("name") == "fake"
    proc = client._proc
    start = time.monotonic()
    client.close(grace=0.5)
    assert proc.returncode is not None
    assert time.monotonic() - start < 5


def test_only_the_reader_closes_a_pipe_so_its_descriptor_is_never_reused_under_it(fake_path):
    # The engine exits but a grandchild still holds its stdout: the reader is
    # blocked in read. Closing the pipe from close() would free the descriptor
    # number for the next engine's pipe while the old reader can still read it
    # (the cause of first-command timeouts under load).
    client = GTPClient([sys.executable, fake_path, "--orphan"])
    assert client.send("name") == "fake"
    proc, readers = client._proc, client._readers
    client.close(grace=0.3)
    assert proc.returncode == 0
    assert not proc.stdout.closed and not proc.stderr.closed
    for reader in readers:
        reader.join(10)  # the grandchild exits after 1.5 s: end of file
    assert proc.stdout.closed and proc.stderr.closed


def test_argv_must_be_a_list_and_the_program_must_exist():
    with pytest.raises(TypeError):
        GTPClient("gnugo --mode gtp")
    with pytest.raises(GTPEngineDied, match="cannot start"):
        GTPClient(["/nonexistent/engine"])


def test_gnugo_command_options(monkeypatch):
    monkeypatch.setattr(gtp, "find_gnugo", lambda: "/opt/gnugo")
    argv = gnugo_command(level=3, seed=5, capture_all_dead=True, positional_superko=True)
    assert argv[:3] == ["/opt/gnugo", "--mode", "gtp"]
    assert argv[argv.index("--level") + 1] == "3"
    assert argv[argv.index("--seed") + 1] == "5"
    for flag in ("--chinese-rules", "--capture-all-dead", "--positional-superko"):
        assert flag in argv
    assert "--chinese-rules" not in gnugo_command(chinese_rules=False)


def test_gnugo_command_says_clearly_when_gnugo_is_missing(monkeypatch):
    monkeypatch.setattr(gtp, "GNUGO_PATHS", ("/nonexistent/gnugo",))
    monkeypatch.setenv("PATH", "/nonexistent")
    assert gtp.find_gnugo() is None
    with pytest.raises(FileNotFoundError, match="GNU Go not found"):
        gnugo_command()


@pytest.mark.gnugo
def test_gnugo_over_gtp(gnugo):
    """Reference: GNU Go 3.8 itself."""
    assert gnugo.send("protocol_version") == "2"
    assert gnugo.send("name") == "GNU Go"
    gnugo.send_many(["boardsize 9", "clear_board", "komi 7.5"])
    # White C9 in atari on the top edge; Black takes it.
    gnugo.send_many(["play b B9", "play w C9", "play b D9", "play w J1", "play b C8"])
    assert gnugo.send("captures black") == "1"  # stones captured *by* Black
    assert gnugo.send("captures white") == "0"
    with pytest.raises(GTPError, match="illegal move"):
        gnugo.send("play w C9")  # suicide
    assert gnugo.send("is_legal w C9") == "0"
    assert gnugo.known_command("final_score")
