"""How a run is shown and reported: the live display, the verdict, and the JSON record."""

from __future__ import annotations

import functools
from typing import Any

from rich.console import Console
from rich.markup import escape

from agents.protocol import parse, with_prefix
from agents.scoring.accuracy import accuracy_reward
from agents.synthetic import QAItem
from agents.terminal_text import plain
from graphs.chat_view import plain_answer
from graphs.runs.run import RunResult


class RunDisplay:
    """Prints a run as it happens from the graph's node updates: overview frames, each main
    turn (think text, parallel windows), each sub-agent's note, with per-call timings."""

    def __init__(self, out: Console):
        self.out = out
        # rich's default highlighter runs a dozen regexes over every line (about 3 ms a line);
        # emoji codes in model text stay text; the terminal wraps lines itself (rich's own
        # wrapping is half the cost of a line)
        self.print = functools.partial(out.print, highlight=False, emoji=False, soft_wrap=True)
        self.colour = out.color_system is not None  # rich's call: a terminal, NO_COLOR unset
        self.sub_calls: dict[str, dict[str, Any]] = {}  # "sub:turn:index" -> model call
        self.options: list[str] = []  # the question's options: a letter is shown with its text

    def __call__(self, node: str, values: dict[str, Any]) -> None:
        if node == "prepare" and values.get("refusal"):
            self._write(f"{self._paint('refused', 'red')} {_plain(values['refusal'])}")
        elif node == "prepare":
            self.options = list(values.get("options") or [])
            times = ", ".join(f"{t:g}" for t in values["overview"]["timestamps"])
            self._write(
                f"{self._paint('overview', 'cyan')} {len(values['overview']['timestamps'])} "
                f"frames at {times} s of a {values['duration']:g} s video"
            )
        elif node == "main_agent":
            self._main_turn(values)
        elif node in ("sub_agent", "verify_gate"):  # a note comes from whichever posted it
            self.sub_calls.update({c["agent"]: c for c in values.get("model_calls", [])})
            for result in values.get("tool_results", []):
                self._note(result)

    def _main_turn(self, values: dict[str, Any]) -> None:
        call = values["model_calls"][0]
        text, prefill = call["completion"]["text"], call["prefill"]
        text = with_prefix(text, prefill) if prefill else text  # the turn as the model wrote it
        think = parse(text).think
        label, shown = ("think", think) if think else ("wrote", text)  # no think: show the text
        lines = [
            f"{self._paint('main agent', 'cyan')} turn {call['turn']}: {_timing(call)}",
            f"  {label}: {_plain(_short(' '.join(shown.split()), 200))}",
        ]
        served = [c for c in values.get("calls", []) if c["error"] is None]
        if served:
            windows = ", ".join(f"{c['start']:g}-{c['end']:g} s" for c in served)
            lines.append(f"  {len(served)} parallel crop_video calls: {windows}")
        for refused in (c for c in values.get("calls", []) if c["error"] is not None):
            lines.append(
                f"  {self._paint('refused', 'red')} call #{refused['index']}: "
                f"{_plain(refused['error'])}"
            )
        if values.get("status") in ("answered", "no_answer"):
            answer = values.get("answer")
            shown = plain_answer(answer, self.options) if answer else answer
            lines.append(f"  {values['status']}: {_plain(repr(shown))}")
        self._write("\n".join(lines))

    def _note(self, result: dict[str, Any]) -> None:
        call = self.sub_calls.get(f"sub:{result['turn']}:{result['index']}")
        timing = f", {_timing(call)}" if call else ""
        verdict = f" [{result['verdict']}]" if result["verdict"] else ""
        self._write(
            f"{self._paint('sub-agent', 'cyan')} #{result['index']} "
            f"{result['start']:g}-{result['end']:g} s ({len(result['timestamps'])} frames"
            f"{timing}){verdict}: {_plain(_short(result['content'], 160))}"
        )

    def _paint(self, text: str, style: str) -> str:
        return f"\x1b[{_SGR[style]}m{text}\x1b[0m" if self.colour else text

    def _write(self, text: str) -> None:
        """Write display lines as they are. A rich print is a render pass of 0.3-0.9 ms a
        line, on the run's path between graph steps; these lines need only a colour."""
        self.out.file.write(text + "\n")
        self.out.file.flush()

    def summary(
        self, result: RunResult, *, wall_s: float, expected: str | None, correct: bool | None
    ) -> None:
        """The answer (a letter with its option's text), its verdict against the expected
        answer (if any), and the run's cost."""
        if result.status == "failed":
            self.print(f"[red]run {result.run_id} failed:[/red] {escape(_plain(result.error))}")
            if result.resumable:  # only where running the thread again can get past it
                self.print(f"resume it with --thread-id {result.thread_id}")
        else:
            options = (result.trace or {}).get("options") or []
            shown = plain_answer(result.answer, options) if result.answer else result.answer
            line = f"[bold]answer[/bold] {escape(_plain(repr(shown)))} ({result.status})"
            if expected is not None:
                verdict = "[green]right[/green]" if correct else "[red]wrong[/red]"
                line += (
                    f", expected {escape(_plain(repr(plain_answer(expected, options))))}: {verdict}"
                )
            self.print(line)
        cost = (result.trace or {}).get("cost")
        if cost:
            self.print(
                f"[bold]total[/bold] {wall_s:.1f} s wall, {cost['model_calls']} model calls "
                f"({cost['latency_s']:.1f} s), {cost['prompt_tokens']}+"
                f"{cost['completion_tokens']} tokens, {cost['frames_encoded']} frames encoded"
            )
        self.print(f"run {result.run_id} is on the board: app.py board {result.run_id}")


_SGR = {"cyan": "36", "red": "31"}  # the live display's colours, as SGR codes


def _plain(text: object) -> str:
    """Model, server or user text as the display shows it: no escape sequences or control
    characters (`agents.terminal_text`); the display never reads it as markup."""
    return plain(text)


def _timing(call: dict[str, Any]) -> str:
    completion = call["completion"]
    usage = completion["usage"]
    return (
        f"{usage['prompt_tokens']}+{usage['completion_tokens']} tokens, "
        f"{completion['latency_s']:.2f} s"
    )


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def judge(result: RunResult, item: QAItem) -> bool | None:
    """Whether the run's answer to a multiple-choice `item` is right (None: unknown kind)."""
    if item.kind != "multiple_choice":
        return None
    if result.status != "answered":
        return False
    letters = "ABCDEFGH"[: len(item.options)]
    score = accuracy_reward(
        result.final_text or "", kind=item.kind, target=item.answer, letters=letters
    )
    return score == 1.0


def result_record(
    result: RunResult, *, wall_s: float, expected: str | None, correct: bool | None
) -> dict[str, Any]:
    """The JSON result of a run: answer and verdict, windows per turn, notes, cost."""
    trace = result.trace or {}
    turns: dict[int, dict[str, Any]] = {}
    for call in trace.get("tool_calls", []):
        turn = turns.setdefault(call["turn"], {"turn": call["turn"], "windows": [], "refused": []})
        if call["error"] is None:
            turn["windows"].append([call["start"], call["end"]])
        else:
            turn["refused"].append(call["error"])
    notes = sorted(trace.get("notes", []), key=lambda n: (n["turn"], n["index"]))
    return {
        "run_id": result.run_id,
        "thread_id": result.thread_id,
        "status": result.status,
        "answer": result.answer,
        "expected": expected,
        "correct": correct,
        "error": result.error,
        "calls": [turns[t] for t in sorted(turns)],
        "notes": [
            {"turn": n["turn"], "window": [n["start"], n["end"]], "content": n["content"]}
            for n in notes
        ],
        "wall_s": round(wall_s, 3),
        "cost": trace.get("cost"),
    }
