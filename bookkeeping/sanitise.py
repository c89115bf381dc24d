"""Text from containers and task files made safe for a terminal and a log: every character a
terminal would act on is shown escaped instead.

Escaped: C0 controls (ESC, so every CSI and OSC sequence such as `ESC ]52;c;...BEL`, which sets the
clipboard, and `ESC [2J`, which clears the screen; BEL, BS, CR, NUL, ...), DEL, C1 controls
(U+0080-U+009F, among them the 8-bit CSI U+009B and OSC U+009D), the bidirectional overrides and
isolates (U+202A-U+202E, U+2066-U+2069) and marks (U+200E, U+200F, U+061C), the line and paragraph
separators (U+2028, U+2029) and lone surrogates (bytes that were not UTF-8, kept by
errors="surrogateescape"). A character below U+0100 is shown as `\\xNN`, any other as `\\uNNNN`
(Python's escapes), so the line says what was there. Tab is kept; newline too with keep_newlines.

Every line termrl prints or logs that carries container or task text goes through `printable`;
`install_log_sanitiser` makes the logging module do it for every record's arguments.
"""

from __future__ import annotations

import logging
import re

_ALWAYS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1
    "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"  # bidi marks, separators
    "\ud800-\udfff"  # lone surrogates
)
_ONE_LINE = re.compile(f"[\n{_ALWAYS}]")
_MULTI_LINE = re.compile(f"[{_ALWAYS}]")


def _escape(m: re.Match) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, keep_newlines: bool = False) -> str:
    """str(text) with every terminal-active character escaped (module docstring): one line, unless
    keep_newlines (then `\\n` stays and `\\r` is still escaped, so no line can overwrite another)."""
    return (_MULTI_LINE if keep_newlines else _ONE_LINE).sub(_escape, str(text))


def _plain(arg: object) -> object:
    # text and errors carry what containers print; anything else keeps its type, so that %d, %.3f
    # and %r format it as before
    if isinstance(arg, (str, BaseException)):
        return printable(arg)
    if isinstance(arg, bytes):
        return printable(arg.decode("utf-8", "backslashreplace"))
    return arg


class _Factory:
    """A LogRecord factory that escapes the record's arguments (one line each) and its message
    (newlines kept: termrl's own messages may span lines)."""

    def __init__(self, inner):
        self.inner = inner

    def __call__(self, *args, **kwargs) -> logging.LogRecord:
        record = self.inner(*args, **kwargs)
        if isinstance(record.msg, str):
            record.msg = printable(record.msg, keep_newlines=True)
        if isinstance(record.args, tuple):
            record.args = tuple(_plain(a) for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: _plain(v) for k, v in record.args.items()}
        return record


def install_log_sanitiser() -> None:
    """Make every log record of this process pass through `printable` (idempotent). Called by each
    command's entry point before anything is logged."""
    factory = logging.getLogRecordFactory()
    if not isinstance(factory, _Factory):
        logging.setLogRecordFactory(_Factory(factory))
