"""Grade output in German and Chinese holds no English: the grader's own words (why it
stopped, what the learner's code did, "expected … got …") come from the catalogue, and each
exercise's checks say theirs from the [messages] of its exercise.toml, in the learner's language.

The rule is test_texts.py's (`_english_left`: no catalogue English, no word of 4+ letters that is
neither the language's own nor a name nor code), applied after taking out what is not ours to
translate: code quoted in backticks, and the text of an exception (the learner's words, or Python's
and torch's), which de and zh messages always put last on their line, after the exception's name.
Grading runs through the real judge: every reference, starter, broken and accepted file in-process
(`grade_trusted`), and hostile submissions through the CLI."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import PYTHON, ROOT, run_tutor_env
from test_texts import NAMES, _english_left

from tutor.content.loader import load_course
from tutor.content.schema import Exercise
from tutor.grading.authoring import _message_problems
from tutor.grading.instructor import batch
from tutor.grading.judges import WarmJudge
from tutor.grading.judging.remote import LearnerError
from tutor.grading.result import GradeResult
from tutor.grading.runner import grade_trusted
from tutor.grading.text import render
from tutor.grading.workspace import solution_file, starter_file
from tutor.texts import catalogue, say

COURSE = load_course(ROOT / "tutor" / "lessons")
CODE = [ex for ex in COURSE.exercises() if ex.kind == "code"]
LANGS = ("de", "zh")

# code: quoted in backticks, a command, an option, a keyword argument, a Python (or TOML) constant
CODE_TEXT = re.compile(
    r"`[^`\n]*`|\w+\[[^\]\n]*\]|python -m tutor[\w .=/-]*|--[\w-]+|\b[A-Za-z_]\w*=|\b(?:True|False|None|true|false)\b"
)
CALL = re.compile(r"[A-Za-z_][\w.]*\([^()\n]*\)")  # a call with its arguments: apply_rope(x, pos, base)
# an exception's own text: from its name to the end of the line
RAISED = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)\b.*$", re.M)
PLACEHOLDER = re.compile(r"\{[^}]*\}")
FORMATS = {
    "TOML",
    "JSON",
    "CSV",
    "FIFO",
    "Ctrl",
    "Canvas",
    "Moodle",
    "Gradescope",
    "LMS",
    "exercism",
    "Blackboard",
}  # names of
# file kinds, of a key and of the LMSs


def _own_words(ex: Exercise | None, lang: str) -> set[str]:
    """German words of the exercise's own German texts (test_texts takes the catalogue's)."""
    if ex is None or lang != "de":
        return set()
    texts = [ex.title, ex.task, *ex.hints, *ex.messages.values()]
    texts += [c.title for c in ex.checks] + [c.hint for c in ex.checks]
    return set(re.findall(r"[A-Za-zÄÖÜäöüß]+", " ".join(t.get("de", "") for t in texts)))


def english(text: str, lang: str, ex: Exercise | None = None) -> list[str]:
    """What is left of English in `text` once code and exception texts are taken out."""
    text = RAISED.sub(" ", CODE_TEXT.sub(" ", CALL.sub(" ", text)))
    own = _own_words(ex, lang) | FORMATS
    return [w for w in _english_left(text, lang, "") if w not in own]


def _words(text: str) -> set[str]:
    """Whole words of 4+ letters, not code (`name(`, `.name`, `name_with_underscores`) nor names."""
    text = re.sub(
        r"[A-Za-z_][\w.]*\(|\.\w+", " ", RAISED.sub(" ", CODE_TEXT.sub(" ", PLACEHOLDER.sub(" ", text)))
    )
    return {w for w in re.findall(r"\w+", text) if re.fullmatch(r"[A-Za-z]{4,}", w)} - NAMES - FORMATS


def _copied(text: str, english_text: str) -> set[str]:
    """A German text that is mostly its English one: the words they share, when they are most of it.
    (German shares a few words with English: "inverse", "relative", "Status".)"""
    words = _words(text)
    shared = words & _words(english_text)
    return shared if len(shared) * 2 > len(words) else set()


# --- the texts themselves ------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_the_graders_own_texts_are_translated(lang):
    en, texts = catalogue("en"), catalogue(lang)
    keys = [k for k in en if k.startswith("grade.") and k in texts]  # Chinese has no ".one" forms
    assert len(keys) > 90
    for key in keys:
        text = PLACEHOLDER.sub(" ", texts[key])
        assert not english(text, lang), (key, texts[key])
        assert lang != "de" or not _copied(texts[key], en[key]), (key, texts[key])


@pytest.mark.parametrize("ex", [ex for ex in COURSE.exercises() if ex.messages], ids=lambda ex: ex.id)
def test_every_exercise_message_is_in_three_languages_and_translated(ex):
    for key, text in ex.messages.items():
        assert set(text) == {"en", "de", "zh"}, (ex.id, key)
        for lang in LANGS:
            assert not english(PLACEHOLDER.sub(" ", text[lang]), lang, ex), (ex.id, key, text[lang])
            assert lang != "de" or not _copied(text[lang], text["en"]), (ex.id, key, text[lang])


def test_every_code_exercise_says_its_words_through_messages():
    """No English sentence is left in a checks.py: its strings are code, keys or formats of values.
    (head-count, graded from stored runs: tests/test_grading_lang_head_count.py.)"""
    for ex in CODE:
        tree = ast.parse((ex.folder / "checks.py").read_text(encoding="utf-8"))
        assert not _message_problems(ex, ex.folder / "checks.py", tree), ex.id


def test_a_message_check_py_lacks_or_a_translation_with_other_fields_is_reported(tmp_path):
    from tutor.content.loader import load_course as load

    shipped = ROOT / "tutor/lessons/01-multi-head/exercises/split-heads"
    lesson = tmp_path / "lessons/01-x"
    ex_dir = lesson / "exercises/split-heads"
    ex_dir.mkdir(parents=True)
    (lesson / "lesson.toml").write_text('id = "x"\norder = 1\ntitle = { en = "X" }\n', encoding="utf-8")
    (lesson / "en.md").write_text("# X\n\n## Split {#split-heads}\n\nText.\n", encoding="utf-8")
    toml = (shipped / "exercise.toml").read_text(encoding="utf-8")
    message = '\n[messages.a_shape]\nen = "shape {shape}"\nde = "Form {form}"\nzh = "形状 {shape}"\n'
    (ex_dir / "exercise.toml").write_text(toml + message, encoding="utf-8")
    course = load(tmp_path / "lessons")
    (problem,) = [p for p in course.problems if p.severity == "error"]
    assert problem.file.name == "exercise.toml" and "messages" in problem.field
    assert "{form}" in problem.message and "{shape}" in problem.message

    ex = COURSE.exercise("three-layers")
    tree = ast.parse('from tutor.grading.kit import msg\n\ndef check_x(sub):\n    return msg("no_such")\n')
    problems = _message_problems(ex, ex.folder / "checks.py", tree)
    assert [(p.severity, p.line) for p in problems if "no_such" in p.message] == [("error", 4)]
    assert {p.severity for p in problems} == {"error", "warning"}  # and the shipped ones go unused


# --- grading the course's own files through the judge --------------------------------------------


@pytest.fixture(scope="module")
def graded() -> dict[str, dict[Path, GradeResult]]:
    """Every reference, starter, broken and accepted file of every code exercise, in de and zh (both
    languages' judges forked from one warm judge: torch is imported once)."""
    items = []
    for ex in CODE:
        extra = sorted((ex.folder / "broken").glob("*.py")) + sorted((ex.folder / "accepted").glob("*.py"))
        items.append((ex, [solution_file(ex), starter_file(ex), *extra]))
    with WarmJudge() as warm:
        return {lang: grade_trusted(items, lang, warm) for lang in LANGS}


def _shown(result: GradeResult, ex: Exercise, lang: str) -> str:
    """The grade as the terminal shows it, without the exercise's titles and ids (its content) and the
    output of the learner's code."""
    text = render(result, ex, lang, hints_seen=0)
    for title in (
        [c.title for c in result.checks if c.title] + [f"[{c.name}]" for c in result.checks] + [ex.id]
    ):
        text = text.replace(title, "")
    return "\n".join(line for line in text.splitlines() if not line.startswith("    | "))


@pytest.mark.slow  # its module fixture grades every course file in de and zh: 10 s
@pytest.mark.parametrize("lang", LANGS)
def test_grading_the_course_files_says_no_english(graded, lang):
    for ex in CODE:
        files = [solution_file(ex), starter_file(ex), *sorted((ex.folder / "broken").glob("*.py"))]
        for path in files + sorted((ex.folder / "accepted").glob("*.py")):
            result = graded[lang][path]
            assert result.status == (
                "pass" if path == solution_file(ex) or "accepted" in path.parts else "fail"
            )
            for check in result.checks:
                assert check.message, (path, check.name)
                assert not english(check.message, lang, ex), (lang, path.name, check.name, check.message)
            assert not english(_shown(result, ex, lang), lang, ex), (lang, path.name)


@pytest.mark.slow  # its module fixture grades every course file in de and zh: 10 s
def test_the_messages_are_in_the_learners_language(graded):
    """A fixed message, word for word from the catalogue: the check API's own words."""
    ex = COURSE.exercise("split-heads")
    for lang in LANGS:
        checks = {c.name: c.message for c in graded[lang][ex.folder / "broken/no_check.py"].checks}
        no_error = say("grade.check.no_error", lang)
        why = "split_heads(Tensor[1, 2, 10], 3)"
        assert checks["rejects_bad_split"] == say(
            "grade.check.expected_why", lang, why=why, expected="ValueError", got=no_error
        )
        passed = re.escape(say("grade.check.as_expected_call", lang, call="@"))
        assert re.fullmatch(
            passed.replace("@", r"merge_heads\(Tensor\[\d+, \d+, \d+, \d+\]\)"), checks["round_trip"]
        )


# --- hostile submissions through the CLI -------------------------------------------------------------

SPLIT = (ROOT / "tutor/lessons/01-multi-head/exercises/split-heads/solution.py").read_text(encoding="utf-8")
HOSTILE = {  # name: (source, status, the catalogue text its first non-passing check starts with)
    "loops": ("while True:\n    pass\n", "timeout", "grade.stop.timeout"),
    "segfaults": ("import faulthandler\nfaulthandler._sigsegv()\n", "error", "grade.stop.crashed_because"),
    "imports_nothing": ("import no_such_module_here\n", "error", "grade.stop.load"),
    "is_empty": ("", "fail", "grade.check.no_name"),
    "names_a_value": ("split_heads = 3\nmerge_heads = 4\n", "fail", "grade.check.a_value"),
    "exits": ("import sys\nsys.exit(3)\n", "error", "grade.stop.load"),
    "os_exits": ("import os\nos._exit(0)\n", "error", "grade.stop.exit_code"),
    "bad_syntax": ("def split_heads(x, h)\n    return x\n", "error", "grade.stop.load"),
    "floods": (
        "import sys\nsys.stdout.write('y' * (20 * 2**20))\nsys.stdout.flush()\n",
        "error",
        "grade.stop.output_flood",
    ),
    "too_much_memory": ("x = bytearray(10 * 2**30)\n", "error", "grade.stop.load"),
    "returns_a_list": (
        "def split_heads(x, h):\n    return [1.0]\n\n\ndef merge_heads(x):\n    return [1.0]\n",
        "fail",
        "grade.check.type_mismatch_returned",
    ),
    "prints_a_lot": ("print('z' * 9000)\n" + SPLIT, "pass", ""),
}


def _tutor(home: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PYTHON, "-m", "tutor", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=run_tutor_env(home),
        cwd=ROOT,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, dict]:
    """The batch JSON of the hostile files, in de and zh (one language per core)."""
    folder = tmp_path_factory.mktemp("hostile")
    for name, (source, _, _) in HOSTILE.items():
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    (folder / "not_utf8.py").write_bytes(b"\xff\xfe not utf-8")
    home = tmp_path_factory.mktemp("home")

    def run(lang: str) -> dict:
        out = _tutor(
            home,
            "grade",
            "split-heads",
            "--batch",
            str(folder),
            "--format",
            "json",
            "--timeout",
            "4",
            "--lang",
            lang,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(LANGS, pool.map(run, LANGS), strict=True))


def _first_failure(grade: dict) -> dict:
    return next((c for c in grade["checks"] if c["status"] != "pass"), {})


def _starts_like(message: str, key: str, lang: str) -> bool:
    """Whether `message` is the catalogue text `key` (its words before the first placeholder)."""
    head = re.split(r"\{", catalogue(lang)[key], maxsplit=1)[0]
    return message.startswith(head) or head in message


@pytest.mark.slow  # its module fixture grades the hostile batch in de and zh: 8 s
@pytest.mark.parametrize("lang", LANGS)
def test_hostile_submissions_get_their_reasons_in_the_learners_language(hostile, lang):
    ex = COURSE.exercise("split-heads")
    rows = {Path(r["file"]).stem: r["grade"] for r in hostile[lang]["results"]}
    assert set(rows) == set(HOSTILE) | {"not_utf8"}
    for name, (_, status, key) in HOSTILE.items():
        grade = rows[name]
        assert grade["status"] == status, (name, grade)
        first = _first_failure(grade)
        if key:
            assert _starts_like(first["message"], key, lang), (name, first["message"])
        for check in grade["checks"]:
            assert not english(check["message"], lang, ex), (lang, name, check["message"])
    assert _starts_like(_first_failure(rows["not_utf8"])["message"], "grade.file.not_utf8", lang)
    assert "SIGSEGV" in _first_failure(rows["segfaults"])["message"]
    assert "SyntaxError" in _first_failure(rows["bad_syntax"])["message"]
    for name in ("loops", "segfaults", "floods"):  # the checks that did not run say why, briefly
        skipped = [c["message"] for c in rows[name]["checks"] if c["status"] == "skipped"]
        assert skipped and all(_starts_like(m, "grade.stop.not_run_because", lang) for m in skipped), skipped
    truncated = rows["prints_a_lot"]["output"].splitlines()[-1]
    assert _starts_like(truncated, "grade.code.output_truncated", lang) and not english(truncated, lang)
    # the instructor's table, from the same grades: its labels (file names are the learner's, and the
    # messages, checked whole above, are cut to 60 characters there)
    quiet = [{**g, "checks": [{**c, "message": ""} for c in g["checks"]]} for g in rows.values()]
    table = batch.to_table(ex, [batch.BatchRow("-", "", GradeResult.model_validate(g)) for g in quiet], lang)
    table = re.sub(rf"\b(?:{'|'.join(c.id for c in ex.checks)})\b", " ", table)  # the first failure's id
    assert say("grade.batch.passed", lang, passed=1, n=len(rows)) in table and not english(table, lang, ex), (
        table
    )


@pytest.mark.parametrize("lang", LANGS)
def test_the_cli_grade_text_and_a_refused_file_are_in_the_learners_language(tmp_path, lang):
    ex = COURSE.exercise("split-heads")
    bad = tmp_path / "split_heads.py"
    bad.write_text("import no_such_module_here\n", encoding="utf-8")
    out = _tutor(tmp_path, "grade", "split-heads", str(bad), "--lang", lang)
    assert out.returncode == 2, out.stderr
    text = out.stdout
    for title in (
        [c.title[lang] for c in ex.checks] + [f"[{c.id}]" for c in ex.checks] + [ex.title[lang], ex.id]
    ):
        text = text.replace(title, "")
    assert say("grade.status.error", lang) in text and not english(text.replace(str(bad), ""), lang, ex), text
    fifo = tmp_path / "fifo.py"
    os.mkfifo(fifo)
    out = _tutor(tmp_path, "grade", "split-heads", str(fifo), "--lang", lang)
    assert out.returncode == 2 and say("grade.file.fifo", lang, path=str(fifo)) in out.stderr, out.stderr


@pytest.mark.parametrize("lang", LANGS)
def test_what_the_learners_code_did_is_told_in_the_learners_language(lang):
    """The worker describes an exception as data; the judge tells it (tutor.grading.box.worker.describe_error)."""
    at = [[3, "split_heads", "return x.view(2)"]]
    cases = [
        ({"type": "SystemExit", "kind": "exit", "code": "0"}, "grade.code.exit"),
        ({"type": "SyntaxError", "kind": "syntax", "line": 2, "text": "expected ':'"}, "grade.code.syntax"),
        (
            {"type": "MemoryError", "kind": "memory", "text": "MemoryError: ", "limit_mb": 3072, "at": at},
            "grade.code.at",
        ),
        (
            {"type": "OSError", "kind": "fsize", "text": "OSError: [Errno 27] File too large"},
            "grade.code.too_much_written",
        ),
        (
            {
                "type": "RuntimeError",
                "kind": "threads",
                "text": "RuntimeError: can't start new thread",
                "max_tasks": 64,
            },
            "grade.code.threads",
        ),
        (
            {"type": "RuntimeError", "text": "RuntimeError: view size is not compatible", "at": at * 3},
            "grade.code.at",
        ),
        ("not a dict", ""),
    ]
    for reply, key in cases:
        text = LearnerError.from_reply(reply, lang).text
        assert not key or _starts_like(text, key, lang) or key == "grade.code.at", (reply, text)
        assert not english(text, lang), (reply, text)
    english_text = LearnerError.from_reply(cases[5][0], "en").text
    assert english_text == (
        "RuntimeError: view size is not compatible (at line 3 in split_heads: return x.view(2); line 3 in "
        "split_heads: return x.view(2); line 3 in split_heads: return x.view(2))"
    )
