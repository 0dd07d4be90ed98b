"""The named presets of the zoo: what ``harness models`` lists and configs may use.

Any name the grammar in :mod:`harness.nets.names` accepts builds; the presets
are the ones the papers name plus a ``small`` and a ``tiny`` variant per family
for CPU runs (``tiny`` is for smoke tests, ``small`` for quick experiments).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    name: str
    source: str  # paper and section the network comes from
    scale: str  # "tiny", "small" or "full" (full-size: slow on a CPU)


PRESETS: tuple[Preset, ...] = (
    Preset("a0.tiny", "AlphaGo Zero tower (tiny)", "tiny"),
    Preset("a0.small", "Cazenave V.A", "small"),
    Preset("a0.small.avg", "Cazenave V.A", "small"),
    Preset("a0.small.avg.conv.bin", "Cazenave V.A", "small"),
    Preset("a0.6.64", "AlphaZero tower, 6x64", "small"),
    Preset("a0.20.256", "Cazenave V.B, tables I-II", "full"),
    Preset("a0.40.256", "Cazenave V.B, table III", "full"),
    Preset("mobile.tiny", "Cazenave IV.B (tiny)", "tiny"),
    Preset("mobile.small", "Cazenave V.A", "small"),
    Preset("mobile.small.conv.avg.bin", "Cazenave V.A", "small"),
    Preset("mobile.small.conv.avg.bin.val4", "Cazenave V.A", "small"),
    Preset("mobile.avg.40.128.512", "Cazenave V.B", "full"),
    Preset("mobile.conv.avg.bin.40.128.512", "Cazenave V.B, table III", "full"),
    Preset("mobile.conv.avg.bin.60.128.512", "Cazenave V.B, tables I-III", "full"),
    Preset("resnet18.tiny", "MAO paper baseline (tiny)", "tiny"),
    Preset("resnet18.small", "MAO paper baseline (narrow)", "small"),
    Preset("resnet18", "MAO paper 1 and 3 (ResNet18 baseline)", "full"),
    Preset("mao.tiny", "MAO paper 2 (tiny)", "tiny"),
    Preset("mao.small", "MAO paper 2 (narrow)", "small"),
    Preset("mao", "MAO paper 2.2 (MAO network)", "full"),
    Preset("mao.paper", "MAO paper 2.2 as written (its value piece collapses)", "full"),
    Preset("mao.conv.tiny", "MAO trunk, fully convolutional policy (tiny)", "tiny"),
    Preset("mao.conv.small", "MAO trunk, fully convolutional policy", "small"),
    Preset("garb.tiny", "NoGoZero+ 3.2 (tiny)", "tiny"),
    Preset("garb.small", "NoGoZero+ 3.2 (narrow)", "small"),
    Preset("garb.5.32", "NoGoZero+ 3.2.3 (first curriculum stage)", "small"),
    Preset("garb.20.128", "NoGoZero+ 3.2.3 (final network)", "full"),
    Preset("qiqiao.tiny", "Qiqiao 4 (tiny)", "tiny"),
    Preset("qiqiao.small", "Qiqiao 4 (narrow)", "small"),
    Preset("qiqiao", "Qiqiao 4 (three-convolution net)", "full"),
    Preset("nbt.tiny", "KataGo nested-bottleneck blocks with global pooling (tiny)", "tiny"),
    Preset("nbt.small", "KataGo nested-bottleneck blocks with global pooling (narrow)", "small"),
    Preset("b6c96nbt.conv.avg", "KataGo b6c96 layout, nested-bottleneck blocks", "small"),
    Preset("b18c384nbt.conv.avg", "KataGo b18c384nbt (its heads: the harness's)", "full"),
    Preset("transformer.tiny", "Pre-norm transformer on per-point tokens (tiny)", "tiny"),
    Preset("transformer.small", "Pre-norm transformer on per-point tokens (narrow)", "small"),
)
_BY_NAME = {p.name: p for p in PRESETS}


def model_names() -> list[str]:
    """The preset names, in zoo order."""
    return [p.name for p in PRESETS]


def preset(name: str) -> Preset | None:
    return _BY_NAME.get(name)
