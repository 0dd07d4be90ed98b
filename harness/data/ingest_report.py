"""Ingest accounting: what happened to every game of every source.

The counts must reconcile: for each source, ``seen == kept + duplicates +
sum(rejected.values())``, and ``positions`` is the sum of the kept games'
main-line moves. Reasons are grouped into categories for the counts (the
move number and vertex of an illegal move are dropped); the rejects CSV
keeps every full reason.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from harness.files import atomic_json, atomic_write, csv_text

_ILLEGAL = re.compile(r"^illegal move \d+ \S+ \((.*)\)$")
_POSITIONS = re.compile(r"\b(at|near|in) (byte|offset|line|position|node|move) \d+")


# Reasons whose tail is the offending value (a number, a member name): counted by their head.
_HEADS = ("bad handicap", "bad komi", "not a game file", "link member", "device or pipe member",
          "special member", "move count differs from the index", "malformed kifu line",
          "malformed index row")
_INTERNAL = re.compile(r"^internal error: (\w+)")
_UNFIT = re.compile(r"^(\w+) .* does not fit the dataset")  # the value is the detail


def reason_category(reason: str) -> str:
    """The reason with game-specific details removed, for counting."""
    match = _ILLEGAL.match(reason)
    if match:
        return f"illegal move ({match.group(1)})"
    internal = _INTERNAL.match(reason)
    if internal:
        return f"internal error ({internal.group(1)})"
    unfit = _UNFIT.match(reason)
    if unfit:
        return f"{unfit.group(1)} does not fit the dataset"
    head = next((h for h in _HEADS if reason.startswith(h)), None)
    if head:
        return head
    if reason.startswith("duplicate of "):
        return "duplicate"
    if reason.startswith("too short:"):
        return "too short"
    if reason.startswith("too long:"):
        return "too long"
    return _POSITIONS.sub(r"\1 \2 N", reason)


@dataclass
class SourceCounts:
    seen: int = 0
    kept: int = 0
    duplicates: int = 0
    positions: int = 0
    rejected: Counter = field(default_factory=Counter)

    def add(self, other: SourceCounts) -> None:
        self.seen += other.seen
        self.kept += other.kept
        self.duplicates += other.duplicates
        self.positions += other.positions
        self.rejected.update(other.rejected)

    @property
    def rejected_total(self) -> int:
        return sum(self.rejected.values())

    @property
    def reconciles(self) -> bool:
        return self.seen == self.kept + self.duplicates + self.rejected_total

    def to_json(self) -> dict:
        return {
            "seen": self.seen,
            "kept": self.kept,
            "duplicates": self.duplicates,
            "rejected": self.rejected_total,
            "positions": self.positions,
            "rejected_by_reason": dict(
                sorted(self.rejected.items(), key=lambda kv: (-kv[1], kv[0]))
            ),
        }

    @classmethod
    def from_json(cls, data: dict) -> SourceCounts:
        return cls(
            seen=data["seen"],
            kept=data["kept"],
            duplicates=data["duplicates"],
            positions=data["positions"],
            rejected=Counter(data.get("rejected_by_reason", {})),
        )


@dataclass
class IngestCounts:
    """Counts per input source (as given on the command line), in input order."""

    sources: dict[str, SourceCounts] = field(default_factory=dict)

    def of(self, source: str) -> SourceCounts:
        if source not in self.sources:
            self.sources[source] = SourceCounts()
        return self.sources[source]

    def add(self, other: IngestCounts) -> None:
        for name, counts in other.sources.items():
            self.of(name).add(counts)

    @property
    def total(self) -> SourceCounts:
        total = SourceCounts()
        for counts in self.sources.values():
            total.add(counts)
        return total

    def to_json(self) -> dict:
        return {name: counts.to_json() for name, counts in self.sources.items()}

    @classmethod
    def from_json(cls, data: dict) -> IngestCounts:
        return cls({name: SourceCounts.from_json(c) for name, c in data.items()})

    def summary_lines(self) -> list[str]:
        """Human-readable reconciliation, one line per source plus reasons."""
        lines = []
        for name, c in [*self.sources.items(), ("TOTAL", self.total)]:
            lines.append(
                f"{name}: seen {c.seen} = kept {c.kept} + duplicates {c.duplicates}"
                f" + rejected {c.rejected_total}; positions {c.positions}"
            )
        for reason, n in self.total.to_json()["rejected_by_reason"].items():
            lines.append(f"  rejected {n:6d}  {reason}")
        return lines


def report_paths(output: Path) -> tuple[Path, Path]:
    """``NAME.report.json`` and ``NAME.rejects.csv`` next to ``NAME.h5``."""
    stem = output.name[: -len(".h5")] if output.name.endswith(".h5") else output.name
    return output.with_name(stem + ".report.json"), output.with_name(stem + ".rejects.csv")


def write_report(
    output: Path, summary: dict, counts: IngestCounts, rejects: dict[str, list]
) -> tuple[Path, Path]:
    """Write the JSON report and the CSV of every game not stored (atomically)."""
    json_path, csv_path = report_paths(output)
    total = counts.total
    body = {
        **summary,
        "totals": total.to_json(),
        "reconciles": all(c.reconciles for c in counts.sources.values()),
        "sources": counts.to_json(),
    }
    atomic_json(json_path, body)
    rows = zip(rejects["source"], rejects["index"], rejects["kind"], rejects["reason"], strict=True)
    atomic_write(csv_path, csv_text(["source", "index", "kind", "reason"], list(rows)))
    return json_path, csv_path
