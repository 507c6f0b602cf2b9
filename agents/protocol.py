"""The one grammar of the main agent's output: parse and render think / tool_call / answer turns.

A turn is ``<think> ... </think>`` followed by either one or more ``<tool_call>{json}</tool_call>``
blocks (several blocks = parallel calls) or one ``<answer> ... </answer>``. Tool results go back
as ``<tool_response> ... </tool_response>`` blocks, one per call, in call order.

:func:`parse` never raises on a str and names every departure from that contract; rewards,
graph routing and eval scoring all read turns through it. Reading rules, in order:

1. Tags are exactly ``<think>``, ``<tool_call>``, ``<answer>``, ``<tool_response>`` and their
   closing forms: lowercase, no spaces. Anything else (``<Answer>``, ``< think>``) is text.
2. The think block runs from the first ``<think>`` to the first ``</think>`` after it. Text and
   tags before that ``<think>`` count for nothing (STRAY_TEXT, MISORDERED_TAGS).
3. Tags inside a closed think block are reasoning text, never blocks: a call "planned" in the
   think is not a call and an ``<answer></answer>`` pair there is not an answer. Each such
   tag is flagged MISORDERED_TAGS.
4. An unclosed think (UNCLOSED_THINK) ends at the first ``<tool_call>``, ``<answer>`` or
   ``<tool_response>`` opener after it, and blocks from there on count, so an answer written
   without closing the think is still read.
5. With no ``<think>`` at all (MISSING_THINK) the whole text is read for blocks. A completion
   whose ``<think>\\n`` was prefilled in the prompt must be scored through :func:`with_prefix`.
6. After the think, blocks do not nest. An opener inside an open block ends that block early
   (MISORDERED_TAGS plus UNCLOSED_TOOL_CALL / UNCLOSED_ANSWER); any closing tag ends the open
   block (MISORDERED_TAGS if it is the wrong kind); a closing tag with no open block is
   MISORDERED_TAGS. A block still open at the end of the text runs to the end; an unclosed
   tool call there is still parsed (a stop string may have eaten ``</tool_call>``).
7. Of several answer blocks the last non-empty one is chosen (``""`` when all are empty).
   The public release takes the first pair, even an empty one inside the reasoning.
8. A tool_call body may be wrapped in whitespace or a Markdown fence (```json ... ```);
   ``"arguments"`` may be an object or a string holding a JSON object (OpenAI style).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

THINK_PREFIX = "<think>\n"
TOOL_NAME = "crop_video"
PARSER_VERSION = "1"  # bump when parsing of the same text changes (eval specs record it)
KNOWN_TOOLS = frozenset({TOOL_NAME})

CALL_SHAPE = '{"name": "crop_video", "arguments": {"start_time": <seconds>, "end_time": <seconds>}}'
"""How a valid call looks, quoted in error messages written for the model (which hold no tags)."""


class Violation(StrEnum):
    """A named way a turn departs from the output contract; values are stable snake_case."""

    MISSING_THINK = "missing_think"  # no <think> tag anywhere
    UNCLOSED_THINK = "unclosed_think"  # <think> never followed by </think>
    EMPTY_THINK = "empty_think"  # think body is blank
    MISORDERED_TAGS = "misordered_tags"  # tag out of place: before/inside think, nested, orphan
    UNCLOSED_TOOL_CALL = "unclosed_tool_call"  # <tool_call> ended by text end or another opener
    BAD_TOOL_JSON = "bad_tool_json"  # tool_call body is not one JSON object
    UNKNOWN_TOOL = "unknown_tool"  # "name" is a string outside KNOWN_TOOLS
    MISSING_TOOL_NAME = "missing_tool_name"  # JSON object without a string "name"
    BAD_TOOL_ARGUMENTS = "bad_tool_arguments"  # "arguments" missing or not a JSON object
    UNCLOSED_ANSWER = "unclosed_answer"  # <answer> ended by text end or another opener
    EMPTY_ANSWER = "empty_answer"  # every answer block is blank
    MULTIPLE_ANSWERS = "multiple_answers"  # more than one answer block after the think
    ANSWER_WITH_TOOL_CALLS = "answer_with_tool_calls"  # answer and tool calls in one turn
    TEXT_AFTER_ANSWER = "text_after_answer"  # loose non-whitespace text after an answer block
    STRAY_TEXT = "stray_text"  # loose non-whitespace text outside blocks (not after an answer)
    NO_ACTION = "no_action"  # neither a tool_call nor an answer block
    TOOL_RESPONSE_IN_TURN = "tool_response_in_turn"  # model wrote a <tool_response> itself


@dataclass(frozen=True)
class ToolCall:
    """One ``<tool_call>`` block, numbered from 0 in the turn.

    ``arguments`` is a plain dict (``{}`` when unreadable) so records pickle and serialise;
    ``raw`` is the text between the tags; ``error`` is a reason written for the model, None
    when the block is one JSON object with a known name and an arguments object.
    """

    index: int
    name: str | None
    arguments: Mapping[str, Any] = field(hash=False)
    raw: str
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class ParsedTurn:
    """What :func:`parse` read from one assistant turn.

    ``think`` is the stripped body of the first think block (None without ``<think>``);
    ``answer`` the stripped body of the chosen answer block (None without one, ``""`` when
    every answer block is blank); ``violations`` are deduplicated, in the order a
    left-to-right reading meets them.
    """

    text: str
    think: str | None
    think_closed: bool
    tool_calls: tuple[ToolCall, ...]
    answer: str | None
    violations: tuple[Violation, ...]
    answers: tuple[str, ...] = ()  # every answer block's stripped body, in order

    @property
    def well_formed(self) -> bool:
        return not self.violations

    @property
    def valid_calls(self) -> tuple[ToolCall, ...]:
        return tuple(call for call in self.tool_calls if call.valid)

    @property
    def wants_tools(self) -> bool:
        return bool(self.tool_calls) and self.answer is None


_TAG_RE = re.compile(r"<(/?)(think|tool_call|answer|tool_response)>")
_RESPONSE_RE = re.compile(r"<(/?)tool_response>")
_THINK, _CALL, _ANSWER = "think", "tool_call", "answer"
_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}


class _Tag(NamedTuple):
    kind: str
    closing: bool
    start: int
    end: int


class _Reader:
    """One left-to-right pass over the tag positions of a text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tags = [_Tag(m[2], m[1] == "/", m.start(), m.end()) for m in _TAG_RE.finditer(text)]
        self.found: list[Violation] = []
        self.calls: list[ToolCall] = []
        self.answers: list[str] = []

    def read(self) -> ParsedTurn:
        think, closed, first_tag, pos = self._read_think()
        self._read_blocks(first_tag, pos)
        answer = None
        if self.answers:
            answer = next((body for body in reversed(self.answers) if body), "")
            if not answer:
                self.found.append(Violation.EMPTY_ANSWER)
        if not self.calls and not self.answers:
            self.found.append(Violation.NO_ACTION)
        violations = tuple(dict.fromkeys(self.found))
        return ParsedTurn(
            self.text, think, closed, tuple(self.calls), answer, violations, tuple(self.answers)
        )

    def _read_think(self) -> tuple[str | None, bool, int, int]:
        """Read the think block; return (body, closed, first block tag index, its text pos)."""
        tags, text = self.tags, self.text
        opener = next((i for i, t in enumerate(tags) if t.kind == _THINK and not t.closing), None)
        if opener is None:
            self.found.append(Violation.MISSING_THINK)
            return None, False, 0, 0
        pos = 0
        for tag in tags[:opener]:  # preamble: counts for nothing
            self._loose_text(pos, tag.start)
            self.found.append(Violation.MISORDERED_TAGS)
            pos = tag.end
        self._loose_text(pos, tags[opener].start)
        later = range(opener + 1, len(tags))
        closer = next((j for j in later if tags[j].kind == _THINK and tags[j].closing), None)
        if closer is not None:
            end, first_tag, pos = tags[closer].start, closer + 1, tags[closer].end
        else:
            self.found.append(Violation.UNCLOSED_THINK)
            openers = (j for j in later if tags[j].kind != _THINK and not tags[j].closing)
            action = next(openers, None)
            if action is None:
                end, first_tag, pos = len(text), len(tags), len(text)
            else:
                end, first_tag, pos = tags[action].start, action, tags[action].start
        body = text[tags[opener].end : end].strip()
        if not body:
            self.found.append(Violation.EMPTY_THINK)
        if first_tag - opener > (2 if closer is not None else 1):
            self.found.append(Violation.MISORDERED_TAGS)  # tags inside the think body
        return body, closer is not None, first_tag, pos

    def _read_blocks(self, first_tag: int, pos: int) -> None:
        current: _Tag | None = None
        for tag in self.tags[first_tag:]:
            if current is None:
                self._loose_text(pos, tag.start)
                if tag.closing:
                    self.found.append(Violation.MISORDERED_TAGS)
                else:
                    current = self._open(tag)
            else:
                body = self.text[current.end : tag.start]
                if tag.kind != current.kind or not tag.closing:
                    self.found.append(Violation.MISORDERED_TAGS)
                self._close(current, body, closed=tag.closing)
                current = None if tag.closing else self._open(tag)
            pos = tag.end
        if current is None:
            self._loose_text(pos, len(self.text))
        else:
            self._close(current, self.text[current.end :], closed=False)

    def _loose_text(self, start: int, end: int) -> None:
        segment = self.text[start:end]
        if segment and not segment.isspace():
            after_answer = bool(self.answers)
            self.found.append(Violation.TEXT_AFTER_ANSWER if after_answer else Violation.STRAY_TEXT)

    def _open(self, tag: _Tag) -> _Tag:
        if tag.kind == _THINK:
            self.found.append(Violation.MISORDERED_TAGS)  # a second think block
        elif tag.kind == _CALL and self.answers:
            self.found += [Violation.MISORDERED_TAGS, Violation.ANSWER_WITH_TOOL_CALLS]
        elif tag.kind == _ANSWER:
            if self.answers:
                self.found.append(Violation.MULTIPLE_ANSWERS)
            if self.calls:
                self.found.append(Violation.ANSWER_WITH_TOOL_CALLS)
        elif tag.kind == "tool_response":
            self.found.append(Violation.TOOL_RESPONSE_IN_TURN)
        return tag

    def _close(self, tag: _Tag, body: str, *, closed: bool) -> None:
        if tag.kind == _CALL:
            call, problems = _parse_call(len(self.calls), body)
            self.calls.append(call)
            self.found += problems
            if not closed:
                self.found.append(Violation.UNCLOSED_TOOL_CALL)
        elif tag.kind == _ANSWER:
            self.answers.append(body.strip())
            if not closed:
                self.found.append(Violation.UNCLOSED_ANSWER)


def parse(text: str) -> ParsedTurn:
    """Read one assistant turn. Never raises on a str.

    >>> turn = parse('<think>\\nlook closer\\n</think>\\n<tool_call>\\n'
    ...              '{"name": "crop_video", "arguments": {"start_time": 5, "end_time": 9}}'
    ...              '\\n</tool_call>')
    >>> turn.well_formed, turn.wants_tools, dict(turn.tool_calls[0].arguments)
    (True, True, {'start_time': 5, 'end_time': 9})
    >>> [v.value for v in parse('B').violations]
    ['missing_think', 'stray_text', 'no_action']
    """
    return _Reader(text).read()


def _parse_call(index: int, raw: str) -> tuple[ToolCall, list[Violation]]:
    obj, reason = _load_json(_unfence(raw.strip()))
    if reason is None and not isinstance(obj, dict):
        reason = f"the block holds a JSON {_json_type(obj)}, not an object"
    if reason is not None:
        error = f"bad tool call: {reason}; write one JSON object per tool_call block: {CALL_SHAPE}"
        return ToolCall(index, None, {}, raw, error), [Violation.BAD_TOOL_JSON]
    problems: list[tuple[Violation, str]] = []
    name = obj.get("name")
    if not isinstance(name, str):
        name = None
        problems.append((Violation.MISSING_TOOL_NAME, 'the call has no "name" string'))
    elif name not in KNOWN_TOOLS:
        known = ", ".join(sorted(KNOWN_TOOLS))
        problems.append((Violation.UNKNOWN_TOOL, f"unknown tool {name!r} (tools: {known})"))
    arguments, why = _arguments(obj)
    if why is not None:
        problems.append((Violation.BAD_TOOL_ARGUMENTS, why))
    if not problems:
        return ToolCall(index, name, arguments, raw), []
    error = "bad tool call: " + "; ".join(why for _, why in problems) + f"; expected {CALL_SHAPE}"
    return ToolCall(index, name, arguments, raw, error), [v for v, _ in problems]


def _arguments(obj: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    if "arguments" not in obj:
        return {}, 'the call has no "arguments" object'
    value = obj["arguments"]
    if isinstance(value, str):
        loaded, reason = _load_json(value.strip())
        if reason is None and isinstance(loaded, dict):
            return loaded, None
        return {}, '"arguments" is a string that does not hold a JSON object'
    if isinstance(value, dict):
        return value, None
    return {}, f'"arguments" is a JSON {_json_type(value)}, not an object'


def _load_json(body: str) -> tuple[Any, str | None]:
    """(value, None) or (None, reason); never raises."""
    if not body:
        return None, "the block is empty"
    try:
        return json.loads(body), None
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            return None, "more than one JSON value in one block"
        return None, f"not valid JSON ({exc.msg} at character {exc.pos})"
    except (ValueError, RecursionError):  # e.g. an integer literal beyond int's digit limit
        return None, "not valid JSON"


def _unfence(body: str) -> str:
    """Drop a Markdown code fence (```json ... ```) around a tool_call body."""
    if not body.startswith("```"):
        return body
    body = body[3:].lstrip("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    if body.endswith("```"):
        body = body[:-3]
    return body.strip()


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), "number")


def render_tool_call(name: str, arguments: Mapping[str, Any]) -> str:
    """One ``<tool_call>`` block; ``<`` inside strings is escaped so no tag can leak out.

    >>> print(render_tool_call("crop_video", {"start_time": 1.5, "end_time": 9}))
    <tool_call>
    {"name": "crop_video", "arguments": {"start_time": 1.5, "end_time": 9}}
    </tool_call>
    """
    payload = json.dumps({"name": name, "arguments": dict(arguments)}, ensure_ascii=False)
    payload = payload.replace("<", "\\u003c")  # "<" only ever occurs inside JSON strings
    return f"<tool_call>\n{payload}\n</tool_call>"


def render_turn(
    think: str,
    *,
    tool_calls: Sequence[Mapping[str, Any]] = (),
    answer: str | None = None,
) -> str:
    """A full assistant turn starting with THINK_PREFIX. Renders what it is given, even
    a turn with both calls and an answer (useful for negative examples).

    >>> print(render_turn("It says B.", answer="B"))
    <think>
    It says B.
    </think>
    <BLANKLINE>
    <answer>B</answer>
    """
    blocks = [render_tool_call(call["name"], call["arguments"]) for call in tool_calls]
    if answer is not None:
        blocks.append(f"<answer>{answer}</answer>")
    return f"{THINK_PREFIX}{think}\n</think>\n\n" + "\n".join(blocks)


def render_tool_responses(contents: Sequence[str]) -> str:
    """One ``<tool_response>`` block per result, in call order (Qwen chat template layout)."""
    return "\n".join(f"<tool_response>\n{content}\n</tool_response>" for content in contents)


def parse_tool_responses(text: str) -> list[str]:
    """The bodies of ``<tool_response>`` blocks, exact inverse of :func:`render_tool_responses`.

    One newline after the opener and one before the closer are dropped, nothing else. An
    opener inside an open block starts a new block; a block open at the end runs to the end.
    """
    bodies: list[str] = []
    start: int | None = None
    for match in _RESPONSE_RE.finditer(text):
        if start is not None:
            bodies.append(_unwrap(text[start : match.start()]))
        start = None if match[1] else match.end()
    if start is not None:
        bodies.append(_unwrap(text[start:]))
    return bodies


def _unwrap(body: str) -> str:
    body = body.removeprefix("\n")
    return body.removesuffix("\n")


def with_prefix(completion: str, prefix: str = THINK_PREFIX) -> str:
    """The model's whole turn: the prefix prefilled in the prompt plus the generated text.

    Rewards score this, not the bare completion. Plain concatenation: call it once.
    """
    return prefix + completion
