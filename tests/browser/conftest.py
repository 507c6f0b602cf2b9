"""Fixtures for the browser test: Chromium, the built Agent Chat UI, and the running stack.

The test drives Debian's Chromium through Playwright from PyPI (Playwright's own browser
download fails offline) and builds the UI with `setup_chat_ui.sh` once per session (cached in
build/agent-chat-ui/). Without Chromium or node it skips, saying which is missing, except where
PARAVT_BROWSER_REQUIRED=1 (CI sets it): there a missing tool is an error.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.browser.stack import ROOT, running_stack

ARTIFACTS = Path(os.environ.get("PARAVT_BROWSER_ARTIFACTS", ROOT / "build" / "browser-artifacts"))
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


_screenshots_taken = False


def pytest_terminal_summary(terminalreporter):
    if _screenshots_taken and any(ARTIFACTS.glob("*.png")):
        terminalreporter.write_line(f"browser test screenshots: {ARTIFACTS}")


def _missing(what: str) -> None:
    if os.environ.get("PARAVT_BROWSER_REQUIRED") == "1":
        pytest.fail(f"{what} (PARAVT_BROWSER_REQUIRED=1: CI must install it, see .ci/run)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of a Chromium binary: PARAVT_CHROMIUM, else Debian's `chromium`."""
    found = (
        os.environ.get("PARAVT_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    if not found:
        _missing("no chromium binary (apt-get install chromium, or set PARAVT_CHROMIUM)")
    return found


def _ends(log: str, keep: int = 2500) -> str:
    """Both ends of a long log: npm states the cause first and its usage text last."""
    return log if len(log) <= 2 * keep else f"{log[:keep]}\n[...]\n{log[-keep:]}"


@pytest.fixture(scope="session")
def chat_ui() -> Path:
    """The built Agent Chat UI (its dist/ folder), built once and cached under build/."""
    if not (shutil.which("node") and shutil.which("npx")):
        _missing("no node/npm to build Agent Chat UI (apt-get install nodejs npm)")
    result = subprocess.run(
        ["bash", str(ROOT / "tests/browser/setup_chat_ui.sh")],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"building Agent Chat UI failed ({result.returncode}):\n{_ends(result.stderr)}")
    return Path(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go: build/browser-artifacts/ (emptied of old screenshots first)."""
    global _screenshots_taken
    _screenshots_taken = True
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink()
    return ARTIFACTS


@pytest.fixture
def stack(chromium, chat_ui, tmp_path):
    """The nano server, `langgraph dev` and the UI, up and answering (Chromium checked first,
    so that a machine without it skips before the UI build)."""
    try:
        with running_stack(chat_ui, tmp_path) as running:
            yield running
    except RuntimeError as error:  # a server that did not start says why
        pytest.fail(str(error))


@pytest.fixture
def browser_page(chromium, tmp_path):
    """A Playwright page in a fresh Chromium profile."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1280, "height": 1400},
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()
