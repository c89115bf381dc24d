"""The tools the agent is offered and its system prompts, one per action format."""

import json

TOOL_SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a bash command in the container's persistent shell (cwd and exported variables persist). Returns the exit code and the output (stdout and stderr interleaved, long output cut in the middle).",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "timeout_s": {
                        "type": "number",
                        "description": "seconds before the command is killed",
                    },
                },
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file, optionally lines offset..offset+limit-1 (1-based).",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "offset": {"type": "integer"},
                    "limit": {"type": "integer"},
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Create or overwrite a file with the given content.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "edit_file",
            "description": "Replace the exact text `old` with `new` in a file. `old` must occur exactly once unless replace_all is true. Multi-line text is fine.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old": {"type": "string"},
                    "new": {"type": "string"},
                    "replace_all": {"type": "boolean"},
                },
                "required": ["path", "old", "new"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "finish",
            "description": "End the episode when the task is done.",
            "parameters": {
                "type": "object",
                "properties": {"message": {"type": "string", "description": "what you did"}},
                "required": ["message"],
            },
        },
    },
]

HERMES_SYSTEM = """You are an agent solving a task in a Linux terminal inside a Docker container. The working directory is /app. There is no network.
You may think inside <think></think> before acting.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{tools}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{{"name": <function-name>, "arguments": <args-json-object>}}
</tool_call>
Several calls in one reply run in order. Their results come back in the next message. When the task is done, call finish."""

# Short and concrete for a 135M model: one command per reply, one worked example (a made-up task, none of
# the task set), then DONE. Every reply stops after its first bash block (markdown_action_done).
MARKDOWN_SYSTEM = """You are a Linux terminal agent. The working directory is /app.
Reply with one shell command in a bash block. You then see its output. When the task is done, reply DONE.

Example task: Create the file /app/notes.txt containing hi
Your reply:
```bash
echo hi > /app/notes.txt
```
Output:
$ echo hi > /app/notes.txt
exit code: 0
Your reply:
DONE"""


def system_prompt(action_format: str) -> str:
    """The system prompt for an action format ('hermes' or 'markdown'). Raises ValueError for another name."""
    if action_format == "hermes":
        return HERMES_SYSTEM.format(tools="\n".join(json.dumps(s) for s in TOOL_SCHEMAS))
    if action_format == "markdown":
        return MARKDOWN_SYSTEM
    raise ValueError(f"action_format = {action_format!r}: must be 'hermes' or 'markdown'")
