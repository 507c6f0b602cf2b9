"""`--model_args` of `lmms-eval --model paravt`: the plugin's own keys and every graph knob.

Every field of `graphs.context.Context` is a key (``overview_frames=64``, ``protocol=
release-eval``, ...); beside them the plugin reads where the model is and where its records
go. lmms-eval hands the values over already converted by its own reader (``64`` as an int,
``true`` as a bool) or as text; each is converted to its field's type here, and a key that is
neither kind, or a value its field cannot take, is one error naming every problem and every
valid key.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agents.protocols import get_protocol
from graphs.context import LIMITS, Context
from graphs.settings import Settings

#: The plugin's own keys and what each means (their defaults are `PluginArgs`' own).
PLUGIN_KEYS = {
    "base_url": "the OpenAI-compatible endpoint; without it the local CPU server runs paravt-nano",
    "model": "the model name at the endpoint (default: the first it serves)",
    "api_key": "the endpoint's key (default: PARAVT_API_KEY, else none)",
    "concurrency": "most requests in flight at the endpoint (default 4)",
    "home": "the folder of the board, the traces and the resume log (default: PARAVT_HOME or "
    ".paravt)",
    "request_timeout": "seconds one request may take (default 120)",
    "kind": "multiple_choice, grounding or open_ended, for the task's questions (default: "
    "multiple_choice when the prompt lists lettered options, else open_ended)",
}
#: Keys lmms-eval adds from its own flags (--batch_size, --device): accepted, and unused, since
#: `concurrency` bounds the requests and the model runs behind its endpoint.
LMMS_EVAL_KEYS = ("batch_size", "max_batch_size", "device")
KINDS = ("multiple_choice", "grounding", "open_ended")
CONTEXT_HINTS = typing.get_type_hints(Context)


class ModelArgsError(ValueError):
    """`--model_args` the plugin cannot use; the message names each problem and the valid keys."""


@dataclass(frozen=True)
class PluginArgs:
    """What `--model_args` asked for: where the model is, and the graph knobs it names."""

    base_url: str | None
    model: str | None
    api_key: str
    concurrency: int
    home: Path
    request_timeout: float
    kind: str | None
    knobs: dict[str, Any] = field(default_factory=dict)  # Context fields, converted

    def settings(self, endpoint: str) -> Settings:
        """The process settings of a run against `endpoint`."""
        return Settings(
            endpoint=endpoint,
            api_key=self.api_key,
            model=self.model,
            request_timeout=self.request_timeout,
            home=self.home,
        )


def valid_keys() -> list[str]:
    return [*PLUGIN_KEYS, *(f.name for f in dataclasses.fields(Context))]


def parse_model_args(
    given: Mapping[str, Any], *, env_file: str | Path | None = ".env"
) -> PluginArgs:
    """`given` (lmms-eval's parsed --model_args) as plugin settings and Context knobs;
    ModelArgsError with every problem at once. Unset plugin keys come from the environment
    (PARAVT_API_KEY, PARAVT_HOME, PARAVT_REQUEST_TIMEOUT), never the endpoint: no base_url
    means the local server."""
    problems, knobs, own = [], {}, {}
    context_fields = {f.name: f for f in dataclasses.fields(Context)}
    for key, value in given.items():
        if key in LMMS_EVAL_KEYS:
            continue
        try:
            if key in context_fields:
                knobs[key] = _convert(key, value, CONTEXT_HINTS[key], context_fields[key])
            elif key in PLUGIN_KEYS:
                own[key] = _plugin_value(key, value)
            else:
                problems.append(f"unknown key {key!r}")
        except ValueError as exc:
            problems.append(str(exc))
    if not problems:
        try:
            problems += protocol_conflicts(Context(**knobs), knobs)  # ranges, then pins
        except ValueError as exc:
            problems.append(str(exc))
    if problems:
        raise ModelArgsError(
            f"paravt --model_args: {'; '.join(problems)}. Valid keys: the plugin's "
            f"{', '.join(PLUGIN_KEYS)}; the graph's "
            f"{', '.join(f.name for f in dataclasses.fields(Context))}"
        )
    settings = Settings.load(env_file=env_file, api_key=own.get("api_key"), home=own.get("home"))
    timeout = own.get("request_timeout", settings.request_timeout)
    return PluginArgs(
        base_url=own.get("base_url"),
        model=own.get("model"),
        api_key=settings.api_key,
        concurrency=own.get("concurrency", 4),
        home=settings.home,
        request_timeout=timeout,
        kind=own.get("kind"),
        knobs=knobs,
    )


def protocol_conflicts(context: Context, knobs: Mapping[str, Any]) -> list[str]:
    """The knobs named in --model_args that the run's protocol fixes to something else.

    >>> protocol_conflicts(Context(protocol="release-eval", crop_fps=2.0), {"crop_fps": 2.0})
    ['protocol=release-eval fixes crop_fps=1.0 (--model_args set 2.0)']
    """
    pins = get_protocol(context.protocol).pins(context)
    return [
        f"protocol={context.protocol} fixes {k}={pins[k]!r} (--model_args set {knobs[k]!r})"
        for k in sorted(set(knobs) & set(pins))
        if getattr(context, k) != pins[k]
    ]


def _plugin_value(key: str, value: Any) -> Any:
    if key == "concurrency":
        number = _integer(key, value)
        if number < 1:
            raise ValueError(f"concurrency={value!r} must be at least 1")
        return number
    if key == "request_timeout":
        number = _number(key, value)
        if number <= 0:
            raise ValueError(f"request_timeout={value!r} must be above 0")
        return number
    if key == "home":
        return Path(str(value)).expanduser()
    if key == "kind" and value not in KINDS:
        raise ValueError(f"kind={value!r} is not one of {', '.join(KINDS)}")
    return str(value)


def _convert(name: str, value: Any, kind: Any, f: dataclasses.Field) -> Any:
    """`value` as the Context field `name` of type `kind` holds it (ValueError if it cannot)."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        if isinstance(value, str) and value.lower() in ("none", "null"):
            return None
        kind = next(a for a in typing.get_args(kind) if a is not type(None))
    choices = f.metadata.get("choices")
    if typing.get_origin(kind) is Literal:
        choices = typing.get_args(kind)
    if kind is bool:
        converted = _boolean(name, value)
    elif kind is int:
        converted = _integer(name, value)
    elif kind is float:
        converted = _number(name, value)
    else:
        converted = str(value)
    if choices and converted not in choices:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(map(str, choices))}")
    ok, what = LIMITS.get(name, (lambda v: True, ""))
    if not ok(converted):
        raise ValueError(f"{name}={value!r} must be {what}")
    return converted


def _boolean(name: str, value: Any) -> bool:
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(f"{name}={value!r} is not true or false")


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{name}={value!r} is not a whole number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={value!r} is not a whole number") from None
    if not number.is_integer():
        raise ValueError(f"{name}={value!r} is not a whole number")
    return int(number)


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name}={value!r} is not a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={value!r} is not a number") from None
