"""``harness gtp`` driven by Sabaki's own GTP client library, as the editor drives it.

``@sabaki/gtp``'s Controller keeps the engine's stdin open and, on stop(),
sends ``quit`` and kills the engine if it has not exited in time. Issue 41:
with the default inference runtime the engine used to hang after ``quit``
(OpenVINO's telemetry child held a lock), so Sabaki's stop never resolved
by itself. Skips without Node.js or ``tests/js/node_modules`` (``make sabaki``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "tests" / "js"
NET = ROOT / "docs" / "results" / "nets" / "go9-a0.4.32-gumbel-noeyes-gen205.keras"


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None or not (JS / "node_modules" / "@sabaki" / "gtp").is_dir():
        pytest.skip("Node.js or @sabaki/gtp missing ('make sabaki' installs it)")
    return path


@pytest.mark.parametrize("inference", ["auto", "keras"])
def test_sabaki_plays_a_move_and_stops_the_engine_without_killing_it(node, inference):
    engine = [sys.executable, "-m", "harness", "gtp", "--model", str(NET), "--playouts", "8",
              "--size", "9", "--inference", inference]
    commands = [["name"], ["boardsize", "9"], ["clear_board"], ["komi", "7.5"],
                ["play", "B", "E5"], ["genmove", "W"], ["showboard"]]
    done = subprocess.run([node, str(JS / "gtp_session.js"), json.dumps(engine),
                           json.dumps(commands), "10000"],
                          capture_output=True, text=True, timeout=240, cwd=ROOT, check=True)
    session = json.loads(done.stdout)
    responses = session["responses"]
    assert [r["error"] for r in responses] == [False] * len(commands)
    assert responses[0]["content"] == "harness"
    assert responses[5]["content"].strip().upper() not in ("", "E5")  # a vertex, or pass/resign
    # The engine left by itself after quit: Sabaki's stop resolved without
    # its kill (a killed engine ends with a signal), and well inside its timeout.
    assert (session["exitCode"], session["signal"]) == (0, None), session
    assert session["stopSeconds"] < 10
