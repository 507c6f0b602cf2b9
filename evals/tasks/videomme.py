"""VideoMME: load the lmms-eval/Video-MME parquet and its videos and subtitles.

On disk (HF ``lmms-eval/Video-MME``, formerly ``lmms-lab/Video-MME``, which still resolves;
config ``videomme``, split ``test``)::

    <data_dir>/videomme/test-*.parquet    (or test-*.parquet at the top)
    <data_dir>/{data,videos,video,.}/<videoID>.mp4   (some .MP4 / .mkv)
    <data_dir>/subtitle/<videoID>.srt     (cue text wrapped in <font ...> tags)

With ``media_dir`` (lmms-eval extracts the zips into ``$HF_HOME/videomme``), videos and the
``subtitle/`` folder are looked for there first.

Subtitles: with ``load(..., subtitles=True)`` each sample carries its parsed cues in
``extra["subtitles"]`` (``None`` when the .srt is missing) and its path in
``extra["subtitle_path"]``. Which cues go in the prompt depends on the frames the runner
samples, so the runner builds the prompt with ``prompt_with_subtitles(sample, frame_times)``.
"""

from __future__ import annotations

from pathlib import Path

from evals.formats import read_parquet
from evals.media import MediaIndex
from evals.sample import RecordError, Sample
from evals.scorers.videomme import DEFAULT, PROFILES, aggregate, score
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
    extra: dict = {
        "video_id": str(record.get("video_id", "")),
        "url": record.get("url"),
        "raw_options": [str(o) for o in record["options"]],  # the release letters these again
    }
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


def load(
    data_dir: Path, *, subtitles: bool = False, media_dir: str | Path | None = None
) -> LoadResult:
    """Every row of the test parquet; bad rows in ``errors``, absent videos in ``missing_media``."""
    data_dir = Path(data_dir).resolve()
    files = annotation_files(data_dir)
    media = MediaIndex(data_dir, media_dir=media_dir)
    subtitle_dir = None
    if subtitles:
        existing = [r / d for r in media.roots for d in SUBTITLE_DIRS if (r / d).is_dir()]
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


TASK = Task(
    name="videomme",
    load=load,
    score=score,
    aggregate=aggregate,
    profiles=PROFILES,
    default_profile=DEFAULT,
    category_fields=("duration", "domain", "sub_category", "task_type"),
    context={"overview_frames": 64},
    render_prompt=prompt_with_subtitles,
    description=(
        "Video-MME (lmms-eval/Video-MME, formerly lmms-lab/Video-MME, test): 4-option multiple "
        "choice; official accuracy counts only answered items, lmms-eval counts every item."
    ),
)
