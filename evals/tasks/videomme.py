"""VideoMME: load the lmms-lab/Video-MME parquet and its videos and subtitles (scoring below).

On disk (HF ``lmms-lab/Video-MME``, config ``videomme``, split ``test``)::

    <data_dir>/videomme/test-*.parquet    (or test-*.parquet at the top)
    <data_dir>/{data,videos,video,.}/<videoID>.mp4   (some .MP4 / .mkv)
    <data_dir>/subtitle/<videoID>.srt     (cue text wrapped in <font ...> tags)

Subtitles: with ``load(..., subtitles=True)`` each sample carries its parsed cues in
``extra["subtitles"]`` (``None`` when the .srt is missing) and its path in
``extra["subtitle_path"]``. Which cues go in the prompt depends on the frames the runner
samples, so the runner builds the prompt with ``prompt_with_subtitles(sample, frame_times)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from agents.scoring.extract import extract_answer
from agents.scoring.letters import videomme_lmms_eval, videomme_official
from evals.formats import read_parquet
from evals.media import MediaIndex
from evals.sample import RecordError, Sample
from evals.subtitles import read_srt, subtitles_for_frames
from evals.tasks.base import LoadResult, Task

# ----------------------------------------------------------------------------- loading

LETTERS = "ABCD"
FIELDS = ("question_id", "videoID", "duration", "domain", "sub_category", "task_type")
INSTRUCTION = (
    "Select the best answer to the following multiple-choice question based on the video. "
    "Respond with only the letter (A, B, C, or D) of the correct option."
)
SUBTITLE_INSTRUCTION = (
    "Select the best answer to the following multiple-choice question based on the video and "
    "the subtitles. Respond with only the letter (A, B, C, or D) of the correct option."
)
SUBTITLE_HEADER = "This video's subtitles are listed below:"
POST_PROMPT = "The best answer is:"
SUBTITLE_DIRS = ("subtitle", "subtitles")


def annotation_files(data_dir: Path) -> list[Path]:
    """The test parquet shards, in name order."""
    for folder in (data_dir / "videomme", data_dir):
        found = sorted(folder.glob("test-*.parquet"))
        if found:
            return found
    raise FileNotFoundError(
        f"no VideoMME annotations under {data_dir}: expected videomme/test-*.parquet"
    )


def _options(record: dict, source: str, rid: str) -> tuple[str, ...]:
    raw = record.get("options")
    if raw is None or isinstance(raw, str) or len(raw) != len(LETTERS):
        raise RecordError(source, rid, f"options must be a list of 4 strings, got {raw!r}")
    options = []
    for letter, text in zip(LETTERS, raw, strict=True):
        text = str(text).strip()
        options.append(text if text[:2] == f"{letter}." else f"{letter}. {text}")
    return tuple(options)


def build_prompt(question: str, options: tuple[str, ...], subtitles: str | None = None) -> str:
    """The official VideoMME prompt; with a subtitle block when ``subtitles`` is given."""
    body = question + "\n" + "\n".join(options) + "\n" + POST_PROMPT
    if subtitles is None:
        return INSTRUCTION + "\n" + body
    return SUBTITLE_HEADER + "\n" + subtitles + "\n" + SUBTITLE_INSTRUCTION + "\n" + body


def record_to_sample(
    record: dict,
    *,
    source: str,
    media: MediaIndex,
    subtitle_dir: Path | None = None,
) -> Sample:
    """One parquet row as a Sample; ``subtitle_dir`` set means subtitles were asked for."""
    rid = str(record.get("question_id") or "?")
    missing = [f for f in (*FIELDS, "question", "answer") if record.get(f) in (None, "")]
    if missing:
        raise RecordError(source, rid, f"missing field(s) {', '.join(missing)}")
    answer = str(record["answer"]).strip()
    if answer not in LETTERS:
        raise RecordError(source, rid, f"answer {answer!r} is not one of A-D")
    options = _options(record, source, rid)
    video = str(record["videoID"])
    found = media.find(video)
    extra: dict = {"video_id": str(record.get("video_id", "")), "url": record.get("url")}
    if subtitle_dir is not None:
        path = subtitle_dir / f"{video}.srt"
        cues = read_srt(path)
        extra["subtitle_path"] = str(path) if cues is not None else None
        extra["subtitles"] = [c.to_dict() for c in cues] if cues is not None else None
    question = str(record["question"])
    return Sample(
        id=rid,
        media=str(found.resolve()) if found else media.expected(f"{video}.mp4"),
        question=question,
        prompt=build_prompt(question, options),
        kind="multiple_choice",
        target=answer,
        options=options,
        cluster=video,
        categories={f: str(record[f]) for f in ("duration", "domain", "sub_category", "task_type")},
        extra=extra,
    )


def prompt_with_subtitles(
    sample: Sample, frame_times: list[float], *, fps: float | None = None
) -> str:
    """The subtitled prompt for the frames the runner sampled (lmms-eval cue selection);
    the plain prompt for a sample loaded without subtitles."""
    if "subtitles" not in sample.extra:
        return sample.prompt
    block = subtitles_for_frames(sample.extra["subtitles"], frame_times, fps=fps)
    return build_prompt(sample.question, sample.options, subtitles=block)


def load(data_dir: Path, *, subtitles: bool = False) -> LoadResult:
    """Every row of the test parquet; bad rows in ``errors``, absent videos in ``missing_media``."""
    data_dir = Path(data_dir).resolve()
    files = annotation_files(data_dir)
    media = MediaIndex(data_dir)
    subtitle_dir = None
    if subtitles:
        existing = [data_dir / d for d in SUBTITLE_DIRS if (data_dir / d).is_dir()]
        subtitle_dir = existing[0] if existing else data_dir / SUBTITLE_DIRS[0]
    samples, errors, missing = [], [], {}
    for path in files:
        for record in read_parquet(path):
            try:
                sample = record_to_sample(
                    record, source=str(path), media=media, subtitle_dir=subtitle_dir
                )
            except RecordError as err:
                errors.append(err)
                continue
            if not Path(sample.media).is_file():
                missing.setdefault(sample.media, None)
            samples.append(sample)
    notes: dict = {"format": "parquet", "subtitles": subtitles}
    if subtitles:
        notes["subtitles_missing"] = sorted(
            {s.cluster for s in samples if s.extra.get("subtitles") is None}
        )
    return LoadResult(samples, errors, list(missing), [str(p) for p in files], notes)


# ----------------------------------------------------------------------------- scoring
#
# Every scorer reads the answer text of the turn first (agents.scoring.extract_answer: the
# answer block, else the text after </think>, else the last line), then the profile's letter
# rule. The two references differ in their prefix lists and in the denominator:
#
# - official: VideoMME's ``extract_characters_regex`` (its glued prefix strings kept) and
#   accuracy over the items that gave a letter, as ``eval_your_results.py`` reports it
#   ("answered"; 0 when no item gave one, as that script prints).
# - lmms_eval: lmms-eval's pre-2026 rule (six prefixes, so "Answer: C" reads as A) and
#   accuracy over every item, an item without a letter counting wrong.

LETTER_RULES: dict[str, Callable[[str, str], str]] = {
    "official": videomme_official,
    "lmms_eval": videomme_lmms_eval,
}
"""Profile -> letter extraction over the answer text."""

ONLY_ANSWERED = {"official": True, "lmms_eval": False}
"""Profile -> whether accuracy divides by the items that gave a letter (else by all items)."""


def _profile_rule(profile: str) -> Callable[[str, str], str]:
    try:
        return LETTER_RULES[profile]
    except KeyError:
        known = ", ".join(LETTER_RULES)
        raise ValueError(f"videomme has no profile {profile!r}; known: {known}") from None


def score(response: str, sample: Sample, profile: str = "official") -> dict[str, float]:
    """``correct`` (1.0/0.0) and ``extracted`` (a letter was found) for one whole turn.

    >>> s = Sample("001-1", "", "q", "p", "multiple_choice", "C")
    >>> score("<think>B or C?</think><answer>C</answer>", s)
    {'score': 1.0, 'correct': 1.0, 'extracted': 1.0}
    >>> score("Answer: C", s)["correct"], score("Answer: C", s, "lmms_eval")["correct"]
    (1.0, 0.0)
    """
    letter = _profile_rule(profile)(extract_answer(response), LETTERS)
    correct = float(letter == sample.target)
    return {"score": correct, "correct": correct, "extracted": float(bool(letter))}


def aggregate(
    samples: Sequence[Sample], metrics: Sequence[Mapping[str, float]], profile: str = "official"
) -> dict[str, float]:
    """``accuracy`` under the profile's denominator, and ``answered`` (share with a letter).

    With no items at all both are NaN (nothing to judge).

    >>> s = Sample("001-1", "", "q", "p", "multiple_choice", "C")
    >>> m = [score("C", s), score("I cannot tell from these frames.", s)]
    >>> aggregate([s, s], m)["accuracy"], aggregate([s, s], m, "lmms_eval")["accuracy"]
    (1.0, 0.5)
    """
    _profile_rule(profile)
    n = len(metrics)
    if n == 0:
        return {"accuracy": math.nan, "answered": math.nan}
    correct = sum(m["correct"] for m in metrics)
    answered = sum(m["extracted"] for m in metrics)
    denominator = answered if ONLY_ANSWERED[profile] else n
    accuracy = correct / denominator if denominator else 0.0
    return {"accuracy": accuracy, "answered": answered / n}


TASK = Task(
    name="videomme",
    load=load,
    score=score,
    aggregate=aggregate,
    primary="accuracy",
    profiles=("official", "lmms_eval"),
    category_fields=("duration", "domain", "sub_category", "task_type"),
    context={"overview_frames": 64},
    render_prompt=prompt_with_subtitles,
    description=(
        "Video-MME (lmms-lab/Video-MME, test): 4-option multiple choice; official accuracy "
        "counts only answered items, lmms_eval counts every item."
    ),
)
