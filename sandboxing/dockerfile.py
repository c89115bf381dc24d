"""Dockerfiles as people write them, made buildable by docker-py's classic builder (no BuildKit, no registry).

Parsing follows the Dockerfile reference (docs.docker.com/reference/dockerfile): instructions, backslash
continuations (comment lines inside them dropped), and BuildKit heredocs (`<<EOF`, `<<-EOF`, `<<'EOF'`,
`<<"EOF"`) in RUN, COPY and ADD, whose bodies follow the instruction line and end at a line holding only
the delimiter. The classic builder reads the body lines as instructions and fails, so `expand_heredocs`
rewrites them into what it can build:

- `COPY <<EOF /dest` (and ADD): each body becomes a build-context file `.termrl-heredocs/<n>/<TAG>` and the
  instruction copies that file (a destination ending in `/` gets a file named TAG, as with BuildKit);
- `RUN <<EOF` (a script) and `RUN cmd <<EOF ...` (a command fed heredocs): the script, written as BuildKit
  runs it, travels base64-encoded in the RUN line, is written to a temporary file and run with `sh` (or
  executed directly when it starts with `#!`).
Variables in unquoted COPY heredocs are not expanded (BuildKit would expand build args there).
"""

import base64
import json
import re
import shlex
from dataclasses import dataclass, field

HEREDOC_DIR = ".termrl-heredocs"  # build-context folder of expanded COPY/ADD heredoc bodies
_HEREDOC = re.compile(r"(?<![<\w])<<(-?)([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
_HEREDOC_KEYWORDS = ("RUN", "COPY", "ADD")


@dataclass
class Instruction:
    """One Dockerfile instruction. first/last: 1-based physical line range, heredoc bodies included."""

    keyword: str  # upper case, e.g. "RUN"
    args: str  # the text after the keyword, continuations joined (heredoc markers kept)
    first: int
    last: int
    heredocs: list[tuple[str, str]] = field(default_factory=list)  # (delimiter, body) in order


def parse(text: str) -> list[Instruction]:
    """Dockerfile text -> instructions (comments and blank lines between instructions skipped).

    Raises ValueError naming the line when a heredoc has no closing delimiter.
    """
    lines = text.splitlines()
    out = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        first = i + 1
        parts = []
        while True:
            line = lines[i].rstrip()
            i += 1
            if line.endswith("\\"):
                parts.append(line[:-1])
                # comments inside continuations
                while i < len(lines) and lines[i].lstrip().startswith("#"):
                    i += 1
                if i < len(lines):
                    continue
            else:
                parts.append(line)
            break
        logical = "".join(parts).strip()
        keyword, _, args = logical.partition(" ")
        ins = Instruction(keyword.upper(), args.strip(), first, i)
        if ins.keyword in _HEREDOC_KEYWORDS:
            for strip_tabs, _, tag in _HEREDOC.findall(ins.args):
                body = []
                while (
                    i < len(lines)
                    and (lines[i].lstrip("\t") if strip_tabs else lines[i]).rstrip() != tag
                ):
                    body.append(lines[i].lstrip("\t") if strip_tabs else lines[i])
                    i += 1
                if i >= len(lines):
                    raise ValueError(f"line {first}: heredoc <<{tag} has no closing '{tag}' line")
                i += 1
                ins.heredocs.append((tag, "\n".join(body) + "\n"))
            ins.last = i
        out.append(ins)
    return out


def copy_sources(ins: Instruction) -> tuple[list[str], list[str], str | None]:
    """COPY/ADD -> (flags, build-context sources, destination); heredoc sources are not listed.

    Raises ValueError for arguments shlex/JSON cannot split.
    """
    rest = _HEREDOC.sub("", ins.args).strip()
    args = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
    flags = [a for a in args if a.startswith("--")]
    plain = [a for a in args if not a.startswith("--")]
    if not plain:
        return flags, [], None
    return flags, plain[:-1], plain[-1]


def _run_script(ins: Instruction) -> str:
    """The script BuildKit runs for a RUN with heredocs."""
    command = _HEREDOC.sub("", ins.args).strip()
    if not command and len(ins.heredocs) == 1:
        return ins.heredocs[0][1]
    script = ins.args
    for tag, body in ins.heredocs:
        script += "\n" + body + tag
    return script + "\n"


def expand_heredocs(text: str) -> tuple[str, dict[str, bytes]]:
    """Dockerfile text -> (text the classic builder builds, {build-context path: content} to add).

    Text without heredocs comes back unchanged. Raises ValueError (see parse; a COPY heredoc without
    a destination).
    """
    instructions = parse(text)
    if not any(ins.heredocs for ins in instructions):
        return text, {}
    lines = text.splitlines()
    files = {}
    n = 0
    for ins in reversed(instructions):
        if not ins.heredocs:
            continue
        n += 1
        if ins.keyword == "RUN":
            script = _run_script(ins)
            b64 = base64.b64encode(script.encode()).decode()
            run = (
                'f=$(mktemp) && echo "$0" | base64 -d > "$f" && chmod +x "$f" && '
                + ('"$f"' if script.startswith("#!") else 'sh "$f"')
                + '; rc=$?; rm -f "$f"; exit $rc'
            )
            new = f"RUN sh -c {shlex.quote(run)} {b64}"
        else:
            flags, sources, dest = copy_sources(ins)
            if dest is None:
                raise ValueError(
                    f"line {ins.first}: {ins.keyword} with a heredoc needs a destination"
                )
            heredoc_paths = []
            for tag, body in ins.heredocs:
                path = f"{HEREDOC_DIR}/{ins.first}/{tag}"
                files[path] = body.encode()
                heredoc_paths.append(path)
            new = " ".join(
                [ins.keyword, *flags, *map(shlex.quote, sources + heredoc_paths), shlex.quote(dest)]
            )
        lines[ins.first - 1 : ins.last] = [new]
    return "\n".join(lines) + "\n", files


def stage_bases(text: str) -> list[tuple[int, str, str | None]]:
    """(line, image, stage name or None) of every FROM, in order (flags such as --platform dropped)."""
    out = []
    for ins in parse(text):
        if ins.keyword != "FROM":
            continue
        words = [w for w in ins.args.split() if not w.startswith("--")]
        name = words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None
        out.append((ins.first, words[0] if words else "", name))
    return out


def rewrite_from(text: str, resolve) -> tuple[str, list[tuple[str, str]]]:
    """Replace external FROM images: resolve(image) -> image to build FROM (the same one to keep it).

    Images named by an earlier stage or holding a variable (`FROM ${BASE_IMAGE}`) are left alone.
    Returns (text, [(old, new) for each rewritten FROM]). resolve's exceptions propagate.
    """
    lines = text.splitlines()
    changes = []
    stages = set()
    edits = []
    for ins in parse(text):
        if ins.keyword != "FROM":
            continue
        words = ins.args.split()
        plain = [w for w in words if not w.startswith("--")]
        if not plain:
            continue
        image = plain[0]
        if image.lower() not in stages and "$" not in image:
            new = resolve(image)
            if new != image:
                edits.append((ins, " ".join(["FROM", new, *plain[1:]])))
                changes.append((image, new))
        if len(plain) >= 3 and plain[1].lower() == "as":
            stages.add(plain[2].lower())
    if not changes:
        return text, []
    for ins, new in reversed(edits):
        lines[ins.first - 1 : ins.last] = [new]
    return "\n".join(lines) + "\n", changes
