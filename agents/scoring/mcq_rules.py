"""Multiple-choice letter rules of the reference harnesses, each reproduced exactly.

Each rule takes the text its harness reads (:mod:`agents.scoring.reply`) and returns what
that harness extracts, quirks included; a profile pins one rule to its source commit. The
project's own rule is :func:`agents.scoring.letters.robust_letter`.
"""

from __future__ import annotations

import random
import re

BRADY_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option isThe correct option is",
    "Best answer:Best option:",
)
"""Video-MME's ``extract_characters_regex`` prefixes (BradyFU/Video-MME@4e7566d), which
lmms-eval's Video-MME, MLVU-free and LVBench tasks used until 75571cf."""

README_PREFIXES = (
    *BRADY_PREFIXES,
    "Answer:",
    "Option:",
    "The correct answer",
    "The correct option",
)
"""The copy the Video-MME README links (thanku-all/parse_answer@afd52cf): four more prefixes."""

LVB_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Best answer:",
    "Best option:",
)
"""lmms-eval's LongVideoBench prefixes (commas in place, so no glued pairs)."""


def prefix_rule(response: str, prefixes: tuple[str, ...] = BRADY_PREFIXES) -> str:
    """Video-MME's official extraction: strip, delete each prefix wherever it occurs, then the
    first capital A-D anywhere ("" when there is none).

    >>> prefix_rule("The answer is (C)."), prefix_rule("Answer: C"), prefix_rule("Best answer: C")
    ('C', 'A', 'B')
    >>> prefix_rule("Answer: C", README_PREFIXES)
    'C'
    """
    text = response.strip()
    for prefix in prefixes:
        text = text.replace(prefix, "")
    found = re.search(r"[ABCD]", text)
    return found[0] if found else ""


# --- lmms-eval 75571cf: tasks/_task_utils/mcq_extract.py ---------------------------------

MCQ_PHRASES = (
    "the answer is",
    "answer is",
    "the correct answer is",
    "correct answer is",
    "the best answer is",
    "best answer is",
    "the correct option is",
    "correct option is",
    "the best option is",
    "best option is",
    "the choice is",
    "choice is",
    "the correct choice is",
    "correct choice is",
    "i choose",
    "i select",
    "i pick",
    "my answer is",
    "my choice is",
    "옵션",
    "정답은",
    "답은",
    "답:",
    "答案是",
    "答案为",
    "选",
    "答えは",
)
"""Its answer phrases, in its order (the order breaks no ties; kept for fidelity)."""

MCQ_RANK = {
    "start": 10,
    "end": 9,
    "phrase": 7,
    "parentheses": 6,
    "period": 5,
    "colon": 4,
    "right_paren": 3,
    "space": 2,
    "fallback": 0,
}


def mcq_extract(response: str, choices: str = "ABCDEFGH") -> str:
    """lmms-eval's ranked extractor: every letter form found is a candidate; the highest
    ranked form wins (a letter opening the reply first, even the article "A"), and within a
    form the occurrence nearest the end.

    >>> mcq_extract("The correct answer is (B)."), mcq_extract("A man walks. So D")
    ('B', 'A')
    >>> mcq_extract("Answer: C", "ABCD"), mcq_extract("none of them", "ABCD")
    ('C', '')
    """
    if not response.strip():
        return ""
    text = response.strip()
    for char in ",.!?;:'\"":
        text = text.strip(char)
    text = f" {text} "
    found: list[tuple[str, int, str]] = []
    for form, pattern in (
        ("parentheses", "({})"),
        ("period", "{}."),
        ("colon", "{}:"),
        ("right_paren", "{})"),
        ("space", "{} "),
    ):
        for letter in choices:
            mark = pattern.format(letter)
            if mark in text:
                found.append((letter, text.rfind(mark), form))
    lowered = text.lower()
    for phrase in MCQ_PHRASES:
        at = lowered.find(phrase)
        if at >= 0:
            for letter in choices:
                position = text.find(letter, at + len(phrase))
                if position >= 0:
                    found.append((letter, position, "phrase"))
    bare = text.strip()
    for letter in choices:
        if bare.startswith(letter) and (len(bare) == 1 or not bare[1].isalpha()):
            found.append((letter, 0, "start"))
    for letter in choices:
        if bare.endswith(letter) and (len(bare) == 1 or not bare[-2].isalpha()):
            found.append((letter, len(text) - 1, "end"))
    if not found:
        found = [(letter, text.rfind(letter), "fallback") for letter in choices if letter in text]
    if not found:
        return ""
    return sorted(found, key=lambda c: (MCQ_RANK[c[2]], c[1]), reverse=True)[0][0]


# --- MLVU ----------------------------------------------------------------------------------


def mlvu_check_read(reply: str) -> str:
    """What MLVU's ``check_ans`` (JUNJIE99/MLVU@fd060c1) compares with the gold letter: the
    character before the first ")", else the whole reply, unstripped.

    >>> mlvu_check_read("B) The man"), mlvu_check_read(" C"), mlvu_check_read(")")
    ('B', ' C', '')
    """
    if ")" in reply:
        close = reply.index(")")
        return reply[close - 1 : close]
    return reply


def mlvu_lmms_read(reply: str) -> str:
    """lmms-eval's MLVU extraction until 75571cf: the same reading of the stripped reply."""
    return mlvu_check_read(reply.strip())


# --- LVBench -------------------------------------------------------------------------------


def lvbench_polish(answer: str) -> str:
    """LVBench's ``polish_answer`` (THUDM/LVBench@f998d95): the first character of the first
    word of what precedes the first ")", inside "(" when there is one.

    >>> lvbench_polish("(B) the cat"), lvbench_polish("answer: d"), lvbench_polish("")
    ('B', 'a', '')
    """
    text = answer.strip().split(")")[0].strip()
    if "(" in text:
        text = text.split("(")[1].strip()
    text = text.split(" ")[0]
    return text[0] if text else text


# --- LongVideoBench (lmms-eval) --------------------------------------------------------------


def lvb_parse(response: str, n_choices: int, rng: random.Random | None) -> tuple[str, bool]:
    """lmms-eval's LongVideoBench ``parse_multi_choice_response``: prefixes removed, then the
    first capital A-E. With nothing found it picks a letter at random among the item's
    options (``rng``; None: no guess, ""). Returns (letter, guessed).

    >>> lvb_parse("The best option is E.", 5, None), lvb_parse("no idea", 4, None)
    (('E', False), ('', False))
    """
    text = response.strip()
    for prefix in LVB_PREFIXES:
        text = text.replace(prefix, "")
    found = re.search(r"[ABCDE]", text)
    if found:
        return found[0], False
    if rng is None:
        return "", False
    return rng.choice([chr(ord("A") + i) for i in range(n_choices)]), True


# --- ParaVT release evaluation driver ---------------------------------------------------------


def paravt_letter(text: str) -> str:
    """The ParaVT release driver's ``extract_letter`` (paravt/eval/utils.py@cf55249): the
    answer block's letter, else a bare letter reply, else "answer is/: X", else the first
    standalone capital A-J, else the reply's first character.

    >>> paravt_letter("<think>A or B</think><answer>B</answer>"), paravt_letter("maybe")
    ('B', 'm')
    """
    text = text.strip()
    block = re.search(r"<answer>(.*?)</answer>", text, re.DOTALL)
    if block:
        inner = block[1].strip()
        if len(inner) == 1 and inner in "ABCDEFGHIJ":
            return inner
        letter = re.search(r"\b([A-J])\b", inner)
        if letter:
            return letter[1]
    if len(text) == 1 and text in "ABCDEFGHIJ":
        return text
    for pattern in (r"(?:answer|Answer)\s*(?:is|:)\s*([A-J])", r"\b([A-J])\b"):
        letter = re.search(pattern, text)
        if letter:
            return letter[1]
    return text[:1]
