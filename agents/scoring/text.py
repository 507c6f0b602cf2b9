"""Open-ended answer metrics: SQuAD v1.1 exact match and token F1, ANLS, relaxed match.

``squad_exact_match`` / ``squad_f1`` are SQuAD v1.1 exactly (the ``squad`` eval profile).
``exact_match`` / ``token_f1`` are this project's (the RL reward's and the needle
benchmark's), each returning None when the gold answer is blank ("cannot judge": a data
problem, not a wrong prediction), and departing from SQuAD twice: punctuation and symbols
are dropped in any script (``"在做饭。"`` matches ``"在做饭"``; SQuAD drops only ASCII
punctuation), and a gold that normalises to nothing ("A", "The", "...") is compared
case-folded with whitespace collapsed, instead of letting "the" or "" match the gold "A"
(a defect of the public ParaVT release).
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter

_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
_NUMBER_RE = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_THOUSANDS_RE = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation: lower case, drop punctuation, drop a/an/the, collapse spaces.

    >>> normalize_answer("The  Cat's hat!")
    'cats hat'
    """
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES_RE.sub(" ", text).split())


def squad_exact_match(pred: str, gold: str) -> bool:
    """SQuAD v1.1's ``exact_match_score`` exactly (huggingface/evaluate@a7dd338
    ``metrics/squad/compute_score.py``): a gold that normalises to "" matches "" too.

    >>> squad_exact_match("the", "A"), squad_exact_match("The Cat.", "cat")
    (True, True)
    """
    return normalize_answer(pred) == normalize_answer(gold)


def squad_f1(pred: str, gold: str) -> float:
    """SQuAD v1.1's ``f1_score`` exactly: shared tokens as a multiset, 0 when none.

    >>> squad_f1("red red car", "red car")
    0.8
    """
    pred_tokens, gold_tokens = normalize_answer(pred).split(), normalize_answer(gold).split()
    shared = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if shared == 0:
        return 0
    precision, recall = 1.0 * shared / len(pred_tokens), 1.0 * shared / len(gold_tokens)
    return (2 * precision * recall) / (precision + recall)


def _plain(text: str) -> str:
    """SQuAD's normalisation with punctuation and symbols of every script removed."""
    text = "".join(ch for ch in text.lower() if unicodedata.category(ch)[0] not in "PS")
    return " ".join(_ARTICLES_RE.sub(" ", text).split())


def _comparable(pred: str, gold: str) -> tuple[str, str]:
    norm_gold = _plain(gold)
    if norm_gold:
        return _plain(pred), norm_gold
    return " ".join(pred.lower().split()), " ".join(gold.lower().split())


def exact_match(pred: str, gold: str) -> float | None:
    """1.0 when the normalised strings are equal, else 0.0; None for a blank gold.

    >>> exact_match("the Eiffel Tower.", "Eiffel tower"), exact_match("the", "A")
    (1.0, 0.0)
    >>> exact_match("在做饭。", "在做饭")
    1.0
    """
    if not gold.strip():
        return None
    left, right = _comparable(pred, gold)
    return float(left == right)


def token_f1(pred: str, gold: str) -> float | None:
    """SQuAD v1.1 token F1: shared tokens counted as a multiset; None for a blank gold.

    >>> token_f1("red red car", "red car")
    0.8
    >>> token_f1("the cat sat", "a dog ran")
    0.0
    """
    if not gold.strip():
        return None
    left, right = _comparable(pred, gold)
    pred_tokens, gold_tokens = left.split(), right.split()
    shared = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(pred_tokens), shared / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def _levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        previous = current
    return previous[-1]


def anls(pred: str, gold: str, threshold: float = 0.5) -> float | None:
    """ANLS for one pair: 1 - normalised Levenshtein distance when that distance is below
    ``threshold``, else 0.0. Case-insensitive, outer whitespace stripped and inner runs
    collapsed (as the ``anls`` package that ChartQAPro uses); None for a blank gold.

    >>> anls("Eifel tower", "Eiffel Tower")
    0.9166666666666666
    >>> anls("Paris", "Eiffel Tower")
    0.0
    """
    if not gold.strip():
        return None
    left, right = (" ".join(s.lower().split()) for s in (pred, gold))
    longest = max(len(left), len(right))
    if abs(len(left) - len(right)) / longest >= threshold:  # distance >= length gap
        return 0.0
    distance = _levenshtein(left, right) / longest
    return 1.0 - distance if distance < threshold else 0.0


def _number(text: str) -> float | None:
    """ChartQAPro's reading: strip spaces and "%" (the value is kept, not divided by 100)."""
    text = text.strip().strip("%").strip()
    if _THOUSANDS_RE.fullmatch(text):
        text = text.replace(",", "")
    if not _NUMBER_RE.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def relaxed_match(pred: str, gold: str, tolerance: float = 0.05) -> float | None:
    """Relaxed accuracy: numbers within ``tolerance`` relative error of the gold (a gold of 0
    needs exactly 0), other answers by exact match after normalisation; None for a blank gold.

    Numbers may carry "%" and thousands commas ("1,234"); "%" is dropped on both sides.

    >>> relaxed_match("10.4", "10"), relaxed_match("11", "10"), relaxed_match("0.0", "0")
    (1.0, 0.0, 1.0)
    >>> relaxed_match("The Yes.", "yes")
    1.0
    """
    if not gold.strip():
        return None
    gold_value, pred_value = _number(gold), _number(pred)
    if gold_value is not None and pred_value is not None:
        if gold_value == 0:
            return float(pred_value == 0)
        return float(abs(pred_value - gold_value) / abs(gold_value) <= tolerance)
    return exact_match(pred, gold)
