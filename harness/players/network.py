"""Loading a trained network for play, and finding which encoder feeds it.

Two encoders share an input width (``cazenave21`` and ``nogo`` both have 21
planes), so the width alone cannot say which planes a network was trained
on. The encoder is taken, in order, from the player spec (``,encoder=NAME``),
from the model file's own record (:class:`harness.nets.ModelInfo`, written
by every trainer), and for files written before models described themselves
from the ``config.json`` of the run beside the checkpoint, else from the width
when only one encoder fits (``nogo`` for NoGo games, ``cazenave21`` for Go
when the width is 21).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.game.position import Game
from harness.nets.info import ModelInfo

MAX_CONFIG_BYTES = 1 << 20  # a run's config.json is ~2 KB


@dataclass
class Network:
    model: object  # keras.Model
    path: Path
    size: int
    planes: int
    info: ModelInfo | None  # the file's record; None for older files
    run_encoder: str = ""  # older files: the encoder in the run's config.json beside it

    def encoder_for(self, rules: str, explicit: str | None = None) -> str:
        """The encoder name for this network in a game with ``rules``."""
        from harness.features import encoder_names, get_encoder

        recorded = self.info.encoder if self.info else ""
        if explicit and recorded and explicit != recorded:
            raise ValueError(f"{self.path}: the network was trained on encoder {recorded}, "
                             f"the spec asks for {explicit}")
        name = explicit or recorded or self.run_encoder
        if not name:
            fitting = [n for n in encoder_names() if get_encoder(n).planes == self.planes]
            if len(fitting) > 1 and {"nogo", "cazenave21"} <= set(fitting):
                fitting = ["nogo"] if rules == "nogo" else ["cazenave21"]
            if len(fitting) != 1:
                raise ValueError(
                    f"{self.path}: cannot tell the encoder of a {self.planes}-plane network "
                    f"(candidates: {', '.join(fitting) or 'none'}); add ,encoder=NAME to the spec"
                )
            name = fitting[0]
        planes = get_encoder(name).planes
        if planes != self.planes:
            raise ValueError(
                f"{self.path}: the network takes {self.planes} planes, "
                f"encoder {name} gives {planes}"
            )
        return name

    def check_game(self, game: Game) -> None:
        if game.size != self.size:
            raise ValueError(
                f"{self.path}: the network plays {self.size}x{self.size}, "
                f"the game is {game.size}x{game.size}"
            )


def load_network(path: str | Path) -> Network:
    """Load ``path`` safely (``harness.nets.load_model``) and read its shape."""
    from harness.nets import load_model
    from harness.search.runtime import mark_frozen

    path = Path(path)
    model = load_model(path)  # an older file without a record warns here, once
    mark_frozen(model, path)  # players never change weights: exported runtimes may run it
    shape = tuple(model.input_shape)
    if len(shape) != 4 or shape[1] != shape[2] or shape[1] is None:
        raise ValueError(f"{path}: expected square board inputs (N, B, B, C), got {shape}")
    info = model.model_info
    return Network(model, path, int(shape[1]), int(shape[3]), info,
                   "" if info else _run_encoder(path))


def _run_encoder(path: Path) -> str:
    """The ``encoder`` key of the run config beside an older checkpoint, if any
    (read as plain JSON: players do not import the training stage)."""
    config = path.parent / "config.json"
    try:
        if not config.is_file() or config.stat().st_size > MAX_CONFIG_BYTES:
            return ""
        encoder = json.loads(config.read_text()).get("encoder", "")
    except (OSError, ValueError, AttributeError):  # a foreign or broken config: the width
        return ""
    return encoder if isinstance(encoder, str) else ""


def softmax_choice(policy: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """Greedy at temperature 0, else a draw from ``policy ** (1 / T)`` (renormalised)."""
    if temperature <= 0:
        return int(np.argmax(policy))
    logs = np.where(policy > 0, np.log(np.maximum(policy, 1e-30)) / temperature, -np.inf)
    weights = np.exp(logs - logs.max())
    return int(rng.choice(policy.size, p=weights / weights.sum()))
