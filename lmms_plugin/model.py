"""`lmms-eval --model paravt`: the graph as an lmms-eval chat model (and, with --force_simple,
a simple one). Registered by this package's `lmms_eval.models` entry point; imports lmms-eval.

``generate_until`` reads every request first (a task the graph cannot answer is refused
before any request runs), returns the documents a previous run already answered, runs the
rest through the graph with bounded concurrency, and gives lmms-eval each final reply with
its token counts. Documents that end without a reply (an endpoint that fails, unreadable
media) are reported together, one line each, after every other document has finished and
been logged; none is passed on to be scored.
"""

from __future__ import annotations

import weakref
from typing import Any

from lmms_eval.api.instance import GenerationResult, TokenCounts
from lmms_eval.api.model import lmms
from loguru import logger as eval_logger
from tqdm import tqdm

from graphs.runs import event_loop
from lmms_plugin.docs import read_requests
from lmms_plugin.endpoint import Endpoint
from lmms_plugin.model_args import parse_model_args
from lmms_plugin.runner import Outcome, ResumeLog, answer, failures_message, request_key


class DocumentsFailed(RuntimeError):
    """Documents that ended without a reply; the message lists each with its error."""


class ParaVT(lmms):
    """The parallel video agent behind an OpenAI-compatible endpoint (docs/lmms-eval.md)."""

    is_simple = False

    def __init__(self, **model_args: Any) -> None:
        super().__init__()
        self.args = parse_model_args(model_args)
        self.endpoint = Endpoint(self.args)
        self.resume = ResumeLog(self.args.home)
        self._stop = weakref.finalize(self, self.endpoint.close)

    def generate_until(self, requests) -> list[GenerationResult]:
        if not requests:
            return []
        docs = read_requests(requests, self.task_dict, self.args.home / "lmms_eval" / "media")
        identity = self.endpoint.identity()
        keys = [request_key(self.args, identity, doc) for doc in docs]
        outcomes: list[Outcome | None] = [None] * len(docs)
        for position, outcome in self.resume.finished(docs, keys).items():
            outcomes[position] = outcome
        todo = [i for i, o in enumerate(outcomes) if o is None]
        mode, reused = "simple" if self.is_simple else "chat", len(docs) - len(todo)
        eval_logger.info(
            f"paravt ({mode}): {reused} of {len(docs)} documents answered by an earlier run "
            f"({self.resume.root}); {len(todo)} to run"
        )
        if todo:
            ran = self._run([docs[i] for i in todo], [keys[i] for i in todo])
            for position, outcome in zip(todo, ran, strict=True):
                outcomes[position] = outcome
        done = [o for o in outcomes if o is not None]
        if any(o.status != "ok" for o in done):
            raise DocumentsFailed(failures_message(done, self.resume))
        return [_result(o) for o in done]

    def _run(self, docs, keys) -> list[Outcome]:
        url = self.endpoint.url()
        settings = self.args.settings(url)
        bar = tqdm(total=len(docs), disable=(self.rank != 0), desc="paravt answering")

        async def go() -> list[Outcome]:
            async with settings.chat_model() as llm:
                return await answer(
                    docs,
                    args=self.args,
                    llm=llm,
                    endpoint=url,
                    log=self.resume,
                    keys=keys,
                    on_done=lambda _: bar.update(1),
                )

        try:
            return event_loop.run(go())
        finally:
            bar.close()

    def generate_until_multi_round(self, requests):
        raise NotImplementedError(
            "paravt answers one question per document; multi-round tasks "
            "(generate_until_multi_round) cannot run on it"
        )

    def loglikelihood(self, requests):
        raise NotImplementedError(
            "paravt generates answers; tasks scored by loglikelihood (output_type "
            "loglikelihood or multiple_choice) need a model that scores given text"
        )

    def clean(self) -> None:
        """lmms-eval calls this after the last request: the local server stops here."""
        self.endpoint.close()


class ParaVTSimple(ParaVT):
    """The same model in lmms-eval's simple mode (--force_simple): doc_to_visual + context."""

    is_simple = True


def _result(outcome: Outcome) -> GenerationResult:
    tokens = outcome.tokens or {}
    counts = TokenCounts(
        input_tokens=tokens.get("input_tokens"), output_tokens=tokens.get("output_tokens")
    )
    return GenerationResult(text=outcome.reply or "", token_counts=counts)
