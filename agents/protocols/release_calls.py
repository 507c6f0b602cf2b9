"""How the ParaVT release reads tool calls out of a turn (EvolvingLMMs-Lab/ParaVT@cf55249).

Its two readers differ from this project's grammar (`agents.protocol`) and from each other:

- the evaluation driver (``paravt/eval/driver.py`` ``parse_tool_calls``): every closed
  ``<tool_call>`` body that is JSON, anywhere in the turn (inside the reasoning too), then
  every ``<tool_code>crop_video(key=value, ...)</tool_code>`` leak; a body that is not JSON is
  skipped; any tool name is cropped;
- the RL workflow (``paravt/rl/utils/tool_parser.py``, Hermes style): closed and unclosed
  ``<tool_call>`` bodies, all of them JSON with a ``name`` and ``arguments`` or none at all;
  otherwise ``<tool_code>`` lines read as Python calls.

Times are read as the driver's ``parse_time_val`` reads them: numbers, numeric strings,
``mm:ss`` and ``hh:mm:ss``; anything else is 0. `tests/data/parity/release_calls.json` holds
the release's own outputs on a corpus of turns; `tests/agents/protocols/test_release_calls.py`
holds these readers to them.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
from typing import Any

_EVAL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
_EVAL_CODE = re.compile(r"<tool_code>\s*(.*?)\s*</tool_code>", re.DOTALL)
_CROP_CALL = re.compile(r"crop_video\s*\((.*)\)\s*", re.DOTALL)
_KEYWORD_SPLIT = re.compile(r",\s*(?=[a-zA-Z_]+\s*=)")
_RL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)", re.DOTALL)
_RL_CODE = re.compile(r"<tool_code>(.*?)</tool_code>|<tool_code>(.*)", re.DOTALL)
_POSITIONAL = {"crop_video": ("video_path", "start_time", "end_time")}


def clock_seconds(value: Any) -> float:
    """A time argument in seconds, as the release reads it (0.0 when unreadable).

    >>> [clock_seconds(v) for v in (12, "12.5", "1:05", "1:00:05", "soon", None)]
    [12.0, 12.5, 65.0, 3605.0, 0.0, 0.0]
    """
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        pass
    if isinstance(value, str) and ":" in value:
        parts = value.split(":")
        try:
            if len(parts) == 2:
                return float(parts[0]) * 60 + float(parts[1])
            if len(parts) == 3:
                return float(parts[0]) * 3600 + float(parts[1]) * 60 + float(parts[2])
        except ValueError:
            pass
    return 0.0


def eval_driver_calls(text: str) -> list[Any]:
    """The calls the evaluation driver runs for a turn, in its order (JSON values as parsed).

    >>> eval_driver_calls('<tool_call>{"name": "x", "arguments": {"start": 3}}</tool_call>'
    ...                   '<tool_code>crop_video(start_time=1, end_time="9")</tool_code>')
    [{'name': 'x', 'arguments': {'start': 3}}, \
{'name': 'crop_video', 'arguments': {'start_time': 1.0, 'end_time': 9.0}}]
    """
    calls: list[Any] = []
    for body in _EVAL_CALL.findall(text):
        try:
            calls.append(json.loads(body))
        except (ValueError, RecursionError):
            continue
    for body in _EVAL_CODE.findall(text):
        body = body.strip()
        if not body or body.startswith("<|im_end|>"):
            continue
        match = _CROP_CALL.match(body)
        if not match:
            continue
        arguments: dict[str, Any] = {}
        for pair in _KEYWORD_SPLIT.split(match.group(1)):
            if "=" not in pair:
                continue
            key, value = pair.split("=", 1)
            value = value.strip().strip("\"'")
            try:
                arguments[key.strip()] = float(value)
            except ValueError:
                arguments[key.strip()] = value
        if arguments:
            calls.append({"name": "crop_video", "arguments": arguments})
    return calls


def rl_workflow_calls(text: str) -> list[tuple[str, str]] | None:
    """(name, arguments as a JSON string) of each call the RL workflow runs, or None when it
    reads no call. Any bad ``<tool_call>`` body voids them all (then ``<tool_code>`` is read).

    >>> rl_workflow_calls('<tool_call>{"name": "crop_video", "arguments": {"start_time": 1}}')
    [('crop_video', '{"start_time": 1}')]
    """
    if "<tool_call>" in text:
        try:
            calls = []
            for closed, open_ in _RL_CALL.findall(text):
                data = json.loads(closed or open_)
                calls.append((data["name"], json.dumps(data["arguments"], ensure_ascii=False)))
            return calls
        except Exception:  # the workflow's reader gives up on every call of the turn alike
            pass
    if "<tool_code>" in text:
        try:
            calls = [
                (name, json.dumps(arguments, ensure_ascii=False))
                for closed, open_ in _RL_CODE.findall(text)
                for name, arguments in _python_calls(closed or open_)
            ]
        except Exception:  # as above: a line the reader chokes on voids the turn's calls
            calls = []
        if calls:
            return calls
    return None


def _python_calls(code: str) -> list[tuple[str, dict[str, Any]]]:
    """``name(key=value, ...)`` lines (or positional crop_video arguments), read with ast."""
    out = []
    for line in (raw.strip() for raw in code.strip().split("\n")):
        if not line:
            continue
        tree = _parse_line(line)
        if tree is None:
            continue
        call = tree.body
        if _is_call(call, "print") and call.args and isinstance(call.args[0], ast.Call):
            call = call.args[0]
        if not isinstance(call, ast.Call):
            continue
        if isinstance(call.func, ast.Name):
            name = call.func.id
        elif isinstance(call.func, ast.Attribute):
            name = call.func.attr
        else:
            continue
        arguments: dict[str, Any] = {}
        for keyword in call.keywords:
            if keyword.arg is not None:
                with contextlib.suppress(ValueError, TypeError):
                    arguments[keyword.arg] = ast.literal_eval(keyword.value)
        if call.args and not arguments:
            names = _POSITIONAL.get(name, ())
            for position, node in enumerate(call.args):
                try:
                    value = ast.literal_eval(node)
                except (ValueError, TypeError):
                    continue
                if position < len(names):
                    arguments[names[position]] = value
        if name and arguments:
            out.append((name, arguments))
    return out


def _parse_line(line: str) -> ast.Expression | None:
    """The line as a Python expression; a stray quote after the closing parenthesis (a
    common slip) is dropped and the line tried once more."""
    try:
        return ast.parse(line, mode="eval")
    except SyntaxError:
        pass
    cleaned = re.sub(r"\)\s*['\"].*$", ")", line)
    cleaned = re.sub(r"(['\"])(\s*\))", r"\2", cleaned)
    if cleaned == line:
        return None
    try:
        return ast.parse(cleaned, mode="eval")
    except SyntaxError:
        return None


def _is_call(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
