"""Decoding SGF text properties (names, comments) from whatever bytes servers wrote.

Only text is decoded: moves and numbers are ASCII and never go through here,
so a bad byte in a player's name cannot cost a game.

Order of attempts for one value:

1. pure ASCII: as is;
2. the charset the file declares in ``CA[]``, if it is one SGF files carry
   (:data:`CHARSETS`, under any alias Python knows: ``latin1``, ``sjis``,
   ``windows-1252``...; GB2312 and GBK read as their superset GB18030). A
   file does not choose any other Python codec (``CA[unicode-escape]`` would
   interpret the data as escapes): those are read as unknown;
3. UTF-8;
4. UTF-8 whose only fault is a character cut at the end — Fox cuts names at a
   byte limit in the middle of a character (12 of the 4,029 development files)
   and would otherwise turn into GB18030 mojibake;
5. GB18030 (which covers GB2312 and GBK);
6. UTF-8 with a replacement character, if only a few bytes are bad;
7. Latin-1, which accepts any byte.
"""

from __future__ import annotations

import codecs
from functools import lru_cache

# Names that codecs knows but that should be read as a superset.
_SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030", "euc_cn": "gb18030", "ascii": "utf-8"}
# The charsets a CA[] may choose (codecs' canonical names, after _SUPERSETS):
# Unicode, Western, Chinese, Korean, Japanese and Cyrillic text encodings.
CHARSETS = frozenset({
    "utf-8", "iso8859-1", "cp1252", "iso8859-15",
    "gb18030", "big5", "big5hkscs",
    "euc_kr", "cp949",
    "shift_jis", "cp932", "euc_jp", "iso2022_jp",
    "cp1251", "koi8-r",
})


@lru_cache(maxsize=64)
def normalise_charset(declared: str | None) -> str | None:
    """Python codec name for an SGF ``CA`` value, or None if unknown, absent or
    not one of :data:`CHARSETS`."""
    if not declared or "\0" in declared or len(declared) > 64:
        return None  # codecs.lookup raises ValueError on a NUL; no codec name is that long
    try:
        name = codecs.lookup(declared.strip()).name
    except (LookupError, ValueError):
        return None
    name = _SUPERSETS.get(name.replace("-", "_"), name)
    return name if name in CHARSETS else None


def decode_text(raw: bytes, charset: str | None = None) -> str:
    """Best reading of a text value; ``charset`` is already normalised."""
    if raw.isascii():
        return raw.decode("ascii")
    if charset and charset != "utf-8":
        try:
            return raw.decode(charset)
        except (ValueError, LookupError):  # UnicodeError too: idna, punycode
            pass
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and exc.start >= len(raw) - 3:
            try:
                return raw[: exc.start].decode("utf-8")
            except UnicodeDecodeError:
                pass
    try:
        return raw.decode("gb18030")
    except UnicodeDecodeError:
        pass
    lenient = raw.decode("utf-8", errors="replace")
    if lenient.count("\ufffd") <= max(1, len(raw) // 16):
        return lenient
    return raw.decode("latin-1")
