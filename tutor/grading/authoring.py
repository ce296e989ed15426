"""For course authors: every exercise's starter must fail, in every language, and its reference must
pass, in every language; each file in `accepted/` passes; each file in `broken/` names on its first line
the check it must fail (`# fails: CHECK — why`) and fails it, first or alone as the exercise's
`broken_fails` says; the language variants of the starter and the reference are the same code
(tutor.content.variants); and every message its checks.py says (`msg("key")`) is in its
exercise.toml's [messages], and used.

`check_exercises(course)` returns content problems (tutor.content.problems.Problem); it is one of
the checkers `python -m tutor check` runs. Code exercises are graded for real in one child process
(runner.grade_trusted: one judge and one worker per exercise); "runs" exercises are graded against sample runs from their checks.py.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import re
from pathlib import Path

from tutor.content.problems import Problem, error, warning
from tutor.content.schema import Exercise
from tutor.content.variants import ROLES, variant_problems, variants
from tutor.grading.result import GradeResult
from tutor.grading.runner import grade_trusted
from tutor.grading.workspace import solution_file, starter_file


def _files(ex: Exercise) -> tuple[Path, Path, Path]:
    return starter_file(ex), solution_file(ex), Path(ex.folder or ".") / "checks.py"


def _static_problems(ex: Exercise) -> list[Problem]:
    folder = Path(ex.folder or ".")
    problems = [error(f, "file is missing") for f in _files(ex) if not f.is_file()]
    problems += _worker_problems(ex)
    problems += variant_problems(ex)
    checks = folder / "checks.py"
    if checks.is_file():
        try:
            tree = ast.parse(checks.read_text(encoding="utf-8"), str(checks))
        except SyntaxError as err:
            return [*problems, error(checks, f"syntax error: {err.msg}", line=err.lineno)]
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        missing = [decl.id for decl in ex.checks if f"check_{decl.id}" not in defined]
        for cid in missing:
            problems.append(
                error(checks, f"no function check_{cid} for the declared check {cid!r}", field="checks")
            )
        # a message nothing uses is worth a warning only once every declared check is written
        problems += [p for p in _message_problems(ex, checks, tree) if p.severity == "error" or not missing]
    return problems


def _worker_problems(ex: Exercise) -> list[Problem]:
    """What the exercise hands its worker must exist: an installed package, a course module (one file of
    tutor/model/), a course file."""
    import importlib.util

    from tutor.settings import ROOT, is_course_module

    toml = Path(ex.folder or ".") / "exercise.toml"
    problems = []
    for name in ex.worker.imports:
        top = name.split(".")[0]
        if is_course_module(name):
            module = ROOT.joinpath(*name.split("."))
            if not (module.with_suffix(".py").is_file() or (module / "__init__.py").is_file()):
                problems.append(error(toml, f"worker.imports: no course module {name!r}", "worker.imports"))
        elif importlib.util.find_spec(top) is None:
            problems.append(error(toml, f"worker.imports: {top!r} is not installed", "worker.imports"))
    for file in ex.worker.files:
        if not (ROOT / file).is_file():
            problems.append(error(toml, f"worker.files: no file {file!r} in the course", "worker.files"))
    return problems


def _message_keys(tree: ast.Module) -> list[tuple[str, int]]:
    """Every `msg(KEY, ...)` in checks.py: the key (both of `"a" if … else "b"`), or a glob for an
    f-string key (`pairing_*`), and its line."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name != "msg":
            continue
        first = node.args[0]
        for option in [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]:
            if isinstance(option, ast.Constant) and isinstance(option.value, str):
                found.append((option.value, node.lineno))
            elif isinstance(option, ast.JoinedStr):
                parts = [str(v.value) if isinstance(v, ast.Constant) else "*" for v in option.values]
                found.append(("".join(parts), node.lineno))
    return found


def _message_problems(ex: Exercise, checks: Path, tree: ast.Module) -> list[Problem]:
    """A message checks.py asks for that exercise.toml lacks is an error (the grader would fail on
    it); a message nothing asks for is a warning."""
    toml = Path(ex.folder or ".") / "exercise.toml"
    keys = _message_keys(tree)
    problems = [
        error(checks, f"msg({key!r}): exercise.toml has no [messages] entry for it", "messages", line)
        for key, line in keys
        if not fnmatch.filter(ex.messages, key)
    ]
    problems += [
        warning(toml, f"message {name!r} is not used by checks.py", f"messages.{name}")
        for name in ex.messages
        if not any(fnmatch.fnmatchcase(name, key) for key, _ in keys)
    ]
    return problems


def _summary(result: GradeResult) -> str:
    bad = [c for c in result.checks if c.status != "pass"]
    return "; ".join(f"{c.name}: {c.status} ({c.message[:120]})" for c in bad[:3]) or "all checks pass"


def _runs_problems(ex: Exercise) -> list[Problem]:
    from tutor.grading.runs import exercise_checks, grade_runs

    module = exercise_checks(ex)
    sample = getattr(module, "sample_runs", None)
    reference = getattr(module, "reference_answer", None)
    checks = Path(ex.folder or ".") / "checks.py"
    if sample is None or reference is None:
        return [error(checks, "a runs exercise's checks.py needs sample_runs() and reference_answer(runs)")]

    runs = sample({1: 2.31, 4: 2.25, 8: 2.28})
    answer = "\n".join(f"{k} = {json.dumps(v)}" for k, v in reference(runs).items())
    ref = grade_runs(ex, answer.encode(), "reference answer", runs)
    problems = []
    for starter in variants(ex, "starter").values():
        if grade_runs(ex, starter.read_bytes(), starter.name, runs).status == "pass":
            problems.append(error(starter, "the starter passes every check; it must fail"))
    if ref.status != "pass":
        problems.append(error(checks, f"the reference answer does not pass: {_summary(ref)}"))
    return problems


_FAILS = re.compile(r"# fails: ([a-z0-9_]+) — ")  # a broken file's first line: `# fails: CHECK — why`


def named_check(path: Path) -> str | None:
    """The check a broken file's first line names, or None when that line is not `# fails: CHECK — why`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    match = _FAILS.match(lines[0]) if lines else None
    return match.group(1) if match else None


def _broken_header_problems(ex: Exercise, path: Path) -> list[Problem]:
    named = named_check(path)
    if named is None:
        return [error(path, "the first line must be '# fails: CHECK — why'", line=1)]
    if named not in {c.id for c in ex.checks}:
        return [error(path, f"names the check {named!r}, which exercise.toml does not declare", line=1)]
    return []


def broken_problems(ex: Exercise, path: Path, result: GradeResult) -> list[Problem]:
    """What is wrong with a broken file's grade: it passes, another check fails first, or (the
    exercise's `broken_fails = "only"`) another check fails too."""
    named = named_check(path)
    first = result.first_failure
    if first is None:
        return [error(path, f"passes every check; it must fail {named!r}")]
    if first.name != named:
        return [error(path, f"fails {first.name!r} first; it must fail {named!r} first: {_summary(result)}")]
    others = [c.name for c in result.checks if c.status != "pass" and c.name != named]
    if ex.broken_fails == "only" and others:
        also = ", ".join(repr(name) for name in others)
        return [error(path, f'fails {also} too; it must fail {named!r} alone (broken_fails = "only")')]
    return []


def _graded_files(ex: Exercise) -> tuple[dict[Path, str], list[Problem]]:
    """({file: its role}, problems): every file `check` grades, with what it must do: "starter" fail,
    "solution" and "accepted" pass, "broken" fail the check its first line names (a broken file whose
    first line names no declared check is a problem, and not graded)."""
    files = {path: role for role in ROLES for path in variants(ex, role).values()}
    folder = Path(ex.folder or ".")
    files |= {path: "accepted" for path in sorted((folder / "accepted").glob("*.py"))}
    problems = []
    for path in sorted((folder / "broken").glob("*.py")):
        header = _broken_header_problems(ex, path)
        problems += header
        if not header:
            files[path] = "broken"
    return files, problems


def _verdict_problems(ex: Exercise, path: Path, role: str, result: GradeResult) -> list[Problem]:
    if role == "starter" and result.status == "pass":
        return [error(path, f"the starter of {ex.id!r} passes every check; it must fail")]
    if role in ("solution", "accepted") and result.status != "pass":
        whose = "reference" if role == "solution" else "accepted solution"
        return [error(path, f"the {whose} of {ex.id!r} does not pass ({result.status}): {_summary(result)}")]
    if role == "broken":
        return broken_problems(ex, path, result)
    return []


def check_exercises(course) -> list[Problem]:
    """Problems with the course's exercises: missing files or check functions, a starter (in any
    language) that passes, a reference (in any language) or an accepted solution that fails, a broken
    file that does not fail the check it names, a language variant whose code drifted from the English
    file. Code exercises are graded for real, through the judge."""
    problems: list[Problem] = []
    items: list[tuple[Exercise, list[Path]]] = []
    roles: dict[Path, str] = {}
    for ex in course.exercises():
        if not any(f.is_file() for f in _files(ex)):
            continue  # a content-only fixture (no code at all): nothing to grade, nothing half-written
        static = _static_problems(ex)
        problems += static
        if any(p.severity == "error" for p in static):
            continue
        if ex.kind == "runs":
            problems += _runs_problems(ex)
        else:
            found, header = _graded_files(ex)
            problems += header
            roles |= found
            items.append((ex, list(found)))
    results = grade_trusted(items, jobs=os.cpu_count() or 1) if items else {}
    for ex, files in items:
        for path in files:
            problems += _verdict_problems(ex, path, roles[path], results[path])
    return problems
