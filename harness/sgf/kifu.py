"""The TYGEM / Tom line format: kifu files of one game a line, joined with an index.

The most used public Go collection (yenw's computer-go-dataset) ships its
1.5M TYGEM and 51k Tom 9-dan games not as SGF but as:

- kifu files by month, one game a line, ``ID<TAB>;B[pd];W[dd];...`` (a pass
  is ``B[]``); TYGEM's zipped (``Kifu/2011-01.zip`` holding ``2011-01``),
  Tom's plain (``kifu/2003-09``);
- an index, one tab-separated line a game: TYGEM's per year
  (``index/Kifu2011.zip`` holding ``Kifu2011.index``: id, date, white name,
  white English name, white nation, black name, black English name, black
  nation, result, moves, time settings), Tom's one file (``Kifu.index``: id,
  date, white, black, komi, result, moves, time settings).

The moves of a game carry nothing but moves, so each line is joined with its
index row by id. Decisions, from reading the real files:

- The index's move count counts stones, not passes: the 163 TYGEM games of
  2011-01..06 with a pass all agree once passes are left out, none agrees
  with them in. A count that still differs (208 TYGEM games, 2 Tom games of
  the samples: truncated or over-long lines) rejects the game, since then it
  is unknown which moves the result belongs to.
- TYGEM games are 9-dan vs 9-dan at komi 6.5 under Japanese rules, as the
  collection documents; Tom's komi is its index column, its rules are not
  documented (left unknown). Both collections are 9-dan only.
- Players are the account names (TYGEM's English column; the display name
  and nation are kept in ``properties``); the date loses its one-letter
  prefix (``C2011.01.01 00:01`` -> ``2011-01-01 00:01``); ``Offline`` (the
  loser left) is a forfeit; time settings ``30/3 10m`` (byo-yomi seconds /
  periods, main time) become ``TM``/``OT`` properties.
- A game with no index row is kept with an unknown result (ingest's
  ``--no-result`` then masks its value or rejects it); its komi is the
  collection's when the index says which collection it is.
- Memory: one index is held as ``{id: rest of the line as bytes}`` (about
  27 MB for the 142,671 rows of TYGEM 2011) and parsed per game at the join;
  kifu files are streamed line by line. TYGEM indexes are per year, so a
  reader never holds more than the year it reads (see :class:`IndexFinder`).
"""

from __future__ import annotations

import functools
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.game.geometry import BLACK, WHITE
from harness.game.result import UNKNOWN, GameResult, parse_result
from harness.sgf.record import GameRecord, guarded_record, looks_binary
from harness.sgf.streams import CorruptStream, StreamTooLarge, bounded, read_chunks

SIZE = 19
TYGEM_KOMI = 6.5
TYGEM_RULES = "Japanese"
RANK = "9d"  # both collections are 9-dan games only

_MONTH = re.compile(r"^(\d{4})-\d{2}$")  # a kifu file: 2011-01 (or 2011-01.zip)
# Index files: ``Kifu2011.zip`` (the year makes a zip of SGF files called ``kifu.zip``
# safe from being taken for one), ``Kifu2011.index``, ``Kifu.index``.
_INDEX = re.compile(r"^kifu\d{4}\.zip$|\.index$", re.IGNORECASE)
_YEAR = re.compile(r"(\d{4})")
_TIME = re.compile(r"^\s*(\d+)/(\d+)\s+(\d+)m\s*$")

# Fields after the id: TYGEM has 10, Tom 7.
TYGEM_FIELDS = 10
TOM_FIELDS = 7


def is_kifu_name(name: str) -> bool:
    """A kifu file by its name (compression suffixes already removed): ``2011-01``."""
    return _MONTH.match(name) is not None


def is_index_name(name: str) -> bool:
    """An index file or zip: ``Kifu2011.zip``, ``Kifu2011.index``, ``Kifu.index``."""
    return _INDEX.search(name) is not None


def may_hold_kifu(name: str) -> bool:
    """A file that is a month of kifu, plain or zipped: its reader needs the index."""
    low = name.lower()
    return is_kifu_name(low.removesuffix(".zip")) or is_kifu_name(low.split(".")[0])


# --- the index ---------------------------------------------------------------------


@dataclass(frozen=True)
class IndexRow:
    """What an index line says about one game, in the record's terms."""

    date: str
    black: str
    white: str
    result: GameResult
    stones: int  # moves that place a stone (passes are not counted)
    komi: float
    rules: str | None
    properties: dict[str, str] = field(default_factory=dict)


class IndexRowError(ValueError):
    """An index line that cannot be read; the message is the reject reason."""


@dataclass
class KifuIndex:
    """Index rows by game id, kept as raw bytes (parsed at the join, see the module doc)."""

    rows: dict[int, bytes] = field(default_factory=dict)
    fields: int = 0  # fields after the id of the first row: which collection

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def default_komi(self) -> float:
        """Komi of a game the index lacks: the collection's, when it documents one."""
        return TYGEM_KOMI if self.fields == TYGEM_FIELDS else 0.0

    def add_lines(self, lines: Iterator[bytes]) -> None:
        rows = self.rows
        for line in lines:
            if line is None:  # longer than any index line can be: not a row
                continue
            gid, tab, rest = line.partition(b"\t")
            if tab and gid.isdigit():
                rows[int(gid)] = rest.rstrip(b"\r")
                if not self.fields:
                    self.fields = rest.count(b"\t") + 1

    def get(self, gid: int) -> IndexRow | None:
        """The row of game ``gid``, None if absent; raises :class:`IndexRowError` if unreadable."""
        raw = self.rows.get(gid)
        return None if raw is None else parse_index_row(raw)


def parse_index_row(raw: bytes) -> IndexRow:
    """One index line after its id (TYGEM's 10 fields or Tom's 7)."""
    cells = raw.decode("utf-8", "replace").split("\t")
    if len(cells) == TYGEM_FIELDS:
        date, w_native, white, w_nation, b_native, black, b_nation, result, moves, time = cells
        komi, rules = TYGEM_KOMI, TYGEM_RULES
        properties = {
            "white_name": w_native,
            "white_nation": w_nation,
            "black_name": b_native,
            "black_nation": b_nation,
        }
        white, black = white or w_native, black or b_native
    elif len(cells) == TOM_FIELDS:
        date, white, black, komi_text, result, moves, time = cells
        komi, rules, properties = _komi(komi_text), None, {}
    else:
        raise IndexRowError(f"malformed index row: {len(cells) + 1} fields")
    if not moves.strip().isdigit():
        raise IndexRowError(f"malformed index row: move count {moves[:20]!r}")
    properties.update(_time_properties(time))
    return IndexRow(
        date=_date(date),
        black=black.strip(),
        white=white.strip(),
        result=read_kifu_result(result),
        stones=int(moves),
        komi=komi,
        rules=rules,
        properties=properties,
    )


def _komi(text: str) -> float:
    try:
        komi = float(text)
    except ValueError:
        raise IndexRowError(f"malformed index row: komi {text[:20]!r}") from None
    if not -SIZE * SIZE <= komi <= SIZE * SIZE:  # also refuses nan and inf
        raise IndexRowError(f"malformed index row: komi {text[:20]!r}")
    return komi


def _date(text: str) -> str:
    """``C2011.01.01 00:01`` -> ``2011-01-01 00:01`` (the letter is a server tag)."""
    text = text.strip()
    if text[:1].isalpha():
        text = text[1:]
    day, _, clock = text.partition(" ")
    return " ".join(filter(None, (day.replace(".", "-"), clock)))


def read_kifu_result(text: str) -> GameResult:
    """``parse_result`` plus ``Offline``: the loser left the game, a forfeit."""
    winner, plus, how = text.strip().partition("+")
    if plus and how.strip().lower() == "offline" and winner.upper() in ("B", "W"):
        return GameResult(BLACK if winner.upper() == "B" else WHITE, "forfeit")
    return parse_result(text)


def _time_properties(text: str) -> dict[str, str]:
    """``30/3 10m`` (30 s byo-yomi, 3 periods, 10 min main) -> SGF ``TM`` and ``OT``."""
    match = _TIME.match(text)
    if not match:
        return {"OT": text.strip()} if text.strip() else {}
    seconds, periods, minutes = match.groups()
    return {"TM": str(int(minutes) * 60), "OT": f"{int(periods)}x{int(seconds)} byo-yomi"}


@dataclass(frozen=True)
class IndexFinder:
    """The index files that may hold the rows of a kifu file, found next to it.

    A kifu file ``ROOT/Kifu/2011-01.zip`` or ``ROOT/kifu/2003-09`` finds
    ``ROOT/index/Kifu2011.zip`` or ``ROOT/Kifu.index``: index files in its
    folder or the one above, or in an ``index`` folder of either; for a
    symbolic link, next to the link first, then next to the file it names.
    """

    files: tuple[str, ...] = ()

    @classmethod
    def near(cls, path: Path) -> IndexFinder:
        places = (path.parent, path.parent.parent)
        if path.is_symlink():
            target = path.resolve()
            places += (target.parent, target.parent.parent)
        for folder in places:
            found = sorted(
                str(p)
                for place in (folder, *_index_dirs(folder))
                for p in _files(place)
                if is_index_name(p.name)
            )
            if found:
                return cls(tuple(found))
        return cls()

    def index_for(self, month: str, max_bytes: int) -> KifuIndex:
        """The rows for a month (``2011-01``): its year's index files and yearless ones."""
        year = _MONTH.match(month)
        wanted = tuple(f for f in self.files if _covers(Path(f).name, year and year.group(1)))
        return load_index(tuple((f, *_stamp(f)) for f in wanted), max_bytes)


NO_INDEX = IndexFinder()


def _index_dirs(folder: Path) -> list[Path]:
    return [p for p in _files(folder, dirs=True) if p.name.lower() == "index"]


def _files(folder: Path, dirs: bool = False) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if (p.is_dir() if dirs else p.is_file())]
    except OSError:
        return []


def _covers(index_name: str, year: str | None) -> bool:
    found = _YEAR.search(index_name)
    return found is None or year is None or found.group(1) == year


def _stamp(path: str) -> tuple[int, int]:
    stat = Path(path).stat()
    return stat.st_size, stat.st_mtime_ns


@functools.lru_cache(maxsize=1)
def load_index(files: tuple[tuple[str, int, int], ...], max_bytes: int) -> KifuIndex:
    """The rows of these index files (``(path, size, mtime)``, so a changed file reloads).

    One index is cached: months are read in order, so a year's index is read
    once for its twelve months and dropped when the next year starts.
    """
    index = KifuIndex()
    for path, _size, _mtime in files:
        for chunks in _index_streams(Path(path), max_bytes):
            index.add_lines(iter_lines(chunks, max_bytes))
    return index


def _index_streams(path: Path, max_bytes: int) -> Iterator[Iterator[bytes]]:
    """The byte streams of one index file (a zip's ``.index`` members), bounded."""
    with open(path, "rb") as raw:
        if path.suffix.lower() != ".zip":
            yield bounded(read_chunks(raw), max_bytes)
            return
        with zipfile.ZipFile(raw) as archive:
            for info in archive.infolist():
                if info.filename.lower().endswith(".index") and info.file_size <= max_bytes:
                    with archive.open(info) as member:
                        yield bounded(read_chunks(member), max_bytes)


# --- kifu lines ---------------------------------------------------------------------


BOM = b"\xef\xbb\xbf"  # UTF-8 byte-order mark


def iter_lines(chunks: Iterator[bytes], max_line: int) -> Iterator[bytes | None]:
    """Lines of a chunked stream (without their ends); an over-long line comes back
    as ``None`` once its end is found, the bytes in between never kept.

    A UTF-8 byte-order mark opening the stream (Windows editors write one) is
    dropped: left on, it glues to the first game id, which then is no number.
    """
    pending = b""
    skipping = False
    start = True
    for chunk in chunks:
        lines = chunk.split(b"\n")
        lines[0] = pending + lines[0]
        if start and (len(lines) > 1 or len(lines[0]) >= len(BOM)):
            lines[0], start = lines[0].removeprefix(BOM), False
        pending = lines.pop()
        for line in lines:
            if skipping:
                skipping = False
                yield None
            else:
                yield line
        if len(pending) > max_line:
            pending, skipping = b"", True
    if skipping:
        yield None
    elif pending:
        yield pending


def _move_table() -> dict[bytes, tuple[int, int]]:
    """``B[pd]`` -> (BLACK, point): one lookup a move; ``B[]`` and ``B[tt]`` are passes."""
    table = {}
    for letter, color in ((b"B", BLACK), (b"W", WHITE)):
        for r in range(SIZE):
            for c in range(SIZE):
                table[letter + b"[" + bytes((97 + c, 97 + r)) + b"]"] = (color, r * SIZE + c)
        table[letter + b"[]"] = table[letter + b"[tt]"] = (color, SIZE * SIZE)
    return table


MOVES = _move_table()


class KifuLineError(ValueError):
    """A kifu line that is not one game; the message is the reject reason."""


def parse_line(line: bytes) -> tuple[int, list[tuple[int, int]]]:
    """(game id, moves) of one kifu line; raises :class:`KifuLineError`."""
    gid, tab, text = line.rstrip(b"\r").partition(b"\t")
    if not tab:
        raise KifuLineError("malformed kifu line: no TAB after the game id")
    if not gid.strip().isdigit():
        raise KifuLineError(f"malformed kifu line: game id {gid[:20].decode('latin-1')!r}")
    tokens = text.strip().split(b";")
    if tokens[0]:
        raise KifuLineError("malformed kifu line: the moves do not start with ';'")
    try:
        moves = [MOVES[t] for t in tokens[1:]]
    except KeyError:
        bad = next(i for i, t in enumerate(tokens[1:]) if t not in MOVES)
        raise KifuLineError(f"malformed kifu line: bad move at move {bad + 1}") from None
    return int(gid), moves


def record_from_line(line: bytes, source: str, number: int, index: KifuIndex) -> GameRecord:
    """One game of a kifu file joined with its index row; problems set ``reject``."""
    record = GameRecord(source, number, size=SIZE)
    try:
        gid, record.moves = parse_line(line)
        record.properties["GN"] = str(gid)
        row = index.get(gid)
    except (KifuLineError, IndexRowError) as exc:
        record.reject = str(exc)
        return record
    if row is None:
        record.komi, record.result = index.default_komi, UNKNOWN
        if index.fields == TYGEM_FIELDS:
            record.rules = TYGEM_RULES
        record.properties["index"] = "no row"
        return record
    stones = sum(1 for _, p in record.moves if p != SIZE * SIZE)
    if stones != row.stones:
        passes = len(record.moves) - stones
        record.reject = (
            f"move count differs from the index: {stones} stones on the line"
            f" (+{passes} passes), {row.stones} in the index"
        )
    record.komi, record.rules, record.result = row.komi, row.rules, row.result
    record.black, record.white, record.date = row.black, row.white, row.date
    record.black_rank = record.white_rank = RANK
    record.properties.update(row.properties)
    return record


def kifu_records(
    chunks: Iterator[bytes],
    label: str,
    name: str,
    finder: IndexFinder,
    max_game_bytes: int,
    max_index_bytes: int,
) -> Iterator[GameRecord]:
    """Every game of one kifu stream (a file or an archive member), in line order.

    Blank lines are not games; every other line is one record, rejected with
    a reason when it cannot be a game. A stream that fails (corrupt, too
    large) or an unreadable index ends the file with one rejected record,
    the games before it kept.
    """
    try:
        index = finder.index_for(Path(name).name.split(".")[0], max_index_bytes)
    except (OSError, zipfile.BadZipFile, CorruptStream, StreamTooLarge) as exc:
        yield GameRecord(label, 0, reject=f"unreadable kifu index: {exc}")
        return
    number = 0
    try:
        first = next(chunks, b"")
        if looks_binary(first):
            yield GameRecord(label, 0, reject="binary data, not a kifu file")
            return
        for line in iter_lines(_prepend(first, chunks), max_game_bytes):
            if line is None:
                reason = f"malformed kifu line: longer than {max_game_bytes:,} bytes"
                yield GameRecord(label, number, reject=reason)
            elif line.strip():
                yield guarded_record(label, number, record_from_line, line, label, number, index)
            else:
                continue
            number += 1
    except (CorruptStream, StreamTooLarge) as exc:
        yield GameRecord(label, number, reject=str(exc))
        return
    if number == 0:
        yield GameRecord(label, 0, reject="empty kifu file")


def _prepend(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


__all__ = [
    "IndexFinder",
    "IndexRow",
    "KifuIndex",
    "is_index_name",
    "is_kifu_name",
    "kifu_records",
    "load_index",
    "may_hold_kifu",
    "parse_index_row",
    "parse_line",
    "read_kifu_result",
    "record_from_line",
]
