"""Text a submission could have written, made safe to show: it can never pass for the grader's own lines.

What the learner's code controls reaches a grade as text: an exception's message (and so a load error or
a check's error), what a check quotes of a returned value, what the file printed, and, in a merged
report, every text of it. Two rules, applied where a grade is made (result.GradeResult and CheckResult
validate every grade through them: runner.build_result's, a merge's), so every place that shows a grade
(the terminal report, the lab, batch tables, exports, feedback files, the class view) shows the same:

- `clean`: no escape or control sequence, no bidi control that would reorder it, no lone surrogate; a
  control character becomes �. A terminal shows the text as it is: no colours, no cursor moves, no
  window titles, nothing written over.
- `one_line`: a check's message and hint are one line; every line break in them (each one
  str.splitlines knows, the carriage return included) is shown as ↵ and a tab as ⇥. A message cannot
  start a line of its own that reads like a check's result (`✓ adds [add]  1/1`) or a grade's total.
  What the file printed stays lines, each shown under the grader's own prefix (tutor.grading.text).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI sequences (colours, cursor moves, screen clears)
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC sequences (window titles, hyperlinks, clipboard)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|\x1b.?"  # any other escape
    r"|(?P<control>[\x00-\x08\x0b-\x1f\x7f-\x9f])"  # other control characters (newline and tab stay)
    r"|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"  # bidi controls (U+202E reverses what follows)
)
# every line break str.splitlines() knows; "\r\n" is one
_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
LINE_BREAK, TAB = "↵", "⇥"


def clean(text: str) -> str:
    """Text that is safe to show in a terminal: no escape or control sequences, no bidi controls that
    would reorder it, no lone surrogates. A control character becomes �; the rest is removed."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    return _UNSAFE.sub(lambda m: "�" if m.group("control") else "", text)


def one_line(text: str) -> str:
    """`clean` text on one line: each line break shown as ↵, each tab as ⇥."""
    return clean(_BREAK.sub(LINE_BREAK, text).replace("\t", TAB))
