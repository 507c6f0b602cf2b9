"""The tiny model's tokenizer: byte-level BPE trained here on a generated corpus, with Qwen's
special tokens, the protocol tags as ordinary tokens, and a Qwen-style chat template.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

#: Size of the trained byte-level BPE vocabulary (the special and added tokens come on top).
BPE_VOCAB_SIZE = 4000

#: Qwen's special tokens, in Qwen's order; they never appear in decoded text unless asked for.
SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)

#: The protocol tags: ordinary added tokens (one id each, kept in decoded text), as in Qwen.
PROTOCOL_TOKENS = (
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "<answer>",
    "</answer>",
    "<tool_response>",
    "</tool_response>",
)

#: Qwen-style ChatML template. Content is a string or a list of parts (``text``; ``image`` /
#: ``image_url``; ``video``). Message text is never trimmed, so ``continue_final_message``
#: keeps a prefill such as ``"<think>\n"`` byte for byte. ``tools`` and assistant
#: ``tool_calls`` render as in Qwen's Hermes-style templates; tool results go back inside
#: ``<tool_response>`` in a user turn. Assistant turns sit in ``{% generation %}`` so trainers
#: can ask for an assistant-token mask. Every tag trims whitespace: all output is explicit.
CHAT_TEMPLATE = """
{%- macro render_content(content) -%}
  {%- if content is string -%}
    {{- content -}}
  {%- elif content is not none -%}
    {%- for part in content -%}
      {%- if part is string -%}
        {{- part -}}
      {%- elif part.type in ('image', 'image_url') or 'image' in part or 'image_url' in part -%}
        {{- '<|vision_start|><|image_pad|><|vision_end|>' -}}
      {%- elif part.type in ('video', 'video_url') or 'video' in part -%}
        {{- '<|vision_start|><|video_pad|><|vision_end|>' -}}
      {%- elif 'text' in part -%}
        {{- part.text -}}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
{%- endmacro -%}
{%- set first = 0 -%}
{%- if tools -%}
  {{- '<|im_start|>system\n' -}}
  {%- if messages and messages[0].role == 'system' -%}
    {{- render_content(messages[0].content) + '\n\n' -}}
    {%- set first = 1 -%}
  {%- endif -%}
  {{- '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' -}}
  {{- 'You are provided with function signatures within <tools></tools> XML tags:\n<tools>' -}}
  {%- for tool in tools -%}
    {{- '\n' + (tool | tojson) -}}
  {%- endfor -%}
  {{- '\n</tools>\n\nFor each function call, return a json object with function name and ' -}}
  {{- 'arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n' -}}
  {{- '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' -}}
{%- endif -%}
{%- for message in messages[first:] -%}
  {%- if message.role == 'assistant' -%}
    {{- '<|im_start|>assistant\n' -}}
    {%- generation -%}
      {{- render_content(message.content) -}}
      {%- for call in message.tool_calls or [] -%}
        {%- if call.function is defined -%}{%- set call = call.function -%}{%- endif -%}
        {%- if message.content or not loop.first -%}{{- '\n' -}}{%- endif -%}
        {{- '<tool_call>\n{"name": "' + call.name + '", "arguments": ' -}}
        {%- if call.arguments is string -%}
          {{- call.arguments -}}
        {%- else -%}
          {{- call.arguments | tojson -}}
        {%- endif -%}
        {{- '}\n</tool_call>' -}}
      {%- endfor -%}
      {{- '<|im_end|>' -}}
    {%- endgeneration -%}
    {{- '\n' -}}
  {%- elif message.role == 'tool' -%}
    {%- if loop.first or messages[first:][loop.index0 - 1].role != 'tool' -%}
      {{- '<|im_start|>user' -}}
    {%- endif -%}
    {{- '\n<tool_response>\n' + render_content(message.content) + '\n</tool_response>' -}}
    {%- if loop.last or messages[first:][loop.index0 + 1].role != 'tool' -%}
      {{- '<|im_end|>\n' -}}
    {%- endif -%}
  {%- else -%}
    {{- '<|im_start|>' + message.role + '\n' + render_content(message.content) + '<|im_end|>\n' -}}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<|im_start|>assistant\n' -}}
{%- endif -%}
"""

# Words for the generated tokenizer corpus: the vocabulary of prompts, notes and answers.
_WORD_TEXT = """
the a an of to in on at and or but is are was were be been being this that these those what
which who whom whose when where why how does do did done can could would should will shall may
might must it its he she they them their his her we our you your i me my not no yes all any some
each every both either neither few many much more most less least other another such same only
own very too also just even still already yet never always often sometimes usually once twice
video clip frame frames scene scenes shot shots second seconds minute minutes hour hours time
times start end beginning middle window segment part moment timestamp duration length interval
person people man men woman women child children boy girl baby player players team crowd group
dog cat bird horse cow fish animal animals car truck bus bike bicycle boat train plane road
street city building house home room kitchen bedroom bathroom office school store shop market
park garden field beach river lake sea mountain forest tree trees grass flower sky sun rain snow
table chair desk bed sofa door window wall floor ceiling light lamp box bag bottle cup glass
plate bowl knife fork spoon pan pot oven stove sink fridge food water coffee tea bread egg eggs
meat rice vegetable vegetables fruit apple banana orange tomato onion potato salt sugar oil
phone computer laptop screen keyboard camera television book paper pen pencil card cards ball
game music song guitar piano drum hat shirt jacket coat shoe shoes dress glasses watch ring
hand hands arm arms leg legs foot feet head face eye eyes mouth hair body finger fingers
hold holds holding held open opens opening opened close closes closing closed walk walks walking
run runs running ran jump jumps jumping pick picks picking picked put puts putting move moves
moving moved turn turns turning turned look looks looking looked talk talks talking talked cook
cooks cooking cooked cut cuts cutting pour pours pouring poured throw throws throwing threw catch
catches catching caught enter enters entering entered leave leaves leaving left sit sits sitting
sat stand stands standing stood eat eats eating ate drink drinks drinking drank write writes
writing wrote read reads reading play plays playing played watch watches watching watched wash
washes washing washed clean cleans cleaning cleaned drive drives driving drove ride rides riding
climb climbs climbing fall falls falling fell push pushes pushing pull pulls pulling carry
carries carrying carried place places placing placed point points pointing pointed show shows
showing showed shown give gives giving gave take takes taking took make makes making made use
uses using used find finds finding found happen happens happening happened appear appears
appearing appeared begin begins beginning began finish finishes finishing finished stop stops
stopping stopped continue continues continued change changes changing changed seem seems
red blue green yellow white black gray brown pink purple orange dark bright large small big
little tall short long wide narrow heavy empty full new old young first second third fourth
fifth last next previous final early late fast slow quickly slowly carefully suddenly again
before after during while then finally until since between from into onto over under above
below behind front inside outside near far around across through along toward towards away
left right top bottom center side sides corner edge background foreground upper lower
question questions answer answers option options choice choices choose select best correct
wrong true false following describe description summary summarize summarized explain reason
evidence supported unsupported uncertain verify verified verification note notes board tool
tools call calls crop cropped overview zoom inspect inspection region regions event events
action actions activity activities object objects count counts number numbers color colors text
chart charts slide slides document documents page pages title titles value values label labels
axis table figure graph data increase increases increased decrease decreases decreased rise
falls highest lowest most least average total percent percentage year years month months day
days approximately roughly about exactly nearly almost around estimated estimate estimates
think thinks thinking thought reasoning reasons because therefore since likely unlikely sure
unsure possible impossible probably maybe clear clearly visible invisible hidden detail details
detailed closely closer check checks checking checked need needs needed want wants wanted see
sees seeing saw seen notice notices noticed observe observes observed observation observations
identify identifies identified determine determines determined confirm confirms confirmed
compare compares compared comparison difference different similar same order sequence step
steps process result results conclusion information content contents context frame-level
"""
_WORDS = tuple(_WORD_TEXT.split())

_SUFFIXES = ("", "", "", "s", "ed", "ing", "er", "ly", "ness", "tion", "ment", "able", "al", "ful")
_QUESTIONS = (
    "What happens between {a} and {b} seconds?",
    "What is the person doing at {a} seconds?",
    "How many times does the {n} appear in the video?",
    "Which color is the {n} held by the person?",
    "Describe the scene from {a} to {b} seconds in detail.",
    "When does the {n} first appear? Answer with a time window.",
    "What does the person do after picking up the {n}?",
)


def _number(rng: random.Random) -> str:
    value = rng.choice((rng.randint(0, 3600), round(rng.uniform(0, 3600), 1)))
    return str(value)


def _tool_call(rng: random.Random) -> str:
    start = round(rng.uniform(0, 3000), rng.choice((0, 1, 2)))
    end = round(start + rng.uniform(1, 600), rng.choice((0, 1, 2)))
    call = {"name": "crop_video", "arguments": {"start_time": start, "end_time": end}}
    return "<tool_call>\n" + json.dumps(call) + "\n</tool_call>"


def _word(rng: random.Random) -> str:
    word = rng.choice(_WORDS) + rng.choice(_SUFFIXES)
    return word.capitalize() if rng.random() < 0.1 else word


def _sentence(rng: random.Random, length: int) -> str:
    words = [_word(rng) for _ in range(length)]
    return (" ".join(words)).capitalize() + rng.choice((".", ".", "?", ",", "!"))


def tokenizer_corpus(lines: int = 3000) -> list[str]:
    """The generated text the tokenizer is trained on (fixed, so every seed shares a vocab)."""
    rng = random.Random(1234)
    corpus: list[str] = []
    for _ in range(lines):
        noun = rng.choice(("ball", "cup", "dog", "car", "knife", "phone", "book", "bag"))
        a = _number(rng)
        b = _number(rng)
        parts = [
            f"<{rng.uniform(0, 3600):.1f} seconds>",
            rng.choice(_QUESTIONS).format(a=a, b=b, n=noun),
            "Options: " + " ".join(f"({c}) {_sentence(rng, 3)}" for c in "ABCD"),
            "<think>\n" + _sentence(rng, rng.randint(5, 20)) + "\n</think>",
            _tool_call(rng),
            "<answer>" + rng.choice(("A", "B", "C", "D", _sentence(rng, 6))) + "</answer>",
            "<tool_response>\n" + _sentence(rng, 12) + "\n</tool_response>",
            rng.choice(("SUPPORTED", "UNSUPPORTED", "UNCERTAIN")),
            f"[{a}, {b}]",
        ]
        rng.shuffle(parts)
        corpus.append("\n".join(parts))
    return corpus


def build_tokenizer(
    corpus: Sequence[str] | None = None,
    *,
    vocab_size: int = BPE_VOCAB_SIZE,
    whole_tokens: Sequence[str] = (),
):
    """Train the byte-level BPE tokenizer and wrap it as a ``Qwen2Tokenizer``.

    `corpus` defaults to :func:`tokenizer_corpus`; `whole_tokens` are added as ordinary
    tokens that are never split (paravt-nano spells each whole second 0..3600 as one).
    """
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import AddedToken, Qwen2Tokenizer
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    raw = Tokenizer(models.BPE())
    raw.normalizer = normalizers.NFC()
    raw.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    raw.train_from_iterator(tokenizer_corpus() if corpus is None else corpus, trainer=trainer)
    model_state = json.loads(raw.to_str())["model"]
    merges = [tuple(m.split(" ") if isinstance(m, str) else m) for m in model_state["merges"]]

    tokenizer = Qwen2Tokenizer(
        vocab=model_state["vocab"],
        merges=merges,
        unk_token=None,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        model_max_length=32768,
        clean_up_tokenization_spaces=False,
        split_special_tokens=False,
        extra_special_tokens=None,
    )
    tokenizer.add_special_tokens(
        {"additional_special_tokens": [AddedToken(t, special=True) for t in SPECIAL_TOKENS]}
    )
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in PROTOCOL_TOKENS])
    if whole_tokens:
        tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in whole_tokens])
    return tokenizer
