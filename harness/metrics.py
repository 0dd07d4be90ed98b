"""Live metrics of a long stage: TensorBoard scalars and one JSON line per step.

Every long stage (supervised training, self-play RL, gating, tournaments, the
frontier) hands its figures to one :class:`MetricsLog` as they arise, which
writes them, under the stage's folder, as

- ``metrics.jsonl``: one JSON object a line, ``{"step": N, "wall_time": T,
  ...}`` (KataGo's ``metrics_*.json``, OpenSpiel's ``learner.jsonl``), read by
  ``harness rl-report`` and the suite's report and by anyone with ``jq`` or
  pandas (``pd.read_json(path, lines=True)``);
- ``events.out.tfevents.*``: TensorBoard's event files, written here without
  TensorFlow (TFRecord framing with masked CRC32C around hand-encoded
  ``Event``/``Summary`` protocol buffers holding ``simple_value`` scalars), so
  they are written on every Keras backend; ``tensorboard --logdir models/``
  shows every run under ``models/`` side by side.

Both are appended a whole record at a time with one ``write`` and an
``fsync``, so a killed run leaves complete lines (an incomplete last line, as
a full disk could leave, is cut when the file is opened again). A resumed
run opens the same folder again and continues: a figure whose step is not
past the last one written under its name is skipped, in either file, so no
step is written twice. A failure to write (a full disk) is said once and
never stops the run. ``MetricsSettings`` turns either writer off.
"""

from __future__ import annotations

import json
import math
import os
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.config_io import setting

JSONL_NAME = "metrics.jsonl"
EVENTS_PREFIX = "events.out.tfevents."
FILE_VERSION = "brain.Event:2"
RESERVED = ("step", "wall_time")  # the keys every JSON line starts with


@dataclass(frozen=True)
class MetricsSettings:
    """The switches of a long stage's live metrics (inherited by every stage's config)."""

    tensorboard: bool = setting(
        True, "write TensorBoard scalars (events.out.tfevents.*) in the run's folder "
        "(no TensorFlow needed; view with tensorboard --logdir)")
    metrics_jsonl: bool = setting(
        True, "append one JSON line per step or generation to the run's metrics.jsonl")


# --- TFRecord framing ---------------------------------------------------------------------------


def _crc32c_table() -> tuple[int, ...]:
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the checksum TFRecord files carry."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC: rotated right by 15 bits plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(data: bytes) -> bytes:
    """One TFRecord: length, its masked CRC, the data, the data's masked CRC."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc32c(length)) + data
            + struct.pack("<I", masked_crc32c(data)))


def read_records(path: str | Path) -> Iterator[bytes]:
    """The records of a TFRecord file; a truncated last record (a killed writer)
    ends the file, a wrong CRC is a ``ValueError``."""
    data = Path(path).read_bytes()
    pos = 0
    while pos + 12 <= len(data):
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if header_crc != masked_crc32c(header):
            raise ValueError(f"{path}: bad length CRC at byte {pos}")
        end = pos + 12 + length
        if end + 4 > len(data):
            return
        record = data[pos + 12:end]
        (crc,) = struct.unpack("<I", data[end:end + 4])
        if crc != masked_crc32c(record):
            raise ValueError(f"{path}: bad data CRC at byte {pos}")
        yield record
        pos = end + 4


# --- protocol buffers (tensorflow/core/util/event.proto, framework/summary.proto) --------------


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1  # int64 two's complement, as protobuf encodes a negative number
    while True:
        bits = n & 0x7F
        n >>= 7
        if n:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _length_delimited(field: int, data: bytes) -> bytes:
    return _key(field, 2) + _varint(len(data)) + data


def event_bytes(wall_time: float, step: int = 0, *, file_version: str = "",
                scalars: Mapping[str, float] | None = None) -> bytes:
    """An ``Event``: wall_time (1, double), step (2, int64), file_version (3) or
    a ``Summary`` (5) of ``Summary.Value``s, each a tag (1) and a simple_value (2, float)."""
    out = _key(1, 1) + struct.pack("<d", wall_time) + _key(2, 0) + _varint(step)
    if file_version:
        out += _length_delimited(3, file_version.encode())
    if scalars:
        values = b"".join(
            _length_delimited(1, _length_delimited(1, tag.encode()) + _key(2, 5)
                              + struct.pack("<f", value))
            for tag, value in scalars.items())
        out += _length_delimited(5, values)
    return out


def _fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field, wire type, value) of a protocol buffer's top level."""
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _read_varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield field, wire, value


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


@dataclass(frozen=True)
class Scalar:
    step: int
    tag: str
    value: float
    wall_time: float


def read_event_scalars(path: str | Path) -> list[Scalar]:
    """The ``simple_value`` scalars of one event file, or of every event file
    in a folder (in file-name order), with their steps and wall times."""
    path = Path(path)
    files = event_files(path) if path.is_dir() else [path]
    out = []
    for file in files:
        for record in read_records(file):
            wall_time, step, summary = 0.0, 0, b""
            for field, wire, value in _fields(record):
                if field == 1 and wire == 1:
                    (wall_time,) = struct.unpack("<d", value)
                elif field == 2 and wire == 0:
                    step = value - (1 << 64) if value >= 1 << 63 else value
                elif field == 5 and wire == 2:
                    summary = value
            for field, _, entry in _fields(summary):
                if field != 1:
                    continue
                tag, number = "", None
                for f, wire, value in _fields(entry):
                    if f == 1:
                        tag = value.decode()
                    elif f == 2 and wire == 5:
                        (number,) = struct.unpack("<f", value)
                if number is not None:
                    out.append(Scalar(step, tag, number, wall_time))
    return out


def event_files(folder: str | Path) -> list[Path]:
    return sorted(p for p in Path(folder).glob(EVENTS_PREFIX + "*") if p.is_file())


# --- JSON lines ---------------------------------------------------------------------------------


def read_jsonl(path: str | Path) -> list[dict]:
    """Every complete line of a ``metrics.jsonl`` (an incomplete or unreadable
    line, as a crash mid-write could leave, is skipped); [] without the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    rows = []
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _json_value(value: Any) -> Any:
    """A value a JSON line carries: numbers (non-finite as null), text, booleans, None."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # a numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return _SKIP


def _scalar_value(value: Any) -> float | None:
    """What TensorBoard plots: a finite number (a boolean as 0 or 1)."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, bool | int | float) and math.isfinite(float(value)):
        return float(value)
    return None


_SKIP = object()


# --- the writer ---------------------------------------------------------------------------------


class MetricsLog:
    """The live metrics of one stage in ``folder``: :meth:`write` one step's
    figures at a time. Files are made on the first write, so a stage that
    writes nothing (or has both switches off) leaves nothing behind.

    ``tags`` names each key's TensorBoard tag (``"games_per_hour"`` ->
    ``"selfplay/games_per_hour"``, grouped by TensorBoard on the prefix); the
    JSON lines keep the keys themselves."""

    def __init__(self, folder: str | Path, *, tensorboard: bool = True, jsonl: bool = True,
                 tags: Callable[[str], str] | None = None, clock: Callable[[], float] = time.time):
        self.folder = Path(folder)
        self.tensorboard, self.jsonl = tensorboard, jsonl
        self._tags = tags or (lambda key: key)
        self._clock = clock
        self._events: Path | None = None
        self._jsonl_last: dict[str, int] | None = None
        self._events_last: dict[str, int] | None = None
        self._warned = False

    @classmethod
    def of(cls, folder: str | Path, settings: MetricsSettings | Any, **kwargs: Any) -> MetricsLog:
        """The log a config's :class:`MetricsSettings` switch on (both, where the
        config has no such settings)."""
        return cls(folder, tensorboard=getattr(settings, "tensorboard", True),
                   jsonl=getattr(settings, "metrics_jsonl", True), **kwargs)

    @property
    def enabled(self) -> bool:
        return self.tensorboard or self.jsonl

    @property
    def jsonl_path(self) -> Path:
        return self.folder / JSONL_NAME

    def write(self, step: int, values: Mapping[str, Any]) -> None:
        """One step's figures: a JSON line with every plain value (text too) and
        a TensorBoard scalar for every finite number, each figure only if its
        step is past the last written under its name."""
        if not self.enabled:
            return
        step = int(step)
        try:
            wall_time = self._clock()
            if self.jsonl:
                self._write_jsonl(step, wall_time, values)
            if self.tensorboard:
                self._write_events(step, wall_time, values)
        except OSError as e:  # a full disk: the run goes on, said once
            if not self._warned:
                print(f"warning: writing metrics in {self.folder} failed ({e}); "
                      "the run continues", file=sys.stderr)
                self._warned = True

    def last_steps(self) -> dict[str, int]:
        """The last step written under each JSON key (what a resumed run continues after)."""
        if self._jsonl_last is None:
            self._jsonl_last = self._read_jsonl_steps()
        return dict(self._jsonl_last)

    # --- JSON lines -----------------------------------------------------------------------------
    def _read_jsonl_steps(self) -> dict[str, int]:
        path = self.jsonl_path
        if path.exists():
            _cut_incomplete_line(path)
        last: dict[str, int] = {}
        for row in read_jsonl(path):
            step = row.get("step")
            if not isinstance(step, int):
                continue
            for key in row:
                if key not in RESERVED:
                    last[key] = max(step, last.get(key, step))
        return last

    def _write_jsonl(self, step: int, wall_time: float, values: Mapping[str, Any]) -> None:
        last = self._jsonl_last
        if last is None:
            last = self._jsonl_last = self._read_jsonl_steps()
        row: dict[str, Any] = {"step": step, "wall_time": round(wall_time, 3)}
        for key, value in values.items():
            if key in RESERVED or step <= last.get(key, -(1 << 63)):
                continue
            plain = _json_value(value)
            if plain is not _SKIP:
                row[key] = plain
        if len(row) == len(RESERVED):
            return
        line = json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n"
        _append(self.jsonl_path, line.encode("utf-8"))
        for key in row:
            if key not in RESERVED:
                last[key] = step

    # --- TensorBoard ----------------------------------------------------------------------------
    def _read_events_steps(self) -> dict[str, int]:
        last: dict[str, int] = {}
        for file in event_files(self.folder) if self.folder.is_dir() else []:
            try:
                scalars = read_event_scalars(file)
            except ValueError:  # a damaged file of another writer: its steps are unknown
                continue
            for s in scalars:
                last[s.tag] = max(s.step, last.get(s.tag, s.step))
        return last

    def _write_events(self, step: int, wall_time: float, values: Mapping[str, Any]) -> None:
        last = self._events_last
        if last is None:
            last = self._events_last = self._read_events_steps()
        scalars = {}
        for key, value in values.items():
            tag = self._tags(key)
            number = _scalar_value(value)
            if key in RESERVED or number is None or step <= last.get(tag, -(1 << 63)):
                continue
            scalars[tag] = number
        if not scalars:
            return
        if self._events is None:
            self._events = self._new_event_file(wall_time)
        _append(self._events, tfrecord(event_bytes(wall_time, step, scalars=scalars)))
        for tag in scalars:
            last[tag] = step

    def _new_event_file(self, wall_time: float) -> Path:
        """A new event file for this session, starting with the file-version
        event TensorBoard expects (a resumed run writes a second file beside the
        first; TensorBoard reads a folder's files in name order)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        stem = f"{EVENTS_PREFIX}{int(wall_time):010d}.{socket.gethostname()}.{os.getpid()}"
        n = 0
        while (path := self.folder / f"{stem}.{n}").exists():
            n += 1
        _append(path, tfrecord(event_bytes(wall_time, file_version=FILE_VERSION)))
        return path


def _append(path: Path, data: bytes) -> None:
    """Append ``data`` with one ``write`` and ``fsync``: whole records only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(f"short write to {path} ({written} of {len(data)} bytes)")
        os.fsync(fd)
    finally:
        os.close(fd)


def _cut_incomplete_line(path: Path) -> None:
    """Cut what follows the last newline (a line a killed writer left half-written)."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
