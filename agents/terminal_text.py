"""Text from a model, a server, a file or a user, as a terminal may show it: never control.

A reply, a server's error body, a stored question or a file name can carry escape sequences
(ANSI colours, a screen clear, an OSC window title or hyperlink) and bare control characters
(carriage return, backspace, bell) that rewrite what a terminal shows: a fake "run
succeeded", a hidden line. `plain` removes whole sequences, then every remaining control
character but newline and tab, and the bidirectional overrides that reorder text.
"""

from __future__ import annotations

import re

# ESC-introduced sequences, each removed whole: CSI (ESC [ ... final), OSC, DCS, SOS, PM and
# APC strings (up to BEL or ST), and the two-character escapes; their 8-bit C1 forms too.
_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # strings
    r"|\x1b[ -/]*[0-~]"  # two-character escapes (and nF sequences)
)
# What is left that a terminal acts on: C0 but tab and newline, DEL, C1, bidi controls.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain(text: object) -> str:
    """``text`` (any object, as ``str`` shows it) without control sequences or characters.

    >>> plain("\\x1b]0;pwned\\x07\\x1b[2J\\x1b[32mrun succeeded\\x1b[0m\\r\\nA\\bB")
    'run succeeded\\nAB'
    >>> plain("a\\ttab and a newline\\n stay")
    'a\\ttab and a newline\\n stay'
    """
    return _CONTROLS.sub("", _SEQUENCES.sub("", str(text)))


def one_line(text: object) -> str:
    """``plain(text)`` with its lines joined by spaces (a table cell, a log field)."""
    return " ".join(plain(text).split())
