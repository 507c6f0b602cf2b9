"""The registry of protocols: how every request of an episode is built, by name.

| name           | source                                             | for                        |
|----------------|----------------------------------------------------|----------------------------|
| `paravt`       | this project                                       | paravt-nano (the default)  |
| `release-eval` | EvolvingLMMs-Lab/ParaVT@cf55249 paravt/eval/       | ParaVT-8B, Table 1 rows    |
| `release-rl`   | EvolvingLMMs-Lab/ParaVT@cf55249 paravt/rl/         | training from the release  |
"""

from __future__ import annotations

from agents.protocols.base import EpisodeError, PlannedCall, Protocol, Settings, Turn
from agents.protocols.paravt import ParavtProtocol
from agents.protocols.release_eval import PROMPT_MODES, VIDEO_CHANNELS, ReleaseEvalProtocol
from agents.protocols.release_rl import ReleaseRLProtocol

__all__ = [
    "PROMPT_MODES",
    "PROTOCOLS",
    "VIDEO_CHANNELS",
    "EpisodeError",
    "PlannedCall",
    "Protocol",
    "Settings",
    "Turn",
    "get_protocol",
]

PROTOCOLS: dict[str, Protocol] = {
    p.name: p for p in (ParavtProtocol(), ReleaseEvalProtocol(), ReleaseRLProtocol())
}
DEFAULT = "paravt"


def get_protocol(name: str) -> Protocol:
    """The protocol called `name`; a ValueError naming the known ones otherwise."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        known = ", ".join(PROTOCOLS)
        raise ValueError(f"unknown protocol {name!r}; known protocols: {known}") from None
