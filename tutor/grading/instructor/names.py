"""Names and times as reports show them: a file's name escaped one-to-one (`shown_name`, and back with
`raw_name`), a POSIX time as ISO 8601 in UTC (`iso`). Used by the batch, the collection of an LMS's
download, the deadlines and the merge, below all of them."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime

_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# shown as escapes: controls, format characters (bidi, zero-width), surrogates, line and paragraph breaks
_HIDDEN = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def shown_name(name: str) -> str:
    r"""A file name as a report shows it: one line, nothing invisible, nothing that reorders text.

    Backslash, newline, carriage return and tab are written `\\`, `\n`, `\r`, `\t`; other C0 controls
    and DEL `\xNN`; a byte that is not UTF-8 (kept by the OS as U+DC80-U+DCFF) `\xNN` of that byte;
    every other control, format (bidi controls, zero-width characters), surrogate, line or paragraph
    separator character `\uNNNN` (`\UNNNNNNNN` above U+FFFF). Everything else, Chinese and accents
    included, is shown as it is. As a backslash is always doubled, an escape cannot be faked."""
    out = []
    for ch in name:
        code = ord(ch)
        if ch in _NAMED:
            out.append(_NAMED[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the byte the name had
            out.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(ch) in _HIDDEN:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def raw_name(shown: str) -> str | None:
    """The name `shown_name` made `shown` from (shown_name is one-to-one), or None when `shown` is not
    something shown_name writes. Reports keep names as shown; this puts them back in the folder's
    order (`grade --merge`)."""
    out, i = [], 0
    while i < len(shown):
        ch = shown[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        kind = shown[i + 1 : i + 2]
        width = {"x": 2, "u": 4, "U": 8}.get(kind)
        if kind in ("\\", "n", "r", "t"):
            out.append({"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}[kind])
            i += 2
        elif width is not None and re.fullmatch(f"[0-9a-f]{{{width}}}", shown[i + 2 : i + 2 + width]):
            code = int(shown[i + 2 : i + 2 + width], 16)
            if kind == "x" and code >= 0x80:
                code += 0xDC00  # a byte that is not UTF-8, as the OS keeps it
            if code > 0x10FFFF:
                return None
            out.append(chr(code))
            i += 2 + width
        else:
            return None
    raw = "".join(out)
    return raw if shown_name(raw) == shown else None


def iso(stamp: float) -> str:
    """A POSIX time as ISO 8601 in UTC, to the second."""
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
