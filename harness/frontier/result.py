"""What a frontier study hands back, whichever kind it is."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class StudyResult:
    """The report's path, its Findings and (supervised) every scored savepoint."""

    report: Path
    findings: list[str]
    scored: list = field(default_factory=list)
