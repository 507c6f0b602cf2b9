"""Every reply of the reward corpus on which the default reward departs from the release, and why.

    python -m tests.parity.reward_departures     # rewrites tests/data/parity/reward_departures.json

The release's values are its own outputs (tests/data/parity/rewards_<recipe>.json); the
default's are :func:`training.rewards.total_reward` with the paper profile and the recipe's
weights, on the same episode (each turn with its prefill, the tool record from the calls the
episode made). Each differing part gets a reason from :data:`REASONS`, the first whose test
holds; tests/parity/test_reward_departures.py checks the table is current and every row
explained.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

from agents.protocol import THINK_PREFIX, parse
from agents.scoring.extract import extract_answer
from tests.parity.data import DATA, corpus, reference
from tests.parity.ref_paravt import reward_corpus
from training.release_reward import RECIPES, answer_text, normalize
from training.rewards import RewardSettings, total_reward

KINDS = {"mc": "multiple_choice", "grounding": "grounding", "open": "open_ended"}
OUT = DATA / "reward_departures.json"


def settings_for(recipe: str, prefilled: bool) -> RewardSettings:
    release = RECIPES[recipe]
    return RewardSettings(
        prefill=THINK_PREFIX if prefilled else None,
        answer_suffix=release.answer_suffix,
        lambda_fmt=release.format_weight,
        lambda_anchor=release.anchor_weight,
    )


def default_parts(episode: dict, recipe: str) -> dict[str, float | None]:
    s = settings_for(recipe, episode["prefilled"])
    turns = [s.prefill + t if s.prefill else t for t in episode["turns"]]
    ran = sum(len(parse(t).valid_calls) for t in turns[:-1])
    target = tuple(episode["gold"]) if episode["kind"] == "grounding" else episode["gold"]
    parts = total_reward(
        turns,
        kind=KINDS[episode["kind"]],
        target=target,
        executed_calls=ran,
        tool_responses=ran,
        letters="ABCDE",
        settings=s,
    )
    return {
        "acc_reward": parts.accuracy,
        "format_reward": parts.format,
        "tool_reward": parts.tool,
        "total": parts.total,
    }


# --- reasons ----------------------------------------------------------------------------------

Facts = dict  # episode, recipe and both sides' parts


def _ours(f: Facts) -> str:
    turns = f["episode"]["turns"]
    return extract_answer((THINK_PREFIX if f["episode"]["prefilled"] else "") + turns[-1])


def _theirs(f: Facts) -> str:
    return answer_text(f["text"])


def _final(f: Facts) -> str:
    return f["episode"]["turns"][-1]


def _same_text(f: Facts) -> bool:
    return _ours(f) == _theirs(f)


def _kind(f: Facts) -> str:
    return f["episode"]["kind"]


def _gold(f: Facts) -> str:
    return f["episode"]["answer"]


def _last_calls(f: Facts) -> bool:
    return bool(parse(_final(f)).tool_calls)


# fmt: off
UNEXPLAINED = "unexplained"
ACCURACY: list[tuple[str, Callable[[Facts], bool]]] = [
    ("a turn that only calls tools has no answer here; the release reads its reasoning or the "
     "text after the call as one", lambda f: _last_calls(f) and parse(_final(f)).answer is None),
    ("conflicting answer blocks give no answer here; the release takes the first pair",
     lambda f: len({a.lower() for a in parse(_final(f)).answers if a}) > 1),
    ("an answer block inside the think is reasoning here; the release reads it as the answer",
     lambda f: "<answer>" in _final(f).split("</think>")[0] and not _same_text(f)),
    ("the release reads the whole episode's text (the first turn's think and tags), not the "
     "last turn", lambda f: len(f["episode"]["turns"]) > 1 and not _same_text(f)),
    ("the release keeps the <|im_end|> chat token on a bare last line, so the letter or text "
     "no longer matches", lambda f: "<|im_end|>" in _theirs(f)),
    ("the answer text is read differently (the release's answer block, text after the first "
     "</think>, last line; tool and chat tokens)", lambda f: not _same_text(f)),
    ("the release's normalisation strips the article from the gold 'A', so 'the' or '...' "
     "matches it", lambda f: normalize(_gold(f)) == ""),
    ("the release scores only the options A-D: a gold E is never matched",
     lambda f: _kind(f) == "mc" and _gold(f) not in "ABCD"),
    ("letters: the release matches five case-sensitive patterns (no 'option c', no letter "
     "glued to other text such as '答案是A'); this project reads the robust rule",
     lambda f: _kind(f) == "mc"),
    ("intervals: the release reads only an 's, e' pair; this project reads ranges, clocks, "
     "units and start/end phrases", lambda f: _kind(f) == "grounding"),
    ("token F1: the release counts each shared word once and strips every non-word character; "
     "this project counts a multiset", lambda f: _kind(f) == "open"),
    (UNEXPLAINED, lambda f: True),
]
FORMAT: list[tuple[str, Callable[[Facts], bool]]] = [
    ("the release never sees the prefilled <think>: no think credit, no anchor, unpaired tags",
     lambda f: f["episode"]["prefilled"]),
    ("the release goes negative on an unclosed think; this project's format stays in [0, 1]",
     lambda f: f["release"]["format_reward"] < 0),
    ("tag order is checked here (tags inside the think, an answer with calls, several answers)",
     lambda f: any(v in ORDER for t in f["episode"]["turns"] for v in parse(t).violations)),
    ("every turn needs its own think here; the release looks at the first think of the episode",
     lambda f: len(f["episode"]["turns"]) > 1),
    ("the release pays the tag-pairing bonus to a turn with no think at all",
     lambda f: "<think>" not in f["text"] and "</think>" not in f["text"]),
    ("a think must be closed and substantive here for the pairing and call terms",
     lambda f: any(v in {"unclosed_think", "empty_think"}
                   for t in f["episode"]["turns"] for v in parse(t).violations)),
    (UNEXPLAINED, lambda f: True),
]
ORDER = {"misordered_tags", "multiple_answers", "answer_with_tool_calls", "tool_response_in_turn"}
TOOL: list[tuple[str, Callable[[Facts], bool]]] = [
    ("a call in the last turn never ran: no tool credit here; the release pays for the call's "
     "text", lambda f: _last_calls(f)),
    ("the tool level comes from the rollout's record here (0.3 when a result came back); the "
     "release searches the text for a <tool_response> it never sees", lambda f: bool(f["ran"])),
    (UNEXPLAINED, lambda f: True),
]
# fmt: on
PARTS = {"acc_reward": ACCURACY, "format_reward": FORMAT, "tool_reward": TOOL}


def reasons(facts: Facts) -> list[str]:
    found = []
    for part, rules in PARTS.items():
        ours, theirs = facts["default"][part], facts["release"][part]
        if ours is None or abs(ours - theirs) > 1e-12:
            found.append(f"{part}: " + next(reason for reason, test in rules if test(facts)))
    return found


def table() -> list[dict]:
    episodes = {e["id"]: e for e in reward_corpus(corpus())}
    source = {e["id"]: e for family in corpus().values() for e in family}
    rows = []
    for recipe in sorted(RECIPES):
        for item in reference(f"rewards_{recipe}")["items"]:
            episode = episodes[item["id"]]
            gold = source[item["id"].removeprefix("rw-").removesuffix("-cut")]["gold"]
            graded = {**episode, "gold": gold}
            ran = sum(len(parse(t).valid_calls) for t in episode["turns"][:-1])
            facts = {
                "episode": graded,
                "recipe": recipe,
                "release": item["out"],
                "default": default_parts(graded, recipe),
                "text": episode["completion"],
                "ran": ran,
            }
            found = reasons(facts)
            if found:
                rows.append(
                    {
                        "id": item["id"],
                        "recipe": recipe,
                        "release": item["out"],
                        "default": facts["default"],
                        "reasons": found,
                    }
                )
    return rows


def main() -> None:
    rows = table()
    OUT.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    counts = Counter(reason for row in rows for reason in row["reasons"])
    for reason, n in counts.most_common():
        print(f"{n:5d}  {reason}")
    print(f"{len(rows)} departures -> {OUT}")


if __name__ == "__main__":
    main()
