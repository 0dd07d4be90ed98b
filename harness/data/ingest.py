"""``harness ingest``: SGF sources -> one HDF5 positions file (+ report).

Flow: the parent reads records from the sources in a fixed order (files
sorted, archives member by member), workers replay them into position rows
(:func:`harness.data.convert.convert_record`), and the parent alone decides
kept / duplicate / rejected *in input order* and commits shards to the
journal. Results never depend on the number of workers, and a killed run
resumes from its last shard (see :mod:`harness.data.journal`). When every
record is done the final file is assembled, reports are written, and the
journal is removed.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from harness.data.assemble import DatasetAttributes, assemble
from harness.data.convert import ConvertSettings, convert_record
from harness.data.ingest_report import write_report
from harness.data.journal import Journal, JournalState, JournalWriter, partial_path
from harness.data.rows import RecordOutcome
from harness.data.settings import IngestConfig


class IngestError(ValueError):
    """An ingest that cannot start; the message is one line."""


@dataclass
class IngestResult:
    output: Path
    report: Path
    rejects: Path
    games: int
    positions: int
    bytes: int
    seconds: float
    records: int
    resumed_from: int = 0
    counts: dict = field(default_factory=dict)
    peak_rss_mib: float = 0.0  # this process's high-water mark
    peak_worker_rss_mib: float = 0.0  # the largest finished worker process's

    @property
    def bytes_per_position(self) -> float:
        return self.bytes / max(1, self.positions)


# --- sources -----------------------------------------------------------------------


def source_files(source: str) -> list[Path]:
    """The files a source stands for (a directory: all files below it, sorted)."""
    path = Path(source)
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path]


def describe_sources(sources: Iterable[str]) -> list[dict]:
    """Path, size and sha256 of every input file, for the file's provenance."""
    described = []
    for source in sources:
        if not Path(source).exists():
            raise IngestError(f"{source}: no such file or directory")
        for path in source_files(source):
            h = hashlib.sha256()
            size = 0
            try:
                with open(path, "rb") as f:
                    while block := f.read(1 << 20):
                        h.update(block)
                        size += len(block)
            except OSError as exc:
                raise IngestError(f"{path}: cannot read ({exc.strerror or exc})") from None
            described.append({"path": str(path), "bytes": size, "sha256": h.hexdigest()})
    return described


# --- tasks: what a worker does -------------------------------------------------------------

# Plain SGF files up to this size are read *and parsed* inside a worker, a
# batch of them per task; anything else (archives, compressed streams, big
# multi-game files) is read and split by the parent, which sends parsed
# records to the workers to replay. Either way a task's outcomes come back
# in input order, and the order of tasks is the order of the sources.
SMALL_FILE_BYTES = 256 << 10
SMALL_FILE_SUFFIXES = (".sgf", ".sgfs", ".mgt")
FILES_PER_TASK = 64
RECORDS_PER_TASK = 16


@dataclass(frozen=True)
class _Task:
    top: str  # the source as given on the command line
    files: tuple[str, ...] = ()  # parse these files here...
    records: tuple = ()  # ...or replay these records


def _walk(source: str) -> list[Path]:
    """The files ``iter_records`` reads for a source, in its order."""
    from harness.sgf.sources import walk

    path = Path(source)
    return list(walk(path)) if path.is_dir() else [path]


def _is_small(path: Path) -> bool:
    return path.suffix.lower() in SMALL_FILE_SUFFIXES and path.stat().st_size <= SMALL_FILE_BYTES


def _tasks(sources: list[str], max_member_bytes: int, skip: int) -> Iterator[_Task]:
    """Tasks covering every record after the first ``skip`` (which are parsed, not replayed)."""
    from harness.sgf import iter_records

    def record_tasks(top: str, records: Iterator) -> Iterator[_Task]:
        while batch := tuple(itertools.islice(records, RECORDS_PER_TASK)):
            yield _Task(top, records=batch)

    for top in sources:
        small: list[str] = []
        size = 0
        for path in _walk(top):
            if skip > 0:
                records = iter(iter_records([path], max_member_bytes=max_member_bytes))
                for _ in records:
                    skip -= 1
                    if skip == 0:
                        break
                yield from record_tasks(top, records)  # the rest of this file, if any
            elif _is_small(path):
                small.append(str(path))
                size += path.stat().st_size
                if len(small) == FILES_PER_TASK or size >= SMALL_FILE_BYTES:
                    yield _Task(top, files=tuple(small))
                    small, size = [], 0
            else:
                if small:
                    yield _Task(top, files=tuple(small))
                    small, size = [], 0
                records = iter(iter_records([path], max_member_bytes=max_member_bytes))
                yield from record_tasks(top, records)
        if small:
            yield _Task(top, files=tuple(small))


class IngestWorker:
    """A worker process (local or a Ray actor): converts ingest tasks with fixed settings."""

    def __init__(self, settings: ConvertSettings, max_member_bytes: int):
        self.settings = settings
        self.max_member_bytes = max_member_bytes

    def run(self, task: _Task) -> list[RecordOutcome]:
        if task.files:
            from harness.sgf import iter_records

            records = iter_records(list(task.files), max_member_bytes=self.max_member_bytes)
        else:
            records = task.records
        return [convert_record(record, self.settings) for record in records]


def _outcomes(
    tasks: Iterator[_Task],
    settings: ConvertSettings,
    max_member_bytes: int,
    workers: int,
    backend: str = "local",
    ray_address: str = "",
) -> Iterator[tuple[str, RecordOutcome]]:
    """(source, outcome) in input order; a few tasks in flight at most (bounded memory).

    ``workers`` 0 means one per core (of the Ray cluster on the ray backend).
    The parent decides kept / duplicate / rejected in input order, so the
    workers' outcomes come back in task order, and the dataset is the same,
    row for row, whichever backend and worker count made it.
    """
    if backend == "local" and (workers or os.cpu_count() or 1) <= 1:
        worker = IngestWorker(settings, max_member_bytes)
        for task in tasks:
            for outcome in worker.run(task):
                yield task.top, outcome
        return
    from harness.distributed.executor import worker_pool

    given: dict[int, tuple[str, dict]] = {}

    def keyed():
        for n, task in enumerate(tasks):
            sent, names = _absolute(task)
            given[n] = (task.top, names)
            yield n, (sent,)

    # fork: the workers only parse, and start in milliseconds instead of re-importing.
    with worker_pool(IngestWorker, (settings, max_member_bytes), workers, backend=backend,
                     ray_address=ray_address, start_method="fork") as pool:
        for n, outcomes in pool.run("run", keyed(), ordered=True, window=4 * len(pool.workers)):
            top, names = given.pop(n)
            for outcome in outcomes:
                yield top, _renamed(outcome, names)


def _absolute(task: _Task) -> tuple[_Task, dict[str, str]]:
    """The task with paths any worker can open (on Ray: a shared filesystem, any
    working directory), and the names as given: outcomes must name sources the
    way the user wrote them, even when the path is relative or a symlink."""
    if not task.files:
        return task, {}
    opened = tuple(os.path.abspath(f) for f in task.files)
    names = dict(zip(opened, map(str, task.files), strict=True))
    return replace(task, files=opened), names


def _renamed(outcome: RecordOutcome, names: dict[str, str]) -> RecordOutcome:
    """``outcome`` with its source under the name the user gave for the file."""
    label = outcome.source
    for opened, name in names.items():
        if label == opened or label.startswith(opened + "!"):
            source = name + label[len(opened):]
            info = outcome.info and replace(outcome.info, source=source)
            return replace(outcome, source=source, info=info)
    return outcome


# --- the ingest ------------------------------------------------------------------------


def _journal_key(config: IngestConfig, sources: list[dict]) -> dict:
    """What must match for ``--resume`` to continue a journal."""
    key = asdict(config)
    ignored = (
        "output",
        "workers",
        "resume",
        "overwrite",
        "progress",
        "stop_after_records",
        "commit_games",
        "commit_positions",
        "backend",
        "ray_address",
    )  # none of these changes the content
    for name in ignored:
        key.pop(name)
    key["sources"] = list(config.sources)
    key["rules"] = list(config.rules)
    key["test_sources"] = list(config.test_sources)
    key["files"] = sources
    return key


def check_config(config: IngestConfig) -> None:
    """Refuse values that could only give an empty or wrong dataset, before anything is written.

    A board size the rules kernel does not play would reject every game and
    still write an (empty) dataset with exit 0; a user deserves the reason.
    """
    from harness.game.geometry import MAX_SIZE, MIN_SIZE

    if not MIN_SIZE <= config.board_size <= MAX_SIZE:
        raise IngestError(
            f"--board-size {config.board_size} unsupported (must be {MIN_SIZE}..{MAX_SIZE})"
        )
    for flag, value, low in (
        ("--min-moves", config.min_moves, 0),
        ("--workers", config.workers, 0),
        ("--max-member-bytes", config.max_member_bytes, 1),
        ("--commit-games", config.commit_games, 1),
        ("--limit", config.limit, 1),
    ):
        if value is not None and value < low:
            raise IngestError(f"{flag} must be at least {low}, got {value}")
    if any(not pattern.strip() for pattern in config.test_sources):
        raise IngestError("--test-source: an empty pattern would make every game a test game")


def ingest(config: IngestConfig) -> IngestResult:
    """Run (or resume) an ingest; raises :class:`IngestError` for a bad start."""
    start = time.perf_counter()
    check_config(config)
    output = Path(config.output)
    from harness.distributed.backend import BackendError, import_ray

    try:
        if config.backend == "ray":
            import_ray()  # before any file is touched
    except BackendError as exc:
        raise IngestError(str(exc)) from None
    if output.suffix != ".h5":
        raise IngestError(f"{output}: the output name must end in .h5")
    if not output.parent.exists():
        raise IngestError(f"{output.parent}: no such directory")
    from harness.features import get_encoder

    try:
        get_encoder(config.encoder)
    except ValueError as exc:
        raise IngestError(str(exc)) from None
    sources = describe_sources(config.sources)
    key = _journal_key(config, sources)
    journal = Journal(output)
    if config.resume and journal.exists():
        if journal.config() != key:
            raise IngestError(
                f"{journal.path}: made with other sources or options; "
                "rerun with the same ones, or use --overwrite to start over"
            )
        state = journal.load_state()
    else:
        if config.resume and output.exists() and not config.overwrite:
            raise IngestError(f"{output}: already complete, nothing to resume")
        if journal.exists() and not config.overwrite:
            raise IngestError(
                f"{journal.path}: an interrupted ingest is there; "
                "use --resume to continue it or --overwrite to start over"
            )
        if output.exists() and not config.overwrite:
            raise IngestError(f"{output}: exists (use --overwrite to replace it)")
        partial_path(output).unlink(missing_ok=True)
        journal.start(key)
        state = JournalState()
    resumed_from = state.records
    if not journal.is_done():
        finished = _process(config, journal, state)
        if not finished:
            return IngestResult(
                output,
                output,
                output,
                state.games,
                state.positions,
                0,
                time.perf_counter() - start,
                state.records,
                resumed_from,
            )
        journal.mark_done()
        state = journal.load_state()
    attrs = DatasetAttributes(
        board_size=config.board_size,
        encoder=config.encoder,
        rules=",".join(config.rules) or "any",
        replay_rules=config.replay_rules,
        val_games=config.val_games,
        test_games=config.test_games,
        test_sources=tuple(config.test_sources),
        seed=config.seed,
        cazenave_val=config.cazenave_val,
        no_result=config.no_result,
        min_moves=config.min_moves,
        sources=sources,
    )
    counts = state.counts
    summary = assemble(journal, attrs, counts.to_json())
    rejects = summary.pop("rejects")
    seconds = time.perf_counter() - start
    report_summary = {
        "output": str(output),
        **{k: v for k, v in summary.items() if k != "bytes"},
        "bytes": summary["bytes"],
        "bytes_per_position": round(summary["bytes"] / max(1, summary["positions"]), 2),
        "board_size": config.board_size,
        "encoder": config.encoder,
        "rules": attrs.rules,
        "seed": config.seed,
        "records": state.records,
        "duplicates_dropped": counts.total.duplicates,
        "seconds": round(seconds, 2),
        "resumed_from_record": resumed_from,
        **peak_rss_mib(),
    }
    json_path, csv_path = write_report(output, report_summary, counts, rejects)
    journal.remove()
    return IngestResult(
        output=output,
        report=json_path,
        rejects=csv_path,
        games=summary["games"],
        positions=summary["positions"],
        bytes=summary["bytes"],
        seconds=seconds,
        records=state.records,
        resumed_from=resumed_from,
        counts=counts.to_json(),
        peak_rss_mib=report_summary["peak_rss_mib"],
        peak_worker_rss_mib=report_summary["peak_worker_rss_mib"],
    )


def peak_rss_mib() -> dict[str, float]:
    """High-water resident memory of this process and of its largest finished
    worker, in MiB: the evidence that memory does not grow with the archive
    (``ru_maxrss`` is in KiB on Linux; 0 where the platform has no getrusage)."""
    try:
        import resource
    except ImportError:
        return {"peak_rss_mib": 0.0, "peak_worker_rss_mib": 0.0}
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"peak_rss_mib": round(own / 1024, 1), "peak_worker_rss_mib": round(workers / 1024, 1)}


def _process(config: IngestConfig, journal: Journal, state: JournalState) -> bool:
    """Convert every record not yet committed; returns False if stopped early."""
    from harness.console import progress as tqdm

    stops = [n for n in (config.limit, config.stop_after_records) if n is not None]
    stop = min(stops) if stops else None
    tasks = _tasks(config.sources, config.max_member_bytes, state.records)
    outcomes = _outcomes(tasks, config.convert_settings, config.max_member_bytes,
                         config.workers, config.backend, config.ray_address)
    points = config.board_size * config.board_size

    writer = JournalWriter(journal, state, points, config.commit_games, config.commit_positions)
    bar = tqdm(
        total=None,
        unit=" games",
        disable=not config.progress,
        dynamic_ncols=True,
        initial=state.records,
        desc="ingest",
    )
    began, first_positions = time.perf_counter(), state.positions
    try:
        for top, outcome in outcomes:
            if stop is not None and writer.records >= stop:
                break
            writer.add(top, outcome)
            bar.update(1)
            if bar.n % 64 == 0:
                done = writer.positions - first_positions
                rate = done / max(1e-9, time.perf_counter() - began)
                bar.set_postfix(
                    positions=writer.positions, rate=f"{rate:,.0f} pos/s", refresh=False
                )
        if config.stop_after_records is not None:
            return False
        writer.commit()
    finally:
        outcomes.close()  # stops the workers if we leave early
        bar.close()
    return True
