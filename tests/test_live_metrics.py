"""Live metrics (harness.metrics): TensorBoard event files written without
TensorFlow and one JSON line per step, read back exactly, resumed without a
duplicate step, and switched off by the settings."""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest

from harness.metrics import (
    JSONL_NAME,
    MetricsLog,
    MetricsSettings,
    crc32c,
    event_bytes,
    event_files,
    masked_crc32c,
    read_event_scalars,
    read_jsonl,
    read_records,
    tfrecord,
)


def test_crc32c_known_values():
    # RFC 3720's check value of CRC-32C, and its iSCSI test vector of 32 zero bytes.
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(bytes(32)) == 0x8A9136AA
    assert crc32c(b"123456789") != zlib.crc32(b"123456789")  # not the zip polynomial


def test_masked_crc_is_tfrecords_rotation():
    crc = crc32c(b"abc")
    assert masked_crc32c(b"abc") == ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF)
                                     + 0xA282EAD8) & 0xFFFFFFFF


def test_tfrecord_framing_byte_for_byte():
    record = tfrecord(b"hello")
    assert record[:8] == struct.pack("<Q", 5)
    assert record[8:12] == struct.pack("<I", masked_crc32c(struct.pack("<Q", 5)))
    assert record[12:17] == b"hello"
    assert record[17:] == struct.pack("<I", masked_crc32c(b"hello"))


def test_event_is_the_protobuf_tensorflow_would_write():
    # Event{wall_time: 1.5, step: 300, summary{value{tag: "a", simple_value: 2}}}, by hand:
    expected = (b"\x09" + struct.pack("<d", 1.5) + b"\x10\xac\x02"
                + b"\x2a\x0a" + b"\x0a\x08" + b"\x0a\x01a" + b"\x15" + struct.pack("<f", 2.0))
    assert event_bytes(1.5, 300, scalars={"a": 2.0}) == expected


def test_tensorflows_protobuf_classes_parse_the_event():
    event_pb2 = pytest.importorskip("tensorboard.compat.proto.event_pb2")
    event = event_pb2.Event.FromString(event_bytes(12.25, 7, scalars={"x/y": -0.5, "z": 3.0}))
    assert (event.wall_time, event.step) == (12.25, 7)
    assert [(v.tag, v.simple_value) for v in event.summary.value] == [("x/y", -0.5), ("z", 3.0)]
    version = event_pb2.Event.FromString(event_bytes(1.0, file_version="brain.Event:2"))
    assert version.file_version == "brain.Event:2"


def test_a_damaged_record_is_refused_and_a_truncated_tail_ends_the_file(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(tfrecord(b"one") + tfrecord(b"two"))
    assert list(read_records(path)) == [b"one", b"two"]
    path.write_bytes(tfrecord(b"one") + tfrecord(b"two")[:-3])  # killed mid-write
    assert list(read_records(path)) == [b"one"]
    bad = bytearray(tfrecord(b"one"))
    bad[13] ^= 1
    path.write_bytes(bytes(bad))
    with pytest.raises(ValueError, match="bad data CRC"):
        list(read_records(path))


def _clock(start=1000.0):
    t = [start]

    def tick():
        t[0] += 1.0
        return t[0]
    return tick


def test_json_lines_round_trip(tmp_path):
    log = MetricsLog(tmp_path, clock=_clock())
    log.write(1, {"loss": 2.5, "games": 10, "best": "models/gen-0001.keras", "promoted": True,
                  "win_rate": float("nan"), "lr": np.float32(0.25), "ignored": [1, 2]})
    log.write(2, {"loss": 2.0, "games": 20})
    lines = (tmp_path / JSONL_NAME).read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"step": 1, "wall_time": 1001.0, "loss": 2.5, "games": 10,
         "best": "models/gen-0001.keras", "promoted": True, "win_rate": None, "lr": 0.25},
        {"step": 2, "wall_time": 1002.0, "loss": 2.0, "games": 20},
    ]
    assert read_jsonl(tmp_path / JSONL_NAME) == [json.loads(line) for line in lines]


def test_event_file_reads_back_exactly(tmp_path):
    log = MetricsLog(tmp_path, clock=_clock(), tags=lambda key: f"rl/{key}")
    log.write(1, {"loss": 2.5, "games": 10, "best": "x", "promoted": True,
                  "win_rate": float("nan")})
    log.write(3, {"loss": 0.1})
    (file,) = event_files(tmp_path)
    got = [(s.step, s.tag, s.value, s.wall_time) for s in read_event_scalars(file)]
    assert got == [(1, "rl/loss", 2.5, 1001.0), (1, "rl/games", 10.0, 1001.0),
                   (1, "rl/promoted", 1.0, 1001.0),
                   (3, "rl/loss", float(np.float32(0.1)), 1002.0)]


def test_tensorboards_own_reader_reads_the_scalars(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    log = MetricsLog(tmp_path, jsonl=False, clock=_clock(), tags=lambda k: f"selfplay/{k}")
    written = {1: {"games_per_hour": 1234.5, "loss": 3.25}, 2: {"games_per_hour": 2000.0,
                                                                 "loss": 2.75},
               5: {"loss": 1.125}}
    for step, values in written.items():
        log.write(step, values)
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert sorted(acc.Tags()["scalars"]) == ["selfplay/games_per_hour", "selfplay/loss"]
    loss = [(e.step, e.value) for e in acc.Scalars("selfplay/loss")]
    assert loss == [(1, 3.25), (2, 2.75), (5, 1.125)]
    rate = [(e.step, e.value, e.wall_time) for e in acc.Scalars("selfplay/games_per_hour")]
    assert rate == [(1, 1234.5, 1001.0), (2, 2000.0, 1002.0)]
    assert not (tmp_path / JSONL_NAME).exists()


def test_a_resumed_log_writes_no_step_twice(tmp_path):
    first = MetricsLog(tmp_path, clock=_clock())
    for step in (1, 2, 3):
        first.write(step, {"loss": float(step)})
    first.write(3, {"val_loss": 9.0})  # another figure at the same step is its own
    again = MetricsLog(tmp_path, clock=_clock(2000.0))  # the run resumed after a kill
    for step in (2, 3, 4):  # it redoes steps 2 and 3
        again.write(step, {"loss": 10.0 * step, "val_loss": 1.0})
    rows = read_jsonl(tmp_path / JSONL_NAME)
    assert [(r["step"], r.get("loss"), r.get("val_loss")) for r in rows] == [
        (1, 1.0, None), (2, 2.0, None), (3, 3.0, None), (3, None, 9.0), (4, 40.0, 1.0)]
    scalars = read_event_scalars(tmp_path)
    assert len(event_files(tmp_path)) == 2  # a resumed session writes its own file
    assert [(s.step, s.value) for s in scalars if s.tag == "loss"] == [
        (1, 1.0), (2, 2.0), (3, 3.0), (4, 40.0)]
    assert [(s.step, s.value) for s in scalars if s.tag == "val_loss"] == [(3, 9.0), (4, 1.0)]


def test_an_incomplete_last_line_is_cut_when_resumed(tmp_path):
    path = tmp_path / JSONL_NAME
    path.write_text('{"step": 1, "wall_time": 1.0, "loss": 1.0}\n{"step": 2, "wall_ti')
    assert [r["step"] for r in read_jsonl(path)] == [1]
    MetricsLog(tmp_path, tensorboard=False, clock=_clock()).write(2, {"loss": 0.5})
    assert [(r["step"], r["loss"]) for r in read_jsonl(path)] == [(1, 1.0), (2, 0.5)]
    assert path.read_text().count("\n") == 2


def test_the_switches_turn_either_writer_off(tmp_path):
    MetricsLog.of(tmp_path / "none", MetricsSettings(tensorboard=False,
                                                     metrics_jsonl=False)).write(1, {"a": 1})
    assert not (tmp_path / "none").exists()
    MetricsLog.of(tmp_path / "tb", MetricsSettings(metrics_jsonl=False)).write(1, {"a": 1})
    assert not (tmp_path / "tb" / JSONL_NAME).exists() and event_files(tmp_path / "tb")
    MetricsLog.of(tmp_path / "js", MetricsSettings(tensorboard=False)).write(1, {"a": 1})
    assert (tmp_path / "js" / JSONL_NAME).exists() and not event_files(tmp_path / "js")


def test_a_failing_disk_is_said_once_and_the_run_goes_on(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    log = MetricsLog(blocker / "run", clock=_clock())
    log.write(1, {"a": 1.0})
    log.write(2, {"a": 2.0})
    assert capsys.readouterr().err.count("writing metrics") == 1
