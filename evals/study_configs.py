"""The board study's configurations: what each one sets on the graph, by name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StudyConfig:
    context: dict[str, Any] = field(default_factory=dict)  # Context overrides
    votes: int = 1
    description: str = ""


STUDY_CONFIGS: dict[str, StudyConfig] = {
    "single": StudyConfig({"dispatch": "none"}, description="one agent, no tools, no board"),
    "two_agent": StudyConfig(
        {"dispatch": "none", "scanner_first": True, "board_mode": "shared"},
        description="a scanner writes a note on one board, a checker answers",
    ),
    "isolated": StudyConfig({"board_mode": "isolated"}, description="ParaVT sub-agents"),
    "shared": StudyConfig({"board_mode": "shared"}, description="sub-agents read the board"),
    "verified": StudyConfig({"board_mode": "verified"}, description="shared, verify gate on"),
    "verified_length": StudyConfig(
        {"board_mode": "verified", "length_gate": True}, description="verified + length gate"
    ),
    "vote5": StudyConfig(
        {"dispatch": "none", "temperature": 0.7},
        votes=5,
        description="majority of 5 single agents at temperature 0.7",
    ),
    "shared_vote5": StudyConfig(
        {"board_mode": "shared", "temperature": 0.7},
        votes=5,
        description="majority of 5 shared-board runs at temperature 0.7",
    ),
}
BASELINE = "single"
