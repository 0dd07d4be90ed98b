"""precision = "auto": bfloat16 only where the CPU has bfloat16 instructions (harness.cpu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cpu import cpu_flags, native_precision, resolve_precision
from harness.train.config import TrainConfig

# Shortened /proc/cpuinfo texts of real CPUs (the flags that matter kept).
AVX2_ONLY = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B12
flags\t\t: fpu sse2 avx avx2 fma bmi2 sha_ni
"""
COOPER_LAKE = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8380H CPU
flags\t\t: fpu avx2 avx512f avx512bw avx512_vnni avx512_bf16
"""
SAPPHIRE_RAPIDS = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile amx_int8
"""
ARM = """processor\t: 0
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics bf16
"""


@pytest.mark.parametrize("text, expected", [
    (AVX2_ONLY, "float32"),
    (COOPER_LAKE, "mixed_bfloat16"),
    (SAPPHIRE_RAPIDS, "mixed_bfloat16"),
    (ARM, "float32"),  # Arm's bf16 is not what oneDNN's bfloat16 kernels use here
    ("", "float32"),
])
def test_native_precision_follows_the_cpu_flags(text, expected):
    assert native_precision(cpu_flags(text)) == expected
    assert resolve_precision("auto", cpu_flags(text)) == expected


def test_flags_are_whole_words():
    flags = cpu_flags(AVX2_ONLY)
    assert "avx2" in flags and "avx" in flags and "avx512f" not in flags


def test_an_explicit_precision_is_kept_on_any_cpu():
    for name in ("float32", "mixed_bfloat16", "mixed_float16"):
        assert resolve_precision(name, cpu_flags(SAPPHIRE_RAPIDS)) == name
        assert resolve_precision(name, cpu_flags(AVX2_ONLY)) == name


def test_training_defaults_to_auto_and_builds_under_this_cpus_policy():
    import keras

    from harness.train.preflight import dtype_policy

    assert TrainConfig(model="a0.tiny", data="x.h5").precision == "auto"
    words = set(Path("/proc/cpuinfo").read_text().split()) if Path("/proc/cpuinfo").exists() \
        else set()
    expected = "mixed_bfloat16" if words & {"amx_bf16", "avx512_bf16"} else "float32"
    before = keras.config.dtype_policy().name
    with dtype_policy("auto"):
        assert keras.config.dtype_policy().name == expected
    assert keras.config.dtype_policy().name == before
