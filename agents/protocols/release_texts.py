"""The words the ParaVT release sends (EvolvingLMMs-Lab/ParaVT@cf55249): its evaluation
driver's system prompts, tool schema, question instructions and forced-answer texts, and its RL
workflow's tools message and crop_video sub-agent prompt.

These are wire data, not prose of this project: a checkpoint trained or evaluated on them is
shown exactly these bytes, so they are kept verbatim
(``tests/agents/protocols/test_release_protocol.py`` holds every request built from them to
the requests the release's own code builds).
"""

from __future__ import annotations

import json

SOURCE = "EvolvingLMMs-Lab/ParaVT@cf55249"

CROP_VIDEO_FUNCTION = {
    "type": "function",
    "function": {
        "name": "crop_video",
        "description": (
            "Analyze a cropped video segment by sampling frames from a specific time range."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "video_path": {"type": "string", "description": "Path to the video file"},
                "start_time": {"type": "number", "description": "Start time in seconds"},
                "end_time": {"type": "number", "description": "End time in seconds"},
            },
            "required": ["video_path", "start_time", "end_time"],
        },
    },
}
TOOL_SCHEMA = json.dumps(CROP_VIDEO_FUNCTION)  # paravt/eval/driver.py TOOL_SCHEMA

DIRECT_SYSTEM = (
    "You are a helpful video understanding assistant. Watch the video carefully "
    "and answer the question. Provide your final answer in <answer></answer> tags."
)

REASONING_SYSTEM = (
    "You are a helpful assistant. When the user asks a question, your response "
    "must include two parts: first, the reasoning process enclosed in "
    "<think>...</think> tags, then the final answer enclosed in <answer>...</answer> tags."
)

# Templates: str.format(tool_schema=TOOL_SCHEMA), as the driver's _system_message does.
GENERAL_AGENTIC_TEMPLATE = (
    "You are a video understanding agent that can analyze videos by cropping and "
    "examining specific segments.\n"
    "\n"
    "Available tool:\n"
    "<tools>\n"
    "{tool_schema}\n"
    "</tools>\n"
    "\n"
    "For tool calls, return a JSON object within <tool_call></tool_call> XML tags:\n"
    "<tool_call>\n"
    '{{"name": "crop_video", "arguments": {{"video_path": "...", "start_time": 0, '
    '"end_time": 10}}}}\n'
    "</tool_call>\n"
    "\n"
    "You may emit **multiple <tool_call> blocks in one turn** to analyze different "
    "segments in parallel — this is more efficient than sequential calls and is "
    "the recommended dispatch shape for this agent.\n"
    "\n"
    "Format strictly as:\n"
    "<think>your reasoning here</think>\n"
    "<tool_call>...</tool_call>  (zero or more, parallel if multiple)\n"
    "<answer>your final answer</answer>\n"
    "\n"
    "Always wrap your reasoning in <think> tags and your final answer in <answer> tags."
)

MINIMAL_AGENTIC_TEMPLATE = (
    "# Tools\n"
    "\n"
    "You may call one or more functions to assist with the user query.\n"
    "\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n"
    "<tools>\n"
    "{tool_schema}\n"
    "</tools>\n"
    "\n"
    "For each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n"
    "<tool_call>\n"
    '{{"name": <function-name>, "arguments": <args-json-object>}}\n'
    "</tool_call>"
)

# paravt/eval/utils.py load_samples: the multiple-choice instruction per prompt mode
MCQ_INSTRUCTION_DIRECT = (
    "Think step by step, use crop_video if needed, then provide your "
    "answer in <answer>X</answer> tags where X is the option letter."
)
MCQ_INSTRUCTION = "Answer with the option letter only."
SUBTITLE_PREFIX = "This video's subtitles are listed below:\n{subtitles}\n\n"
CHARADES_QUESTION = (
    "Please find the visual event described by a sentence in the video, "
    "determining its starting and ending times. The format should be: "
    "'The event happens in the start time - end time'. "
    "For example, The event 'person turn a light on' happens in the 24.3 - 30.4 seconds. "
    'Now I will give you the textual sentence: "{caption}". '
    "Please return its start time and end time."
)

# paravt/eval/driver.py eval_one
VIDEO_PATH_SUFFIX = " The video path for this video is: {name}"
CROP_RESPONSE = "<tool_response>\n{count} frames from {start:.1f}s to {end:.1f}s.\n</tool_response>"
CROP_ERROR = "<tool_response>\n[Error cropping {start:.1f}s-{end:.1f}s]\n</tool_response>"
FORCE_MCQ = "Based on the video and cropped segments above, answer with ONLY the letter."
FORCE_GROUNDING = (
    "Based on the video and any cropped segments, provide your final answer "
    "about when the event happens. Use the format: "
    "'The event happens in the X.X - Y.Y seconds.'"
)
FORCE_MAX_TOKENS_MCQ = 64
FORCE_MAX_TOKENS_GROUNDING = 128
MAX_TOKENS = 2048

# paravt/rl/workflow.py tools_system_message, and its crop_video sub-agent
# (paravt/rl/subagents/crop_video/cropped_video.py)
RL_CROP_DESCRIPTION = (
    "Analyze a cropped video segment by sampling fixed number of frames "
    "and providing a summary of the content. Use this when you need to "
    "understand what happens in a specific time range of a video."
)
RL_TOOLS_HEADER = (
    "# Tools\n\n"
    "You may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n"
    "<tools>\n"
)
RL_TOOLS_FOOTER = (
    "\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n"
    "<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)
RL_TOOL_RESPONSE = "<tool_response>\n{summary}\n</tool_response>"
RL_ANSWER_SUFFIX = "Based on my analysis, "
RL_SUMMARY_MAX_TOKENS = 512
RL_TRUNCATED = " [truncated]"
# str.format(start=mm:ss, end=mm:ss, duration=seconds)
RL_SUBAGENT_PROMPT = (
    "You are analyzing a video segment from {start} to {end} (duration: "
    "{duration:.1f} seconds).\n"
    "\n"
    "The images shown are frames sampled from this video segment. Carefully "
    "examine each frame in sequence to understand the temporal progression of events.\n"
    "\n"
    "Your task: Provide a concise summary of what happens in this video segment.\n"
    "\n"
    "Guidelines:\n"
    "- Describe the key actions, events, or changes that occur across the frames\n"
    "- Note any important objects, people, or elements visible in the scene\n"
    "- Capture the temporal flow (what happens first, then, finally)\n"
    "- Focus on factual observations rather than interpretations\n"
    "\n"
    "Summary:"
)
