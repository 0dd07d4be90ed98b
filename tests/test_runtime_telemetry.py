"""OpenVINO and ONNX Runtime phone home by default; the harness runs them with
telemetry off (issue 41, bullet 7).

Each run test failed before its fix: OpenVINO wrote ``~/intel/openvino_ga_cid``
and ``~/intel/stats`` and started a process to send them; ONNX Runtime wrote
a device id and an event store under ``~/.cache/Microsoft/DeveloperTools``.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openvino")
pytest.importorskip("onnx")

REPO = Path(__file__).resolve().parents[1]

# A two-node ONNX graph (policy: the input; value: its sum), saved to argv[1]
# (IR version 8: the oldest both runtimes read).
TINY_GRAPH = """
from onnx import TensorProto, helper, save

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 4])
policy = helper.make_tensor_value_info("policy", TensorProto.FLOAT, [None, 4])
value = helper.make_tensor_value_info("value", TensorProto.FLOAT, [None, 1])
axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
graph = helper.make_graph(
    [helper.make_node("Identity", ["x"], ["policy"]),
     helper.make_node("ReduceSum", ["x", "axes"], ["value"], keepdims=1)],
    "tiny", [x], [policy, value], initializer=[axes])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
save(model, sys.argv[1])
"""

# A run of the OpenVINO runtime on that graph, counting the
# processes started (OpenVINO's telemetry posts from a multiprocessing.Process).
PROBE = """
import multiprocessing, sys
import numpy as np

started = []
real_start = multiprocessing.Process.start
def start(self):
    started.append(self)
    return real_start(self)
multiprocessing.Process.start = start

""" + TINY_GRAPH + """

from harness.search.runtime import openvino_forward
_, values = openvino_forward(sys.argv[1])(np.ones((2, 4), np.float32))
print(values.tolist(), len(started))
"""


def test_running_openvino_writes_nothing_under_home_and_starts_no_process(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for name in ("CI", "TF_BUILD", "JENKINS_URL"):  # what the telemetry takes for a CI job
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "tiny.onnx")], env=env,
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[4.0,", "4.0]", "0"]  # it ran, and no process was started
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == []


ORT_PROBE = """
import sys
import numpy as np

""" + TINY_GRAPH + """

from harness.search.runtime import onnx_forward
_, values = onnx_forward(sys.argv[1])(np.ones((2, 4), np.float32))
print(values.tolist())
"""


def test_running_onnx_runtime_writes_no_device_id_under_home(tmp_path):
    pytest.importorskip("onnxruntime")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    for name in ("CI", "TF_BUILD", "JENKINS_URL", "ORT_DISABLE_TELEMETRY"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", ORT_PROBE, str(tmp_path / "tiny.onnx")],
                          env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[4.0,", "4.0]"]
    assert [p for p in home.rglob("*") if "Microsoft" in p.parts] == []


def _imports(node: ast.AST, module: str) -> bool:
    names = ([a.name for a in node.names] if isinstance(node, ast.Import)
             else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
    return any(n == module or n.startswith(module + ".") for n in names)


def _imports_of(path: Path, module: str) -> set[str]:
    """``file:function`` of every import of ``module`` (or a submodule) in ``path``."""
    tree = ast.parse(path.read_text())
    where = {id(n): "<module>" for n in ast.walk(tree) if _imports(n, module)}
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for n in ast.walk(function):
                if id(n) in where and where[id(n)] == "<module>":
                    where[id(n)] = function.name  # the outermost function holding it
    return {f"{path.relative_to(REPO).as_posix()}:{name}" for name in where.values()}


@pytest.mark.parametrize("module", ["openvino", "onnxruntime"])
def test_each_runtime_is_imported_only_where_its_telemetry_is_turned_off(module):
    imports = {i for path in (REPO / "harness").rglob("*.py") for i in _imports_of(path, module)}
    assert imports == {f"harness/search/runtime.py:import_{module}"}
