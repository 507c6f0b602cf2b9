"""Generated token ids to reply text: all at once, or piece by piece while ``generate`` runs.

`reply_text` is the one rule (decode, drop a trailing end token, cut at the first stop
string); `TextPieces` streams text only once that rule can no longer change it, so the
streamed pieces join to exactly the text of the finished completion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from transformers.generation.streamers import BaseStreamer

END_TOKENS = ("<|im_end|>", "<|endoftext|>")
_COMMIT_EVERY = 16  # tokens decoded again per step, at most, before their text is fixed


def reply_text(
    tokenizer,
    token_ids: Sequence[int],
    end_ids: Sequence[int],
    stops: Sequence[str],
    *,
    skip_special_tokens: bool,
    decoded: str | None = None,
) -> tuple[str, bool, bool]:
    """The reply in ``token_ids``, whether they ended on an end token, and whether a stop
    string cut it; ``decoded`` is their decoding, when the caller has it."""
    text = decoded
    if text is None:
        text = tokenizer.decode(token_ids, skip_special_tokens=skip_special_tokens)
    ended = bool(token_ids) and token_ids[-1] in end_ids
    for end in END_TOKENS if ended else ():
        text = text.removesuffix(end)
    hits = [text.index(s) for s in stops if s in text]
    if hits:
        text = text[: min(hits)]
    return text, ended, bool(hits)


class TextPieces(BaseStreamer):
    """A ``generate`` streamer handing ``on_text`` each piece of the reply once it is final.

    Held back until the next token: a trailing incomplete character (decoded as U+FFFD) and
    any tail that may still grow into a stop string. Decoding is incremental: text more than
    ``_COMMIT_EVERY`` tokens back, ending on a whole character, is not decoded again.
    `flush` sends the rest from the finished completion's own text.
    """

    def __init__(
        self,
        tokenizer,
        on_text: Callable[[str], None],
        end_ids: Sequence[int],
        stops: Sequence[str],
        *,
        skip_special_tokens: bool,
    ) -> None:
        self.tokenizer, self.on_text = tokenizer, on_text
        self.end_ids, self.stops, self.skip = list(end_ids), list(stops), skip_special_tokens
        self.ids: list[int] = []
        self.fixed_ids, self.fixed_text = 0, ""
        self.sent = ""
        self._prompt_seen = False

    def put(self, value) -> None:
        if not self._prompt_seen:  # generate first puts the prompt
            self._prompt_seen = True
            return
        self.ids.extend(value.reshape(-1).tolist())
        tail = self.tokenizer.decode(self.ids[self.fixed_ids :], skip_special_tokens=self.skip)
        decoded = self.fixed_text + tail
        if len(self.ids) - self.fixed_ids >= _COMMIT_EVERY and not tail.endswith("\ufffd"):
            self.fixed_ids, self.fixed_text = len(self.ids), decoded
        text, _, _ = reply_text(
            self.tokenizer,
            self.ids,
            self.end_ids,
            self.stops,
            skip_special_tokens=self.skip,
            decoded=decoded,
        )
        self._send(text[: self._safe_length(text)])  # a stop may yet match earlier: still check

    def end(self) -> None:
        """Nothing to do: `flush` sends the rest, from the completion's final text."""

    def flush(self, final: str) -> None:
        """Send what of ``final`` (the finished reply) has not been sent yet."""
        if not final.startswith(self.sent):
            raise RuntimeError(
                f"streamed text {self.sent[-40:]!r} is not a prefix of the reply "
                f"{final[:80]!r}...: incremental decoding went wrong"
            )
        self._send(final)

    def _safe_length(self, text: str) -> int:
        """How much of ``text`` later tokens cannot change: not a trailing half character, nor
        a tail that a stop string starts with (what the half character becomes may follow)."""
        text = text.rstrip("\ufffd")
        longest = max((len(s) for s in self.stops), default=0)
        for start in range(max(0, len(text) - longest + 1), len(text)):
            if any(s.startswith(text[start:]) for s in self.stops):
                return start
        return len(text)

    def _send(self, text: str) -> None:
        if len(text) > len(self.sent) and text.startswith(self.sent):
            piece, self.sent = text[len(self.sent) :], text
            self.on_text(piece)
