"""The ``release`` reward is the ParaVT release's ``compose_reward`` bit for bit, under both
shipped recipes, on every reply of the reward corpus where the release does not raise
(tests/data/parity/rewards_*.json: the release's own outputs)."""

from __future__ import annotations

import pytest

from agents.protocol import THINK_PREFIX
from tests.parity.data import corpus, disagreements, reference
from tests.parity.ref_paravt import reward_corpus, sha1
from training.release_reward import RECIPES, release_reward
from training.rewards import RewardSettings, total_reward


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_release_reward_matches_compose_reward(recipe):
    doc = reference(f"rewards_{recipe}")
    episodes = {item["id"]: item for item in reward_corpus(corpus())}
    assert len(doc["items"]) + len(doc["raised"]) == len(episodes)
    rows = []
    for item in doc["items"]:
        episode = episodes[item["id"]]
        assert sha1(episode["completion"]) == item["completion_sha1"]  # the same input text
        total, parts = release_reward(
            episode["completion"], episode["answer"], episode["question_type"], RECIPES[recipe]
        )
        rows.append((item["id"], {"total": total, **parts}, item["out"]))
    assert not disagreements(rows)


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_where_the_release_raises_it_raises_here_too(recipe):
    episodes = {item["id"]: item for item in reward_corpus(corpus())}
    raised = reference(f"rewards_{recipe}")["raised"]
    assert raised  # the corpus holds replies such as "12.4, 20.0."
    for row in raised:
        episode = episodes[row["id"]]
        with pytest.raises(ValueError):
            release_reward(
                episode["completion"], episode["answer"], episode["question_type"], RECIPES[recipe]
            )


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_recipes_hold_what_apply_paravt_config_sets(recipe):
    env, ours = reference(f"rewards_{recipe}")["env"], RECIPES[recipe]
    assert (ours.answer_suffix, ours.anchor_weight, ours.format_weight, ours.mode) == (
        env["ANSWER_SUFFIX"] == "1",
        float(env["ANCHOR_WEIGHT"]),
        float(env["FORMAT_WEIGHT"]),
        env["REWARD_MODE"],
    )


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_an_episode_cut_off_at_its_token_cap_is_rewarded_as_the_release_rewards_it(recipe):
    """The last turn opens a call and is cut off after complete JSON: the release's decoded
    tokens then end without <|im_end|>, and its reader takes the open call. The profile path
    (`total_reward` with each turn's finish) reads the same text."""
    release = RECIPES[recipe]
    episodes = {item["id"]: item for item in reward_corpus(corpus())}
    source = {e["id"]: e for family in corpus().values() for e in family}
    cut = [i for i in reference(f"rewards_{recipe}")["items"] if i["id"].endswith("-cut")]
    assert len(cut) > 100
    credited = 0
    for item in cut:
        episode = episodes[item["id"]]
        settings = RewardSettings(
            profile="release",
            prefill=THINK_PREFIX if episode["prefilled"] else None,
            answer_suffix=release.answer_suffix,
            lambda_fmt=release.format_weight,
            lambda_anchor=release.anchor_weight,
            release_im_end=episode["im_end"],
        )
        turns = [settings.prefill + t if settings.prefill else t for t in episode["turns"]]
        gold = source[item["id"].removeprefix("rw-").removesuffix("-cut")]["gold"]
        target = tuple(gold) if episode["kind"] == "grounding" else gold
        kind = {"mc": "multiple_choice"}.get(episode["kind"], episode["kind"])
        kind = "open_ended" if kind == "open" else kind
        parts = total_reward(
            turns, kind=kind, target=target, settings=settings, stopped=episode["stopped"]
        )
        assert parts.total == pytest.approx(item["out"]["total"], abs=1e-12), item["id"]
        assert parts.tool == pytest.approx(item["out"]["tool_reward"], abs=1e-12), item["id"]
        credited += item["out"]["tool_reward"] > 0
    assert credited > 50  # the open call earns the parseable-call credit in the release
