"""The committed table of replies where the default reward departs from the release is current,
and every departure has a reason (tests/parity/reward_departures.py rewrites it)."""

from __future__ import annotations

import json

from tests.parity import reward_departures


def test_the_committed_departures_table_is_current_and_explained():
    committed = json.loads(reward_departures.OUT.read_text(encoding="utf-8"))
    assert reward_departures.table() == committed
    reasons = [reason for row in committed for reason in row["reasons"]]
    assert reasons and not [r for r in reasons if r.endswith(reward_departures.UNEXPLAINED)]


def test_the_defects_the_issue_names_are_departures_with_their_reason():
    reasons = {r for row in json.loads(reward_departures.OUT.read_text()) for r in row["reasons"]}
    for needle in ("only calls tools", "prefilled <think>", "record", "conflicting"):
        assert any(needle in r for r in reasons), needle
