"""Dataclass fields as command-line flags: the one way every CLI here turns a config into
options (the graph ``Context``, the GRPO run and algorithm, the SFT run).

A field's help is its ``metadata["help"]`` (or ``["description"]``); ``metadata["choices"]``
limits its values. Flags default to ``None``, so `given` returns only what the user typed
and the dataclass keeps its own defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

#: name -> (test, what it must be), checked as the flag is parsed.
Limits = Mapping[str, tuple[Callable[[Any], bool], str]]


def add_dataclass_flags(
    parser: argparse.ArgumentParser,
    cls: type,
    title: str,
    *,
    skip: Iterable[str] = (),
    limits: Limits | None = None,
    underscores: bool = False,
) -> None:
    """One flag per field of ``cls`` in an argument group named ``title``, spelt
    ``--field-name`` (and, with ``underscores``, ``--field_name`` as Hugging Face parsers
    spell it, for CLIs whose users come from there)."""
    hints, group, skip = typing.get_type_hints(cls), parser.add_argument_group(title), set(skip)
    for f in dataclasses.fields(cls):
        if f.name not in skip:
            dashed = f.name.replace("_", "-")
            spellings = dict.fromkeys([f"--{dashed}", f"--{f.name}" if underscores else ""])
            spellings.pop("", None)
            group.add_argument(*spellings, **_argument(f, hints[f.name], limits or {}))
            if underscores and _unwrap(hints[f.name]) is bool:
                group.add_argument(
                    f"--no_{f.name}", dest=f.name, action="store_false", help=argparse.SUPPRESS
                )


def given(cls: type, args: argparse.Namespace, *, skip: Iterable[str] = ()) -> dict[str, Any]:
    """The fields of ``cls`` the user set on the command line (lists become tuples where the
    field is a tuple)."""
    hints, skip, values = typing.get_type_hints(cls), set(skip), {}
    for f in dataclasses.fields(cls):
        value = getattr(args, f.name, None)
        if f.name in skip or value is None:
            continue
        if isinstance(value, list) and typing.get_origin(_unwrap(hints[f.name])) is tuple:
            value = tuple(value)
        values[f.name] = value
    return values


def _argument(f: dataclasses.Field, kind: Any, limits: Limits) -> dict[str, Any]:
    meta, kind = f.metadata, _unwrap(kind)
    required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    if f.default_factory is not dataclasses.MISSING:
        shown = f.default_factory()
    else:
        shown = None if required else f.default
    suffix = "" if shown in (None, [], ()) else f" (default: {shown})"
    kwargs: dict[str, Any] = {
        "help": (meta.get("help") or meta.get("description", "")) + suffix,
        "default": None,
        "required": required,
    }
    origin = typing.get_origin(kind)
    if kind is bool:
        return kwargs | {"action": argparse.BooleanOptionalAction}
    if origin is Literal:
        return kwargs | {"choices": typing.get_args(kind)}
    if origin in (tuple, list):
        return kwargs | {"nargs": "*", "type": typing.get_args(kind)[0]}
    return kwargs | {"type": _checked(f.name, kind, limits), "choices": meta.get("choices")}


def _unwrap(kind: Any) -> Any:
    """``X | None`` -> ``X``."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return next(a for a in typing.get_args(kind) if a is not type(None))
    return kind


def _checked(name: str, kind: type, limits: Limits) -> Callable[[str], Any]:
    """An argparse type that converts the text and holds it to the field's limit."""
    ok, what = limits.get(name, (lambda value: True, ""))

    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a valid {kind.__name__}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value

    convert.__name__ = kind.__name__  # argparse names the type in its messages
    return convert
