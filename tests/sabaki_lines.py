"""Reading analysis lines the way Sabaki reads them, for the GTP analysis tests."""

from __future__ import annotations

import re

LZ_KEYS = {"move", "visits", "winrate", "prior", "lcb", "order", "pv"}
KATA_KEYS = LZ_KEYS | {"scoreLead", "scoreMean"}
VERTEX = re.compile(r"^(pass|[A-HJ-T]([1-9]|1[0-9]))$")


def sabaki_parse(line: str) -> tuple[list[dict], list[float] | None]:
    """Parse one analysis line as Sabaki does (``src/modules/enginesyncer``):
    split at ``info``, read key/value pairs, ``pv`` takes the rest; a
    trailing ``ownership`` block is a list of floats."""
    ownership = None
    if " ownership " in f" {line} ":
        line, _, tail = f" {line} ".partition(" ownership ")
        ownership = [float(x) for x in tail.split()]
    variations = []
    for chunk in line.split("info ")[1:]:
        words = chunk.split()
        entry: dict = {}
        i = 0
        while i < len(words):
            key = words[i]
            if key == "pv":
                entry["pv"] = words[i + 1 :]
                break
            entry[key] = words[i + 1]
            i += 2
        variations.append(entry)
    return variations, ownership


def sabaki_winrate(text: str) -> float:
    """A winrate in percent as Sabaki reads it (``enginesyncer.parseAnalysis``): a
    value with a decimal point is KataGo's 0..1, one without is Leela Zero's 0..10000."""
    return float(text) * 100 if "." in text else float(text) / 100
