"""The committed Agent Chat UI pins stay installable with `npm ci` on any later day.

`npm ci` refuses a package.json whose ranges the lockfile's versions no longer satisfy; a
dist-tag such as `latest` stops being satisfied the day its package publishes (turbo did).
"""

from __future__ import annotations

import json
import re

from tests.browser.stack import ROOT

PINS = ROOT / "tests/browser/chat-ui"
DIST_TAG = re.compile(r"^[A-Za-z][\w.-]*$")  # latest, next, canary: not a semver range


def _ranges(manifest: dict) -> dict[str, str]:
    return {**manifest.get("dependencies", {}), **manifest.get("devDependencies", {})}


def test_package_json_has_no_dist_tag_ranges():
    tagged = {
        name: spec
        for name, spec in _ranges(json.loads((PINS / "package.json").read_text())).items()
        if DIST_TAG.match(spec)
    }
    assert not tagged, f"pin these to the lockfile's versions: {tagged}"


def test_lockfile_root_matches_package_json():
    manifest = json.loads((PINS / "package.json").read_text())
    root = json.loads((PINS / "package-lock.json").read_text())["packages"][""]
    assert _ranges(root) == _ranges(manifest)
