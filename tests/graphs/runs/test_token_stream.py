"""TokenStream tells a token listener each visible delta, and every handler the turn's end;
without a listener no per-token work is done, and the end still carries the visible text."""

from __future__ import annotations

from langchain_core.callbacks import AsyncCallbackManager, BaseCallbackHandler
from langchain_core.runnables.config import var_child_runnable_config

from graphs.runs.streaming import TokenStream

PIECES = ["<think>", "It is ", "red", "</think>", "<tool_call>", '{"name": "crop"', "</tool_call>"]


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.ends: list[str] = []

    def on_llm_new_token(self, token: str, **kwargs) -> None:
        self.tokens.append(token)

    def on_llm_end(self, response, **kwargs) -> None:
        self.ends.append(response.generations[0][0].message.content)


class Listener(Recorder):
    """A token listener, as LangGraph's ``stream_mode="messages"`` handler is one."""

    def tap_output_aiter(self, run_id, output):
        return output

    def tap_output_iter(self, run_id, output):
        return output


async def turn(handler: Recorder) -> TokenStream:
    token = var_child_runnable_config.set({"callbacks": [handler]})
    try:
        async with TokenStream("msg-1") as stream:
            for piece in PIECES:
                stream.send(piece)
        return stream
    finally:
        var_child_runnable_config.reset(token)


async def test_a_listener_gets_each_visible_delta_and_the_end():
    listener = Listener()
    stream = await turn(listener)
    assert stream.listening
    assert "".join(listener.tokens) == "It is red\n\n" and len(listener.tokens) == 3
    assert listener.ends == ["It is red\n\n"]


async def test_without_a_listener_no_tokens_are_told_but_the_end_is():
    tracer = Recorder()
    stream = await turn(tracer)
    assert not stream.listening
    assert tracer.tokens == [] and tracer.ends == ["It is red\n\n"]


async def test_a_run_whose_manager_has_no_handlers_starts_no_chat_model_run():
    # what `app.py run` gets: LangGraph's callback manager with nobody on it
    token = var_child_runnable_config.set({"callbacks": AsyncCallbackManager(handlers=[])})
    try:
        async with TokenStream("msg-1") as stream:
            for piece in PIECES:
                stream.send(piece)
    finally:
        var_child_runnable_config.reset(token)
    assert stream._run is None and not stream.listening
