"""Bounded, chunked decompression of gzip, bzip2 and xz streams.

The standard library's file wrappers either read a whole member or give no
way to stop a decompression bomb before it has produced its output. Here
every decompressor call asks for at most ``OUT_CHUNK`` bytes, the running
total is checked against a limit, and the three formats share one loop.
Concatenated streams (``pigz``/``pbzip2`` output, ``xz`` multi-stream files)
are followed, zero padding between them skipped. Failures are one of two
exceptions with a message fit for a reject reason.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Iterable, Iterator

OUT_CHUNK = 1 << 20

MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz"}
SUFFIX_KIND = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".lzma": "xz"}


class StreamTooLarge(ValueError):
    """More data than the caller allowed."""


class CorruptStream(ValueError):
    """Unreadable or truncated compressed data."""


def sniff(head: bytes) -> str | None:
    """Compression format from the first bytes, None for plain data."""
    for magic, kind in MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


class _Inflater:
    """One stream of one format; ``feed`` yields output of at most OUT_CHUNK bytes."""

    def __init__(self, kind: str):
        self.kind = kind
        if kind == "gzip":
            self._d = zlib.decompressobj(wbits=47)  # gzip or zlib header
        elif kind == "bz2":
            self._d = bz2.BZ2Decompressor()
        else:
            self._d = lzma.LZMADecompressor()
        self.fed = False

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def unused(self) -> bytes:
        return self._d.unused_data

    def feed(self, data: bytes) -> Iterator[bytes]:
        self.fed = self.fed or bool(data)
        d = self._d
        if self.kind == "gzip":
            while data and not d.eof:
                out = d.decompress(data, OUT_CHUNK)
                data = d.unconsumed_tail
                if out:
                    yield out
        else:
            out = d.decompress(data, OUT_CHUNK)
            if out:
                yield out
            while not d.eof and not d.needs_input:
                out = d.decompress(b"", OUT_CHUNK)
                if out:
                    yield out


def inflate(raw_chunks: Iterable[bytes], kind: str) -> Iterator[bytes]:
    """Decompressed chunks of a (possibly multi-stream) compressed byte stream."""
    inflater = _Inflater(kind)
    try:
        for raw in raw_chunks:
            data = raw
            while data:
                if inflater.eof:
                    data = data.lstrip(b"\0")  # padding between streams
                    if not data:
                        break
                    inflater = _Inflater(kind)
                yield from inflater.feed(data)
                data = inflater.unused if inflater.eof else b""
    except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
        raise CorruptStream(f"corrupt {kind} data: {exc}") from None
    if inflater.fed and not inflater.eof:
        raise CorruptStream(f"truncated {kind} data: the stream ends early")


def read_chunks(fileobj, chunk_bytes: int = 1 << 20) -> Iterator[bytes]:
    """Raw chunks of a binary file object; read errors become CorruptStream."""
    while True:
        try:
            chunk = fileobj.read(chunk_bytes)
        except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
            raise CorruptStream(f"read error: {exc}") from None
        except Exception as exc:  # zipfile.BadZipFile (CRC), tarfile errors
            raise CorruptStream(f"read error: {type(exc).__name__}: {exc}") from None
        if not chunk:
            return
        yield chunk


def bounded(chunks: Iterable[bytes], limit: int) -> Iterator[bytes]:
    """Pass chunks through until ``limit`` bytes, then raise StreamTooLarge."""
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > limit:
            keep = len(chunk) - (total - limit)
            if keep > 0:
                yield chunk[:keep]
            raise StreamTooLarge(f"data inflates past {limit:,} bytes (stopped reading)")
        yield chunk
