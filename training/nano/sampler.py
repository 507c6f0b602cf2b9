"""paravt-nano's SFT batches: seeded, one kind of row each, colour- and verdict-balanced.

``Sampler.batch`` draws a batch kind (main agent, note-to-answer, verifier or sub-agent,
at the schedule's shares), then its rows from the noise tiers open at that step: main-agent
and note-to-answer rows uniformly, sub-agent rows by the colour their window shows (or an
empty window), verifier rows by what they hold (``VERIFY_KINDS``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from agents import benchmark
from agents.verify import NOTE_OPEN
from training.nano.oracle import SEEN

AGENTS = ("main", "sub", "notes", "verify")
#: What a verifier row holds, for its batches' balance (``SFTSchedule.verify_mix``).
VERIFY_KINDS = ("right_needle", "right_empty", "wrong", "uncheckable")


def _agent(row: dict) -> str:
    if row["agent"] == "notes":  # main-agent rows made from plans, not from traces
        return "notes"
    return {"verifier": "verify", "sub_agent": "sub"}.get(row["role"], "main")


def verify_kind(row: dict) -> str:
    """What a verifier row holds (:data:`VERIFY_KINDS`), from its note and its verdict."""
    verdict = row["messages"][-1]["content"][0]["text"].strip()
    request = "".join(p.get("text", "") for p in row["messages"][-2]["content"])
    if verdict == "UNCERTAIN":
        return "uncheckable"
    if verdict == "UNSUPPORTED":
        return "wrong"
    return "right_needle" if NOTE_OPEN + SEEN in request else "right_empty"


class Sampler:
    """Seeded batches: main-agent rows uniformly, sub-agent rows colour-balanced, from the
    noise tiers open at each step."""

    def __init__(self, rows: Sequence[dict], schedule):
        self.schedule = schedule
        self.rng = random.Random(schedule.seed)
        self.tiers = sorted({row["noise"] for row in rows})
        self.pools: dict[tuple, list[dict]] = {}
        for row in rows:
            agent = _agent(row)
            key = (row["noise"], agent, None)
            self.pools.setdefault(key, []).append(row)
            if agent == "sub":
                for colour in row.get("colours") or ["empty"]:
                    self.pools.setdefault((row["noise"], "sub", colour), []).append(row)
            if agent == "verify":
                self.pools.setdefault((row["noise"], "verify", verify_kind(row)), []).append(row)
        s = schedule
        sub_share = 1.0 - s.main_share - s.notes_share - s.verify_share
        shares = {
            "main": s.main_share,
            "notes": s.notes_share,
            "verify": s.verify_share,
            "sub": sub_share,
        }
        present = {key[1] for key in self.pools}
        missing = [a for a, share in shares.items() if share > 1e-9 and a not in present]
        if missing:
            raise ValueError(f"the schedule draws {missing} batches, but there are no such rows")

    def open_tiers(self, step: int) -> list[float]:
        progress = step / self.schedule.steps
        return [
            t for t, at in zip(self.tiers, self.schedule.unlock, strict=False) if progress >= at
        ]

    def batch(self, step: int) -> tuple[str, list[dict]]:
        s, rng, tiers = self.schedule, self.rng, self.open_tiers(step)
        draw = rng.random()
        agent = (
            "main"
            if draw < s.main_share
            else "notes"
            if draw < s.main_share + s.notes_share
            else "verify"
            if draw < s.main_share + s.notes_share + s.verify_share
            else "sub"
        )
        if agent == "verify":
            rows = []
            for _ in range(s.verify_batch_rows):
                kind = rng.choices(VERIFY_KINDS, weights=s.verify_mix)[0]
                pool = [r for t in tiers for r in self.pools.get((t, "verify", kind), [])]
                if not pool:
                    pool = [r for t in tiers for r in self.pools.get((t, "verify", None), [])]
                rows.append(rng.choice(pool))
            return agent, rows
        if agent != "sub":
            pool = [r for t in tiers for r in self.pools.get((t, agent, None), [])]
            size = s.batch_rows if agent == "main" else s.notes_batch_rows
            return agent, [rng.choice(pool) for _ in range(size)]
        rows = []
        for _ in range(s.sub_batch_rows):
            kind = rng.choice(benchmark.COLOURS) if rng.random() < s.needle_share else "empty"
            pool = [r for t in tiers for r in self.pools.get((t, "sub", kind), [])]
            if not pool:
                pool = [r for t in tiers for r in self.pools.get((t, "sub", None), [])]
            rows.append(rng.choice(pool))
        return agent, rows
