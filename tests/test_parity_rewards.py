"""The ``release`` reward is the ParaVT release's ``compose_reward`` bit for bit, under both
shipped recipes, on every reply of the reward corpus where the release does not raise
(tests/data/parity/rewards_*.json: the release's own outputs)."""

from __future__ import annotations

import pytest

from tests.parity.data import corpus, disagreements, reference
from tests.parity.ref_paravt import reward_corpus, sha1
from training.release_reward import RECIPES, release_reward


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
