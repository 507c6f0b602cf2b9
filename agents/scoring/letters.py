"""Multiple-choice letter extraction: one function per reference rule, chosen by profile name.

Profiles (:data:`PROFILES`), each ``(response, letters) -> letter or ""``:

- ``official``: VideoMME's official ``extract_characters_regex`` (the ``eval_your_results.py``
  that the Video-MME README links, github.com/thanku-all/parse_answer, June 2024), quirks
  included; the Video-MME repository's own earlier copy had only the first six prefixes.
  Also the rule for LongVideoBench over ``letters="ABCDE"``.
- ``lmms_eval``: lmms-eval's VideoMME ``extract_characters_regex`` as it stood until its
  April 2026 rewrite (``lmms_eval/tasks/videomme/utils.py``): the same rule with a shorter
  prefix list (no ``"Answer:"``, ``"Option:"``, ``"The correct answer"``,
  ``"The correct option"``) and the same two glued strings. It differs from ``official``
  on replies such as ``"Answer: C"``, which it reads as ``"A"`` (the A of "Answer").
  lmms-eval since then (and the copy vendored in the ParaVT release) ranks candidates in
  ``_task_utils/mcq_extract.py``; that rule is not reproduced here.
- ``mlvu_official``: MLVU's ``check_ans`` (``evaluation/multiple_choice_evaluation``).
- ``robust``: this project's own rule, the default for RL rewards.

An empty string means "no letter": official VideoMME leaves such items out of its
denominator, lmms-eval and this project count them wrong; that choice is the scorer's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agents.scoring.extract import extract_answer

OFFICIAL_PREFIXES = (
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is" + "The correct option is",  # a missing comma upstream glues these
    "Best answer:" + "Best option:",  # ditto: neither phrase alone is ever stripped
    "Answer:",
    "Option:",
    "The correct answer",
    "The correct option",
)
"""VideoMME's official answer prefixes, in order, the two glued pairs kept as glued."""

LMMS_EVAL_PREFIXES = OFFICIAL_PREFIXES[:6]
"""lmms-eval's (pre-2026) VideoMME prefixes: the first six official strings, glue included."""


def _videomme_rule(response: str, letters: str, prefixes: tuple[str, ...]) -> str:
    if not letters:
        return ""
    text = response.strip()
    for prefix in prefixes:
        text = text.replace(prefix, "")
    found = re.search(f"[{re.escape(letters)}]", text)
    if (
        len(text.split()) > 10 and not found
    ):  # upstream guard; a no-op, as no letter gives "" anyway
        return ""
    return found[0] if found else ""


def videomme_official(response: str, letters: str = "ABCD") -> str:
    """The official VideoMME extraction: strip prefixes, then the first capital in ``letters``.

    Prefixes are removed anywhere in the reply, case-sensitively, with the official list's
    glued strings kept, so "The best option is" and "Best answer:" are never removed and
    the B of "Best" is found first. A reply of more than 10 words with no letter gives ""
    (which the search alone would give too). Any capital counts, even inside a word.

    >>> videomme_official("The answer is (C).")
    'C'
    >>> videomme_official("Best answer: C")  # the glued prefix stays; "Best" gives B
    'B'
    >>> videomme_official("the man walks away from the table and sits down on a chair")
    ''
    """
    return _videomme_rule(response, letters, OFFICIAL_PREFIXES)


def videomme_lmms_eval(response: str, letters: str = "ABCD") -> str:
    """lmms-eval's pre-2026 VideoMME extraction: the official rule with six prefixes.

    >>> videomme_lmms_eval("Answer: C"), videomme_official("Answer: C")
    ('A', 'C')
    """
    return _videomme_rule(response, letters, LMMS_EVAL_PREFIXES)


def mlvu_official(response: str, letters: str = "ABCD") -> str:
    """MLVU's official check: the character just before the first ``)``, else the whole reply.

    MLVU prefills "Best Option: (" so replies read "B) ...". With no ``)`` the official
    check compares the whole reply with the gold letter, so only a reply that is exactly
    one letter counts (after stripping outer whitespace, as decoding pipelines do); the
    reply's first character is not used, which would read "Because..." as B. Matching is
    case-sensitive, as upstream; a character outside ``letters`` gives "".

    >>> mlvu_official("B) The man opens the door.")
    'B'
    >>> mlvu_official("C"), mlvu_official("C. The dog"), mlvu_official("Answer: (D)")
    ('C', '', 'D')
    """
    text = response.strip()
    if ")" in text:
        close = text.index(")")
        text = text[close - 1 : close] if close else ""
    return text if len(text) == 1 and text in letters else ""


# --- robust: this project's rule -------------------------------------------------------

_ANY_TAG_RE = re.compile(r"</?(?:think|answer|tool_call|tool_response)>")
_AFTER = r"(?![A-Za-z0-9_])(?!'[A-Za-z])"  # the letter is a whole token ("I'm" is not I)
_OPEN_WRAP = r"[(\[{*_\"'`]*+\s*+"
_WHOLE_RE = re.compile(r"[\W_]*([A-Za-z])[\W_]*")
# Possessive quantifiers (*+, ++, ?+) keep every pattern linear on long runs of spaces.
_STRONG_RE = re.compile(
    r"\b(?:(?:final\s++)?answers?|choose|chose|chosen|select(?:ed)?|pick(?:ed)?"
    r"|(?:options?|choices?)(?=\s*+(?:is|was|:|=)))\b"
    r"(?:\s++(?:is|was|would\s++be|should\s++be|must\s++be|will\s++be)\b)?+"
    r"\s*+[:=\-]?+\s*+(?:(?:option|choice|letter)\b\s*+)?+"
    + _OPEN_WRAP
    + r"(?P<letter>[A-Za-z])"
    + _AFTER,
    re.IGNORECASE,
)
_WEAK_RE = re.compile(
    r"\b(?:options?|choices?)\s*+" + _OPEN_WRAP + r"(?P<letter>[A-Za-z])" + _AFTER,
    re.IGNORECASE,
)
_START_RE = re.compile(
    r"\A[\s(\[{*_\"'`]*+(?P<letter>[A-Za-z])[*_\"'`]*+"
    r"(?:[)\]}.:,;](?![A-Za-z0-9])|[ \t]*+(?:\n|\Z)|[ \t]++[-–—][ \t])"
)
_BARE_RE = re.compile(r"(?<![A-Za-z0-9_])(?P<letter>[A-Z])" + _AFTER)
_WORD_LETTERS = frozenset("AI")  # letters that are also English words: "A man", "I think"
# Words that never follow the article "A": "A is correct", "A or B" keep the letter reading.
_FOLLOWED_BY_WORD = re.compile(
    r"[ \t]++(?!(?:and|or|nor|is|was|seems?|fits|matches|because|since|but|vs)\b)[A-Za-z0-9]",
    re.IGNORECASE,
)


def _wordlike(text: str, match: re.Match[str]) -> bool:
    """The matched letter reads as the article "a" / pronoun "I": A or I before a word."""
    letter = match["letter"]
    return letter.upper() in _WORD_LETTERS and bool(
        _FOLLOWED_BY_WORD.match(text, match.end("letter"))
    )


def _first(pattern: re.Pattern[str], text: str, letters: str, *, lower_ok: bool) -> str:
    for match in pattern.finditer(text):
        letter = match["letter"]
        if letter.upper() not in letters:
            continue
        if letter.islower() and (not lower_ok or _wordlike(text, match)):
            continue
        if pattern is _BARE_RE and _wordlike(text, match):
            continue
        return letter.upper()
    return ""


def robust_letter(response: str, letters: str = "ABCD") -> str:
    """This project's letter rule, for answer text (a whole turn is first reduced by
    :func:`~agents.scoring.extract.extract_answer`). Tries, in order, and within a step
    takes the first letter found in ``letters``:

    1. the whole answer is one letter, in any case and wrapping: "B", "(b)", "**B**", "C.";
    2. a letter after an answer cue: "The answer is (B).", "answer: c", "Final answer:
       Option D", "I choose C", "The correct option is B";
    3. a letter opening the answer with a delimiter: "B) because ...", "(B) The man",
       "A. A man walks", "C\\nBecause ...";
    4. a letter after "option"/"choice": "Option B fits best";
    5. the first standalone capital letter token: "B and C" gives B.

    A lowercase letter counts only in steps 1-4 (never a bare "a" in a sentence), and in
    steps 2 and 4 not when it is "a"/"i" before a word ("the answer is a man"). A or I
    followed by a word is the article or the pronoun, never the letter, outside a cue:
    "A man walks" gives "" (but "A is correct", "A or B": a word that cannot follow the
    article keeps the letter reading). Empty text gives "".

    >>> robust_letter("The answer is (B).")
    'B'
    >>> robust_letter("answer: c")
    'C'
    >>> robust_letter("A man opens the door, so it must be D.")
    'D'
    >>> robust_letter("A man opens the door.")
    ''
    """
    if not letters:
        return ""
    text = response
    if _ANY_TAG_RE.search(text):
        text = extract_answer(text)
    letters = letters.upper()
    whole = _WHOLE_RE.fullmatch(text)
    if whole and whole[1].upper() in letters:
        return whole[1].upper()
    return (
        _first(_STRONG_RE, text, letters, lower_ok=True)
        or _first(_START_RE, text, letters, lower_ok=True)
        or _first(_WEAK_RE, text, letters, lower_ok=True)
        or _first(_BARE_RE, text, letters, lower_ok=False)
    )


PROFILES: dict[str, Callable[[str, str], str]] = {
    "official": videomme_official,
    "lmms_eval": videomme_lmms_eval,
    "mlvu_official": mlvu_official,
    "robust": robust_letter,
}
"""Profile name -> extraction function; result files record the name they used."""


def extract_letter(response: str, profile: str = "official", letters: str = "ABCD") -> str:
    """The option letter ``response`` gives under ``profile``, or ``""`` when it gives none.

    Raises ``ValueError`` for an unknown profile name (never for any response text).

    >>> extract_letter("The best answer is C", "official"), extract_letter("b", "robust")
    ('C', 'B')
    """
    try:
        rule = PROFILES[profile]
    except KeyError:
        raise ValueError(f"unknown letter profile {profile!r}; known: {sorted(PROFILES)}") from None
    return rule(response, letters)
