"""Networks from outside the package: a researcher's factory joins every stage.

A *plugin reference* names a factory wherever a zoo name is accepted:

- ``my_nets:tiny_transformer``: function ``tiny_transformer`` of the
  importable module ``my_nets``;
- ``examples/my_nets.py:tiny_transformer``: the same from a file;
- ``tiny_transformer``: a name a plugin module registered with
  :func:`register_model` (``@harness.register_model("tiny_transformer")``).

Modules are imported only when the user names them: in a reference, in a
config's ``plugins`` list, with ``harness --plugin``, or in the
``HARNESS_PLUGINS`` environment variable (comma-separated), which the
harness sets when it loads plugins so that its worker processes load the same
ones. A model file never makes the harness import anything: a file whose
layers come from a plugin loads once that plugin is loaded, and is refused
with one line naming the class otherwise.

A factory is called as ``factory(board_size, input_planes, heads)`` (``heads``:
the outputs wanted, always policy and value first) and returns a
``keras.Model`` whose outputs are named as its layers: ``policy`` (B*B+1
logits), ``value`` (1, tanh for MSE or sigmoid for cross-entropy) and any of
``ownership`` (B*B) and ``score`` (1) it was asked for.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import math
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.config_io import setting

ENV = "HARNESS_PLUGINS"
Factory = Callable[..., object]

_REGISTERED: dict[str, Factory] = {}
_LOADED: set[str] = set()


class PluginError(ValueError):
    """A plugin that cannot be loaded or a factory whose model breaks the contract."""


def register_model(name: str) -> Callable[[Factory], Factory]:
    """Decorator: make ``name`` a model name for every stage, once the module
    is loaded as a plugin."""
    from harness.nets.names import FAMILY_WORDS

    def decorate(factory: Factory) -> Factory:
        if not name or ":" in name or "." in name or "/" in name:
            raise PluginError(f"plugin model name {name!r}: use letters, digits, - and _")
        if any(name == w for words in FAMILY_WORDS.values() for w in words):
            raise PluginError(f"plugin model name {name!r} is a zoo family word")
        known = _REGISTERED.get(name)
        if known is not None and _origin(known) != _origin(factory):
            raise PluginError(f"plugin model name {name!r} is already registered by "
                              f"{_origin(known)}")
        _REGISTERED[name] = factory
        return factory

    return decorate


def load_plugins(plugins: Iterable[str]) -> None:
    """Import each plugin (module name or ``.py`` file) once, and add it to
    ``HARNESS_PLUGINS`` so that processes the harness starts load it too."""
    wanted = [p.strip() for p in plugins if p and p.strip()]
    for plugin in wanted:
        if plugin not in _LOADED:
            _import(plugin)
            _LOADED.add(plugin)
    listed = [p for p in os.environ.get(ENV, "").split(",") if p]
    missing = [p for p in wanted if p not in listed]
    if missing:
        os.environ[ENV] = ",".join(listed + missing)


def load_env_plugins() -> None:
    """The plugins ``HARNESS_PLUGINS`` names (a worker process's parent's)."""
    load_plugins(os.environ.get(ENV, "").split(","))


@dataclass(frozen=True)
class PluginSettings:
    """The plugin modules a config's networks come from. The stage loads them
    (:func:`load_plugins`) before it reads a model name; reading a config
    never imports anything, so a run directory copied from elsewhere is safe
    to inspect."""

    plugins: tuple[str, ...] = setting(
        (), "plugin modules or .py files to load first (their registered models, and the "
        "layers their model files hold)", metavar="MODULE,...")


@dataclass(frozen=True)
class PluginSpec:
    """What the stages read from a model's spec, for a plugin network: its
    heads and value convention are known once it is built."""

    reference: str
    family: str = "plugin"
    heads: tuple[str, ...] = ("policy", "value")
    value_loss: str = "auto"
    value_weight: float = 1.0

    @property
    def name(self) -> str:
        return self.reference


def model_spec(name: str):
    """A zoo name's :class:`~harness.nets.names.ModelSpec`, or a plugin
    reference's :class:`PluginSpec` once its factory is found; ``ValueError``
    (one line) for anything else. Imports a plugin named here, never Keras."""
    from harness.nets.names import parse_model_name

    if isinstance(name, str) and is_plugin_reference(name):
        factory_of(name)
        return PluginSpec(name)
    return parse_model_name(name)


def directory_name(model: str) -> str:
    """A model name fit for a run directory: a zoo name as it is, a plugin
    reference without its folders (``examples/my_nets.py:tiny`` ->
    ``my_nets.py-tiny``)."""
    tail = model.replace("\\", "/").rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._-]+", "-", tail).strip("-.") or "model"


def is_plugin_reference(name: str) -> bool:
    """Whether ``name`` names a plugin factory rather than a zoo model."""
    load_env_plugins()
    return ":" in name or name in _REGISTERED


def factory_of(reference: str) -> Factory:
    """The factory a plugin reference names, importing its module if needed."""
    load_env_plugins()
    if reference in _REGISTERED:
        return _REGISTERED[reference]
    module_name, sep, function = reference.rpartition(":")
    if not sep or not module_name or not function.isidentifier():
        raise PluginError(f"bad plugin reference {reference!r}: write MODULE:FUNCTION, "
                          f"FILE.py:FUNCTION or a name a loaded plugin registered")
    module = _import(module_name)
    factory = getattr(module, function, None)
    if not callable(factory):
        raise PluginError(f"plugin {module_name!r} has no function {function!r}")
    return factory


def build_plugin_model(reference: str, board_size: int, input_planes: int,
                       heads: tuple[str, ...]):
    """Call the factory and check its model against the contract, with one
    line saying what is wrong."""
    import keras

    factory = factory_of(reference)
    try:
        model = factory(board_size, input_planes, heads)
    except PluginError:
        raise
    except Exception as exc:
        why = str(exc).splitlines()[0] if str(exc) else ""
        call = ("; it is called as FUNCTION(board_size, input_planes, heads)"
                if isinstance(exc, TypeError) else "")
        raise PluginError(f"plugin model {reference!r} failed to build "
                          f"({type(exc).__name__}: {why}){call}") from exc
    if not isinstance(model, keras.Model):
        raise PluginError(f"plugin model {reference!r} returned {type(model).__name__}, "
                          f"not a keras.Model")
    check_outputs(model, board_size, input_planes, heads, reference)
    model.plugin = reference
    return model


def check_outputs(model, board_size: int, input_planes: int, heads: Iterable[str],
                  reference: str) -> None:
    points = board_size * board_size
    wanted = {"policy": points + 1, "value": 1, "ownership": points, "score": 1,
              "reply": points + 1, "soft_policy": points + 1}
    shape = tuple(model.inputs[0].shape[1:]) if len(model.inputs) == 1 else None
    if shape != (board_size, board_size, input_planes):
        raise PluginError(f"plugin model {reference!r} must take one input of shape "
                          f"({board_size}, {board_size}, {input_planes}), got "
                          f"{[tuple(i.shape[1:]) for i in model.inputs]}")
    names = list(model.output_names)
    for head in ("policy", "value", *heads):
        if head not in names:
            raise PluginError(f"plugin model {reference!r} has no output {head!r} "
                              f"(its outputs: {', '.join(names)})")
    for head, output in zip(names, model.outputs, strict=True):
        size = math.prod(int(d) for d in output.shape[1:])
        if head in wanted and size != wanted[head]:
            raise PluginError(f"plugin model {reference!r}: output {head!r} has {size} values "
                              f"per position, expected {wanted[head]}")
    try:
        model.get_layer("value")
    except ValueError:
        raise PluginError(f"plugin model {reference!r}: name the layer that makes the value "
                          f"output 'value' (its activation, tanh or sigmoid, says how it "
                          f"trains)") from None


def _import(plugin: str):
    """A module by name, or a ``.py`` file as a module named after its path."""
    try:
        if plugin.endswith(".py"):
            path = Path(plugin).resolve()
            name = "harness_plugin_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
            if name in sys.modules:
                return sys.modules[name]
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None or not path.is_file():
                raise PluginError(f"plugin {plugin}: no such file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
            return module
        return importlib.import_module(plugin)
    except PluginError:
        raise
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise PluginError(f"cannot load plugin {plugin!r} ({type(exc).__name__}: {first})"
                          ) from exc


def _origin(factory: Factory) -> str:
    return f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', '?')}"
