"""SlideVQA and VQAonline: loaders on small fixtures in the real formats (tiny images made
here) and tables of messy model outputs per scorer; the contract every document task keeps
(ChartQAPro's own tests: test_doc_chartqapro.py)."""

from __future__ import annotations

import doctest
import json
import math
from pathlib import Path

import pytest

from evals.results import by_category, per_item_stats
from evals.sample import Sample
from evals.scorers import chartqapro as chartqapro_scoring
from evals.scorers import slidevqa as slidevqa_scoring
from evals.tasks import chartqapro, documents, slidevqa, vqaonline
from tests.support.downloads import (
    DOC_FIXTURES,
    image_bytes,
    place_image,
    problems,
    stage,
    write_parquet,
)

TASKS = (chartqapro.TASK, slidevqa.TASK, vqaonline.TASK)


def test_doctests_pass():
    for module in (chartqapro_scoring, slidevqa_scoring, vqaonline):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__


# ----------------------------------------------------------------------------- answer format


@pytest.mark.parametrize(
    ("response", "text", "formatted"),
    [
        ("Final Answer: 42", "42", True),
        ("The bars show it.\nFinal Answer: 1,234", "1,234", True),
        ("final answer:   Paris ", "Paris", True),
        ("**Final Answer:** ['Asia', 'Europe']", "['Asia', 'Europe']", True),
        ("FINAL ANSWER : yes", "yes", True),
        ("<think>maybe 3?</think>\nFinal Answer: 3", "3", True),
        ("<answer>Final Answer: 2016</answer>", "2016", True),
        ("Reasoning.\n42", "42", False),
        ("The final answer is 42", "The final answer is 42", False),
        ("", "", False),
    ],
)
def test_final_answer_strips_the_board_study_prefix(response, text, formatted):
    assert documents.final_answer(response) == (text, formatted)


# ----------------------------------------------------------------------------- SlideVQA


@pytest.mark.parametrize(
    ("prediction", "gold", "question", "em", "f1"),
    [
        ("Yes, it is.", "yes", "Is it growing?", 1.0, 1.0),
        ("No, they don't", "No", "Do they?", 1.0, 1.0),  # yes/no truncation
        ("Three", "3", "What is the count?", 1.0, 1.0),  # number words
        ("nineteen", "19", "What is the count?", 1.0, 1.0),
        ("45 percent", "45%", "What share?", 1.0, 1.0),
        ("12 regions", "12", "In how many regions is it sold?", 1.0, 1.0),  # unit removed
        ("12 regions", "12", "How many regions?", 0.0, 2 / 3),  # capital "How": no removal
        ("country Japan", "Japan", "In which country is it?", 1.0, 1.0),
        ("The Beatles", "beatles", "Who?", 1.0, 1.0),
        ("sales and marketing", "sales & marketing", "What?", 1.0, 1.0),
        ("due to rain", "rain", "Why?", 1.0, 1.0),
        ("5 hours", "5 hrs", "How long?", 1.0, 1.0),
        ("2 times", "two", "How often?", 0.0, 2 / 3),
        ("", "3", "What?", 0.0, 0.0),
        ("Paris", "London", "Where?", 0.0, 0.0),
    ],
)
def test_slidevqa_official_normalisation(prediction, gold, question, em, f1):
    got = slidevqa_scoring.official_scores(prediction, gold, question)
    assert (got["em"], got["f1"]) == pytest.approx((em, f1))


@pytest.mark.parametrize(
    ("response", "target", "robust", "official"),
    [
        # official columns: nttmdlab-nlp/SlideVQA@e1f0bd9 evaluate.py on the same replies
        ("Final Answer: Three", "3", (1.0, 1.0), (0.0, 0.5)),
        (
            "Reasoning.\nFinal Answer: The Cloud Strategy.",
            "Cloud Strategy",
            (1.0, 1.0),
            (0.0, 4 / 7),
        ),
        ("Final Answer: yes, it grows", "Yes", (1.0, 1.0), (0.0, 1 / 3)),
        ("<answer>45 percent</answer>", "45%", (1.0, 1.0), (0.0, 0.0)),
        ("I am not sure.", "finance", (0.0, 0.0), (0.0, 0.0)),
    ],
)
def test_slidevqa_score_on_messy_outputs(response, target, robust, official):
    sample = Sample("1", "", "What is it?", "p", "open_ended", target)
    for profile, (em, f1) in (("robust", robust), ("official", official)):
        got = slidevqa.score(response, sample, profile).metrics
        assert (got["em"], got["f1"]) == pytest.approx((em, f1)), profile
        assert got["score"] == got["em"]
    with pytest.raises(ValueError, match="no profile"):
        slidevqa.score("x", sample, "paper")
    with pytest.raises(ValueError, match="no profile"):
        slidevqa.score("x", sample, "lmms_eval")


def test_slidevqa_loads_github_jsonl_with_deck_folders(tmp_path):
    root = stage("slidevqa", tmp_path, DOC_FIXTURES)
    deck = root / "images" / "test" / "cloud-strategy-2019"
    for page in (1, 2):  # page 3 was never downloaded
        place_image(deck, f"cloud-strategy-2019-{page}-1024.jpg", (page * 60, 10, 10))
    place_image(root, "images/test/hr-onboarding/hr-onboarding-1-1024.jpg")
    result = slidevqa.load(root)
    assert [s.id for s in result.samples] == ["1001", "1002", "1003", "2001"]
    assert problems(result) == {
        "2002": "evidence_pages outside 1-20: [25]",
        "2003": "missing field(s) answer",
        "2004": "no page images (page_1..page_20 or image_urls)",
    }
    by_id = {s.id: s for s in result.samples}
    page = {n: str(deck / f"cloud-strategy-2019-{n}-1024.jpg") for n in (1, 2, 3)}
    assert by_id["1001"].media == page[2]  # the evidence page
    assert by_id["1002"].media == page[1]  # the lowest evidence page, 3 and 1
    assert by_id["1002"].extra["evidence_pages"] == [1, 3]
    assert by_id["1003"].media == page[1]  # no evidence pages: page 1
    assert by_id["1001"].extra["pages"] == [page[1], page[2]]
    assert by_id["1001"].extra["page_numbers"] == [1, 2]
    assert by_id["1001"].extra["missing_pages"] == [3]
    hr_page_2 = root / "images" / "test" / "hr-onboarding" / "hr-onboarding-2-1024.jpg"
    assert result.missing_media == [str(hr_page_2)]  # 2001's evidence page is absent
    assert by_id["2001"].cluster == "hr-onboarding"
    assert by_id["1002"].categories == {"reasoning_type": "multi-hop", "answer_type": "Single-span"}
    assert result.notes["missing_pages"] == 3 + 1
    assert by_id["1001"].prompt.endswith(documents.ANSWER_FORMAT)


def test_slidevqa_loads_hf_parquet_pages(tmp_path):
    pages = {f"page_{n}": None for n in range(1, 21)}
    pages.update(
        {f"page_{n}": {"bytes": image_bytes((n * 50, 0, 0)), "path": None} for n in (1, 2, 3)}
    )
    base = {"deck_name": "deck-a", "arithmetic_expression": None, "answer_type": "Non-span"}
    rows = [
        {
            **base,
            **pages,
            "qa_id": 7,
            "question": "How many?",
            "answer": "4",
            "evidence_pages": [3],
        },
        {**base, **pages, "qa_id": 8, "question": "What?", "answer": "x", "evidence_pages": []},
    ]
    write_parquet(tmp_path / "data" / "test-00000-of-00001.parquet", rows)
    result = slidevqa.load(tmp_path)
    assert result.errors == [] and result.missing_media == []
    first, second = result.samples
    assert first.id == "7" and first.extra["page_numbers"] == [1, 2, 3]
    assert first.extra["media_page"] == 3 and second.extra["media_page"] == 1
    assert first.media == second.media == str(tmp_path / "decks" / "deck-a")  # a whole deck
    linked = sorted(Path(first.media).iterdir())
    assert [p.name for p in linked] == ["page_01.png", "page_02.png", "page_03.png"]
    assert [p.resolve() for p in linked] == [Path(p).resolve() for p in first.extra["pages"]]
    assert first.extra["pages"] == second.extra["pages"]  # one file per distinct page
    assert all(Path(p).is_file() for p in first.extra["pages"])
    assert first.extra["missing_pages"] == []


# ----------------------------------------------------------------------------- VQAonline


@pytest.mark.parametrize(
    ("response", "target", "em", "f1"),
    [
        ("Final Answer: A border collie mix.", "A border collie mix.", 1.0, 1.0),
        ("Final Answer: border collie", "A border collie mix.", 0.0, 0.8),
        ("It is probably an oleander.", "Looks like Nerium oleander.", 0.0, 0.25),
        ("Final Answer:", "A bird.", 0.0, 0.0),
    ],
)
def test_vqaonline_squad_scores(response, target, em, f1):
    got = vqaonline.score(response, Sample("1", "", "q", "p", "open_ended", target), "robust")
    assert (got.metrics["exact_match"], got.metrics["f1"]) == pytest.approx((em, f1))
    assert got.metrics["score"] == got.metrics["f1"]


def test_vqaonline_loads_json_list(tmp_path):
    root = stage("vqaonline", tmp_path, DOC_FIXTURES)
    place_image(root, "images1/fruit_uyuni.png")
    place_image(root, "images/plant_morocco.png", (0, 120, 0))
    result = vqaonline.load(root)
    assert [s.id for s in result.samples] == ["0", "1", "2"]
    assert set(problems(result)) == {"3", "4", "5"}
    assert "answer" in problems(result)["3"] and "image" in problems(result)["4"]
    assert result.missing_media == [str(root / "lost_image.png")]
    first, second = result.samples[:2]
    assert first.media == str(root / "images1" / "fruit_uyuni.png")
    assert second.media == str(root / "images" / "plant_morocco.png")
    assert "Context: Fruit diameter" in first.prompt and "Context:" not in second.prompt
    assert first.categories == {"topic": "biology"}


def test_vqaonline_loads_an_object_of_records(tmp_path):
    records = {"4360": {"image": "a.png", "question": "What?", "context": "", "answer": "A."}}
    (tmp_path / "test.json").write_text(json.dumps(records))
    place_image(tmp_path, "a.png")
    result = vqaonline.load(tmp_path)
    assert [s.id for s in result.samples] == ["4360"] and result.missing_media == []


# ----------------------------------------------------------------------------- contract


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_tasks_follow_the_runner_contract(task):
    assert task.default_profile in task.profiles
    samples = [
        Sample(
            "a",
            "",
            "What?",
            "p",
            "open_ended",
            "42",
            categories={"question_type": "Factoid"},
            cluster="c1",
            extra={"year_flags": ["NO"]},
        ),
        Sample(
            "b",
            "",
            "What?",
            "p",
            "open_ended",
            "Asia",
            categories={"question_type": "Factoid"},
            cluster="c1",
            extra={"year_flags": ["NO"]},
        ),
    ]
    for profile in task.profiles:
        metrics = [task.score("42", s, profile).metrics for s in samples]
        assert all("score" in m for m in metrics)
        out = task.aggregate(samples, metrics, profile)
        primary = task.primary_for(profile)
        scale = 100 if primary in ("exact_match", "f1") else 1  # SQuAD reports x100
        assert out[primary] == pytest.approx(0.5 * scale)
        assert math.isnan(task.aggregate([], [], profile)[primary])
        assert per_item_stats(samples, metrics)["score"]["mean"] == pytest.approx(0.5)
        by_category(task, samples, metrics, profile)
    with pytest.raises(ValueError, match="no profile"):
        task.aggregate(samples, metrics, "vlmeval")
    assert task.description
