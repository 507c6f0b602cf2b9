"""Agent Chat UI (create-agent-chat-app 0.1.6) as a test reads it, through Playwright.

`transcript()` reads the rendered thread back as plain data: human bubbles, AI messages with
their text and their tool-call cards (name, id, argument table), and tool-result cards (name,
call id, content). `explain()` turns what the page shows, what the server holds for the
thread, a screenshot and the servers' logs into one failure message.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx

from tests.browser.stack import Stack

# The page's own structure in this pinned version: the message list, each entry's kind, the
# text of an AI message (div.py-1), its tool-call cards, and the tool-result cards.
_TRANSCRIPT_JS = """() => {
  const list = document.querySelector("div.pt-8.pb-16.max-w-3xl");
  if (!list) return [];
  const text = (el) => (el ? (el.innerText ?? el.textContent).trim() : "");
  return Array.from(list.children).map((el) => {
    if (el.classList.contains("ml-auto")) return {kind: "human", text: text(el.querySelector("p"))};
    if (el.querySelector(":scope > div.rounded-2xl.bg-muted")) return {kind: "loading"};
    const result = Array.from(el.querySelectorAll("h3")).find(
      (h) => h.innerText.startsWith("Tool Result"));
    if (result) {
      const card = result.closest("div.border");
      const header = card.firstElementChild;
      const id = Array.from(header.querySelectorAll("code")).find((c) => !result.contains(c));
      return {kind: "tool", name: text(result.querySelector("code")), id: text(id),
              text: text(header.nextElementSibling)};
    }
    const calls = Array.from(el.querySelectorAll("div.space-y-4 > div.border")).map((card) => {
      const h3 = card.querySelector("h3");
      const args = {};
      card.querySelectorAll("tr").forEach((tr) => {
        const cells = tr.querySelectorAll("td");
        if (cells.length === 2) args[text(cells[0])] = text(cells[1]);
      });
      return {name: text(h3.firstChild), id: text(h3.querySelector("code")), args};
    });
    return {kind: "ai", text: text(el.querySelector("div.py-1")), tool_calls: calls};
  });
}"""


class ChatPage:
    """One browser tab on the chat UI, bound to the stack it talks to."""

    def __init__(self, page, stack: Stack, artifacts: Path):
        self.page, self.stack, self.artifacts = page, stack, artifacts
        self.problems: list[str] = []  # console errors and failed requests, for explain()
        page.on("console", self._console)
        page.on("response", self._response)

    def _console(self, message) -> None:
        if message.type == "error" and "Failed to load resource" not in message.text:
            self.problems.append(f"console error: {message.text}")

    def _response(self, response) -> None:
        # The stock index.html links /src/styles.css, which the vite build leaves out.
        if response.status >= 400 and not response.url.endswith("/src/styles.css"):
            self.problems.append(
                f"HTTP {response.status}: {response.request.method} {response.url}"
            )

    def open(self, assistant_id: str = "paravt") -> None:
        self.page.goto(self.stack.chat_url(assistant_id))
        self.page.get_by_placeholder("Type your message...").wait_for(timeout=60_000)

    def send(self, text: str) -> None:
        self.page.get_by_placeholder("Type your message...").fill(text)
        self.page.get_by_role("button", name="Send").click()

    @property
    def thread_id(self) -> str | None:
        return parse_qs(urlparse(self.page.url).query).get("threadId", [None])[0]

    def transcript(self) -> list[dict]:
        return self.page.evaluate(_TRANSCRIPT_JS)

    def loading(self) -> bool:
        return self.page.get_by_role("button", name="Cancel").count() > 0

    def toasts(self) -> list[str]:
        return [t.inner_text() for t in self.page.locator("[data-sonner-toast]").all()]

    def runs(self) -> list[dict]:
        """The thread's runs as the server lists them (newest first)."""
        if not self.thread_id:
            return []
        response = httpx.get(f"{self.stack.api_url}/threads/{self.thread_id}/runs", timeout=10)
        return response.json() if response.status_code == 200 else []

    def wait_for_reply(self, humans: int, timeout: float = 300) -> bool:
        """Wait until the page shows `humans` human messages, the server has finished every run
        on the thread, and the UI has stopped loading; False if `timeout` passes first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = sum(e["kind"] == "human" for e in self.transcript())
            runs = self.runs()
            busy = any(r.get("status") in ("pending", "running") for r in runs)
            if shown >= humans and len(runs) >= humans and not busy and not self.loading():
                return True
            time.sleep(1)
        return False

    def hide_tool_calls(self, hide: bool) -> None:
        switch = self.page.locator("#render-tool-calls")
        if (switch.get_attribute("aria-checked") == "true") != hide:
            switch.click()
        self.page.wait_for_function(
            "(want) => document.querySelector('#render-tool-calls')"
            ".getAttribute('aria-checked') === want",
            arg=str(hide).lower(),
        )

    def screenshot(self, name: str) -> Path:
        path = self.artifacts / f"{name}.png"
        self.page.screenshot(path=str(path))
        return path

    def server_messages(self) -> str:
        """The thread's messages in the server's state, one short line each."""
        if not self.thread_id:
            return "(no thread id in the page's URL)"
        response = httpx.get(f"{self.stack.api_url}/threads/{self.thread_id}/state", timeout=10)
        if response.status_code != 200:
            return f"(GET /threads/{self.thread_id}/state: HTTP {response.status_code})"
        messages = (response.json().get("values") or {}).get("messages")
        if messages is None:
            keys = sorted((response.json().get("values") or {}).keys())
            return f"(no `messages` key in the thread's state; its keys: {keys})"
        return (
            "\n".join(
                f"  {m.get('type')}: tool_calls={len(m.get('tool_calls') or [])} "
                f"{_short(m.get('content'))}"
                for m in messages
            )
            or "  (none)"
        )

    def explain(self, headline: str) -> str:
        """`headline`, then what the UI showed, the server's view, a screenshot, the logs."""
        shot = self.screenshot(f"failure-{int(time.time())}")
        runs = [f"{r.get('status')}" for r in self.runs()]
        return "\n".join(
            [
                headline,
                f"The UI showed (thread {self.thread_id}, still loading: {self.loading()}):",
                describe(self.transcript()),
                f"Toasts: {self.toasts() or 'none'}",
                f"Browser errors: {self.problems[-5:] or 'none'}",
                f"Runs on the server (newest first): {runs or 'none'}",
                "Messages in the server's thread state:",
                self.server_messages(),
                f"Screenshot: {shot}",
                self.stack.log_tails(),
            ]
        )


def describe(transcript: list[dict]) -> str:
    """The transcript as numbered lines, as a reader of the page would summarise it."""
    lines = []
    for n, entry in enumerate(transcript, 1):
        kind = entry["kind"]
        if kind == "ai":
            calls = "; ".join(
                f"{c['name']}({json.dumps(c['args'])}) id={c['id']}" for c in entry["tool_calls"]
            )
            extra = f" + tool-call cards: {calls}" if calls else ""
            lines.append(f"  {n}. ai: {_short(entry['text'])}{extra}")
        elif kind == "tool":
            lines.append(
                f"  {n}. tool result {entry['name']} ({entry['id']}): {_short(entry['text'])}"
            )
        elif kind == "human":
            lines.append(f"  {n}. human: {_short(entry['text'])}")
        else:
            lines.append(f"  {n}. (loading indicator)")
    return "\n".join(lines) or "  (no messages)"


def _short(content, limit: int = 200) -> str:
    text = content if isinstance(content, str) else json.dumps(content)
    text = " ".join(text.split())
    return json.dumps(text[:limit] + ("..." if len(text) > limit else ""))
