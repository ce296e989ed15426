"""A grade as plain text for the terminal: one line per check in order, the first failure marked."""

from __future__ import annotations

from tutor.content.schema import Exercise, pick
from tutor.grading.result import GradeResult

MARKS = {"pass": "✓", "fail": "✗", "error": "!", "timeout": "⧗", "skipped": "·"}
LABELS = {
    "en": {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "timeout": "TIMEOUT", "points": "points",
           "first": "first failure", "hint": "hint", "output": "output of your code",
           "passed": "Passed. See the reference solution: python -m tutor exercise solution {id}",
           "isolation": "isolation", "more_hints": "stuck? python -m tutor grade {id} --hint shows hint {n} of {total}", "not_saved": "The grade was NOT saved: the progress store stayed busy (another tutor is writing to it). Grade again to record it."},
    "de": {"pass": "BESTANDEN", "fail": "NICHT BESTANDEN", "error": "FEHLER", "timeout": "ZEITÜBERSCHREITUNG",
           "points": "Punkte", "first": "erster Fehler", "hint": "Tipp", "output": "Ausgabe deines Codes",
           "passed": "Bestanden. Die Referenzlösung: python -m tutor exercise solution {id}",
           "isolation": "Isolation", "more_hints": "Kommst du nicht weiter? python -m tutor grade {id} --hint zeigt Tipp {n} von {total}", "not_saved": "Die Bewertung wurde NICHT gespeichert: Der Fortschrittsspeicher blieb belegt (ein anderes Tutor-Fenster schreibt gerade). Bewerte noch einmal, um sie festzuhalten."},
    "zh": {"pass": "通过", "fail": "未通过", "error": "出错", "timeout": "超时", "points": "分",
           "first": "第一个问题", "hint": "提示", "output": "你的代码的输出",
           "passed": "通过了。参考答案：python -m tutor exercise solution {id}",
           "isolation": "隔离", "more_hints": "卡住了？python -m tutor grade {id} --hint 显示第 {n} 条提示（共 {total} 条）", "not_saved": "这次评分没有保存：进度存储一直被占用（另一个导师窗口正在写入）。请再评一次以记录结果。"},
}  # fmt: skip


def render(result: GradeResult, ex: Exercise, lang: str = "en", hints_seen: int | None = None) -> str:
    """The grade says what is wrong; how to fix it comes from the tiered hints, one at a time: the
    exercise's general hints first (`--hint`), and the first failure's own hint once they are all
    seen. `hints_seen` None (no store) shows the first failure's hint at once."""
    t = LABELS.get(lang, LABELS["en"])
    all_seen = hints_seen is None or hints_seen >= len(ex.hints)
    lines = [
        f"{ex.id} — {pick(ex.title, lang)}: {t[result.status]}  "
        f"{result.score:g}/{result.max_score:g} {t['points']}  ({result.duration_s:.1f} s)"
    ]
    first = result.first_failure
    for c in result.checks:
        mark = MARKS[c.status]
        flag = f"   ← {t['first']}" if c is first else ""
        lines.append(f"  {mark} {c.title or c.name} [{c.name}]  {c.points:g}/{c.max_points:g}{flag}")
        if c.message:
            lines.append(f"      {c.message}")
        if c is first and all_seen and c.hint:
            lines.append(f"      {t['hint']}: {c.hint}")
    if first is not None and not all_seen:
        lines.append("  " + t["more_hints"].format(id=ex.id, n=hints_seen + 1, total=len(ex.hints)))
    if result.output.strip():
        lines.append(f"  {t['output']}:")
        lines.extend("    | " + line for line in result.output.rstrip().splitlines())
    if result.status == "pass":
        lines.append(t["passed"].format(id=ex.id))
    level = result.isolation.get("level", "none")
    if level != "none":
        layers = "; ".join(result.isolation.get("layers", []))
        lines.append(f"  {t['isolation']}: {level}" + (f" — {layers}" if layers else ""))
    if result.saved is False:
        lines.append(t["not_saved"])
    return "\n".join(lines)
