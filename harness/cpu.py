"""What this CPU runs natively, read from ``/proc/cpuinfo``.

Machines differ between sessions (some have AMX or AVX-512 BF16, some only
AVX2), so a fast setting for one is never a fixed default: ``precision =
"auto"`` resolves here, per machine. bfloat16 pays only where the CPU has
bfloat16 instructions (AMX tiles or AVX-512 BF16: a0.small trains 1.3x
faster under ``mixed_bfloat16`` on an AVX-512 BF16 machine); elsewhere it is
emulated and slower than float32.
"""

from __future__ import annotations

import platform
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16"})
PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """The feature flags of the first CPU in ``cpuinfo`` (the text of
    ``/proc/cpuinfo``; read from the machine when None). Empty where there
    is no such file (not Linux)."""
    if cpuinfo is None:
        try:
            cpuinfo = CPUINFO.read_text()
        except OSError:
            return frozenset()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def native_precision(flags: frozenset[str]) -> str:
    """``mixed_bfloat16`` where the CPU computes in bfloat16, else ``float32``."""
    return "mixed_bfloat16" if flags & BF16_FLAGS else "float32"


def resolve_precision(name: str, flags: frozenset[str] | None = None) -> str:
    """The Keras dtype policy for a configured precision: ``auto`` becomes
    this machine's native one, any other name stays as it is."""
    if name != "auto":
        return name
    return native_precision(cpu_flags() if flags is None else flags)


def cpu_name(cpuinfo: str | None = None) -> str:
    """The CPU's model name (``model name`` in ``/proc/cpuinfo``), for a
    report's header; the platform's processor string elsewhere."""
    if cpuinfo is None:
        try:
            cpuinfo = CPUINFO.read_text()
        except OSError:
            cpuinfo = ""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name":
            return value.strip()
    return platform.processor() or "unknown"
