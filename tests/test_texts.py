"""The one catalogue of the tutor's own words (tutor/texts/*.toml): complete in every language, every
key the code asks for exists, every key is asked for, and German and Chinese output holds no English."""

from __future__ import annotations

import ast
import io
import re
import string
from collections import Counter

import pytest
from conftest import ROOT
from rich.cells import cell_len
from rich.console import Console

from tests.source import code_files
from tutor.cli import COMMANDS, build_parser
from tutor.commands.exercise import ACTIONS
from tutor.experiments import render
from tutor.experiments.params import TrainCompareParams
from tutor.experiments.registry import get_registry
from tutor.experiments.result import Msg, Num, Result, Series, SeriesPanel, TablePanel, TextPanel
from tutor.experiments.runner import run_quick
from tutor.i18n import LANGS
from tutor.texts import PLURAL_FORMS, catalogue, number, say

# calls whose first argument is a catalogue key
LOOKUPS = {"say", "t", "_say", "has", "Msg", "AnswerError"}


def _fields(text: str) -> Counter:
    return Counter((f, spec, conv) for _, f, spec, conv in string.Formatter().parse(text) if f is not None)


CATEGORIES = {"zero", "one", "two", "few", "many", "other"}


def _by_count(table: dict[str, str]) -> dict[str, set[str]]:
    """The texts with forms by count (a table holding only plural forms, `due.one` and `due.other`),
    each with the forms it has."""
    below: dict[str, set[str]] = {}
    for key in table:
        base, _, last = key.rpartition(".")
        below.setdefault(base, set()).add(last)
    return {base: names for base, names in below.items() if "other" in names and names <= CATEGORIES}


def _text_key(key: str, by_count: dict[str, set[str]]) -> str:
    """`key` without its plural form: 'home.due.one' -> 'home.due'."""
    base = key.rpartition(".")[0]
    return base if base in by_count else key


def test_every_key_is_in_every_language_with_the_same_placeholders():
    en = catalogue("en")
    en_by_count = _by_count(en)
    assert "home.due" in en_by_count and "quiz.intro" in en_by_count
    for lang in LANGS:
        table = catalogue(lang)
        by_count = _by_count(table)
        texts, en_texts = {_text_key(k, by_count) for k in table}, {_text_key(k, en_by_count) for k in en}
        assert texts == en_texts, f"{lang}: missing {en_texts - texts}, extra {texts - en_texts}"
        assert set(by_count) == set(en_by_count), lang
        for base, forms in by_count.items():  # the forms the language tells apart, no more
            assert forms == set(PLURAL_FORMS[lang]), (lang, base, forms)
        for key, text in table.items():
            assert isinstance(text, str) and text, (lang, key)
            english = en[key] if _text_key(key, by_count) == key else en[f"{_text_key(key, by_count)}.other"]
            assert _fields(text) == _fields(english), (lang, key, text)


def test_a_count_picks_the_form_of_its_language():
    assert [say("quiz.new_waiting", "en", n=n) for n in (1, 10)] == [
        "1 new question to try",
        "10 new questions to try",
    ]
    assert [say("quiz.intro", "de", n=n).split(".")[0] for n in (1, 2, 0)] == [
        "1 Frage",
        "2 Fragen",
        "0 Fragen",
    ]
    assert say("cmd.quiz_help", "zh", n=1) == say("cmd.quiz_help", "zh", n=5).replace("5", "1") == "1 道题"
    assert say("grade.merge.missing_shards", "en", shards="2/3", given=2, total=3, n=1).startswith(
        "shard 2/3 "
    )
    # no learner text guesses a plural with "(s)", "(n)", "(en)" or "(e)" any more
    for lang in LANGS:
        guessed = [k for k, v in catalogue(lang).items() if re.search(r"[a-zäöü]\((?:s|n|en|e)\)", v)]
        assert not guessed, (lang, guessed)


def test_numbers_are_written_the_languages_way():
    assert [number(262656, lang) for lang in LANGS] == ["262,656", "262.656", "262,656"]
    assert [number(0.5586, lang) for lang in LANGS] == ["0.5586", "0,5586", "0.5586"]
    assert number(2.38e-6, "de", 2) == "2,4e-06" and number(0.0, "en") == "0"
    assert say("run.done", "de", s=1.25) == "fertig in 1,2 s"
    assert say("exp.params.same", "de", n=1050624, total=1050624).startswith("Jede Kopfzahl ergibt 1.050.624")
    assert Msg("exp.alibi.map", head=2, m=Num(0.25)).in_lang("zh") == "第 2 个头，m = 0.25"


def test_the_settled_terms_are_used_throughout():
    de, zh = catalogue("de"), catalogue("zh")
    assert not [k for k, v in de.items() if "Musterlösung" in v or "Punktwert" in v]
    hints = (
        "key.hint",
        "quiz.hint",
        "quiz.no_hint",
        "quiz.try_hint",
        "grade.hint",
        "ex.hints",
        "grade.more_hints",
    )
    assert all("Tipp" in de[k] for k in hints)  # a hint is a Tipp ("Hinweis:" is a note)
    said = {k: v for k, v in zh.items() if not k.startswith("typed.")}  # typed.*: what is taken, also 再来
    assert not [k for k, v in said.items() if "重做" in v or "再来" in v or "“" in v or "”" in v]
    assert "Musterantwort" in de["quiz.model_answer"] and "重来" in zh["quiz.rating.1"]


# --- the code and the catalogue agree (read from the source, nothing imported) ---


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "text" (and A, B = "x", "y"), so f"{TEXT}col.{c}" resolves to a key pattern."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            pairs = (
                zip(target.elts, value.elts, strict=False)
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                else [(target, value)]
            )
            for name, const in pairs:
                if (
                    isinstance(name, ast.Name)
                    and isinstance(const, ast.Constant)
                    and isinstance(const.value, str)
                ):
                    found[name.id] = const.value
    return found


def _pattern(node: ast.AST, consts: dict[str, str]) -> str | None:
    """A key as a glob ('exp.heads.step.*'), or None where it is not written in the source."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.JoinedStr):
        out = ""
        for part in node.values:
            if isinstance(part, ast.Constant):
                out += str(part.value)
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name):
                out += consts.get(part.value.id, "*")
            else:
                out += "*"
        return out
    return None


def _keys_in_code() -> tuple[list[tuple[str, str]], set[str], list[str]]:
    """(keys asked for by lookup calls with where, every string constant, every f-string key pattern)."""
    asked: list[tuple[str, str]] = []
    constants: set[str] = set()
    patterns: list[str] = []
    for file in code_files(model=False):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        consts = _constants(tree)
        where = str(file.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                constants.add(node.value)
            if isinstance(node, ast.JoinedStr) and (p := _pattern(node, consts)) and "." in p.split("*")[0]:
                patterns.append(p)
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            first = node.args[0]
            options = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
            if name in LOOKUPS:
                asked += [(p, f"{where}:{node.lineno}") for o in options if (p := _pattern(o, consts))]
            elif name == "columns" and (prefix := _pattern(first, consts)):
                for arg in node.args[1:]:
                    if isinstance(arg, ast.Constant) and not arg.value.startswith("="):
                        asked.append((prefix + arg.value, f"{where}:{node.lineno}"))
                        constants.add(prefix + arg.value)
    return asked, constants, patterns


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(".+".join(re.escape(part) for part in pattern.split("*")))


def test_every_key_the_code_asks_for_exists():
    keys = set(catalogue("en"))
    asked, _, _ = _keys_in_code()
    assert len(asked) > 150
    missing = [
        f"{where}: {key}"
        for key, where in asked
        if key.strip("*")
        and not (
            key in keys or f"{key}.other" in keys  # a text with forms by count
            if "*" not in key
            else any(_glob(key).fullmatch(k) for k in keys)
        )
    ]
    assert not missing, "\n".join(missing)


def test_every_key_in_the_catalogue_is_used():
    """A text no code asks for is dead; metric and term keys are checked against live runs below."""
    _, constants, patterns = _keys_in_code()
    globs = [_glob(p) for p in patterns if not p.startswith("*")]
    by_count = _by_count(catalogue("en"))
    unused = [
        key
        for key in catalogue("en")
        if not key.startswith(("metric.", "term."))
        and _text_key(key, by_count) not in constants
        and not any(g.fullmatch(_text_key(key, by_count)) for g in globs)
    ]
    assert not unused, unused


# --- no English sentence written into the code reaches a learner ---

# Where a text goes to a learner: an error (TutorError, CheckFailure and their subclasses, found in
# the source), a toast or a widget of the app, a command's output, a lesson file's problem
# (content.problems' error/warning, the second argument), a Said, the app's load error.
SINKS = {"notify", "Static", "Label", "Button", "Text", "print", "update", "_status", "Said", "Loaded"}
PROBLEMS = {"error", "warning"}  # called by name only: `log.error(...)` is a log
SINK_KEYWORDS = {"title", "message", "error", "label", "placeholder", "tooltip", "detail"}
_PROSE = re.compile(r"[A-Za-z]{2,}")

# Texts that stay in code, each with the reason: (file, a part of the text; "" for all of the file's).
NOT_FOR_LEARNERS = {
    # a programming error of the tutor's own code (a caller passing a long experiment to run_quick)
    ("tutor/experiments/runner.py", "trains models; run it with run_in_child"),
    # the terminal's own control sequence, not words
    ("tutor/commands/grade.py", "\r\x1b[K"),
    # the lesson author's checks, run by `python -m tutor check` (and the tests), never by the app:
    # exercise folders and their reference solutions, their starters and solutions in each language,
    # the glossary
    ("tutor/grading/authoring.py", ""),
    ("tutor/content/variants.py", ""),
    ("tutor/content/glossary.py", ""),
    # a checks.py asking for a message its exercise.toml lacks: the author's bug, which
    # `check --exercises` reports before a learner can meet it
    ("tutor/grading/judging/voice.py", "has no [messages] entry"),
}


def _error_classes(trees: dict[str, ast.Module]) -> set[str]:
    """TutorError, CheckFailure and every class of tutor/ deriving from them."""
    bases = {
        node.name: {getattr(b, "id", None) or getattr(b, "attr", "") for b in node.bases}
        for tree in trees.values()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    }
    found = {"TutorError", "CheckFailure"}
    while new := {name for name, of in bases.items() if of & found} - found:
        found |= new
    return found


def _english(node: ast.AST, keys: set[str]) -> str | None:
    """The words of a text literal (a string that is not a catalogue key, an f-string, or one
    joined with `+` or chosen with `if`), or None when `node` holds none."""
    if isinstance(node, ast.BinOp):
        return _english(node.left, keys) or _english(node.right, keys)
    if isinstance(node, ast.IfExp):
        return _english(node.body, keys) or _english(node.orelse, keys)
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value not in keys:
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(str(part.value) for part in node.values if isinstance(part, ast.Constant))
    else:
        return None
    return text if _PROSE.search(text) else None


def _english_for_learners() -> list[str]:
    """Every text literal of tutor/ that goes to a learner, as `file:line: text`."""
    trees = {
        str(file.relative_to(ROOT)): ast.parse(file.read_text(encoding="utf-8"))
        for file in code_files(model=False)
    }
    keys = set(catalogue("en"))
    keys |= {k.removesuffix(".other") for k in keys if k.endswith(".other")}  # a text with forms by count
    errors = _error_classes(trees)
    found = []
    for where, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in errors:
                texts = [*node.args, *(k.value for k in node.keywords)]
            elif name in SINKS:
                texts = [*node.args[:1], *(k.value for k in node.keywords if k.arg in SINK_KEYWORDS)]
            elif name in PROBLEMS and isinstance(node.func, ast.Name):
                texts = node.args[1:2] + [k.value for k in node.keywords if k.arg == "message"]
            else:
                continue
            for text in filter(None, (_english(t, keys) for t in texts)):
                if not any(where == file and part in text for file, part in NOT_FOR_LEARNERS):
                    found.append(f"{where}:{node.lineno}: {text!r}")
    return found


def test_no_english_sentence_in_the_code_reaches_a_learner():
    """What the tutor says comes from the catalogue: an error carries a key and values
    (`TutorError("err.…", path=…)`), a widget or a toast shows `say(…)`; an f-string with English
    words in it, written where a learner will read it, is found here with its file and line."""
    found = _english_for_learners()
    assert not found, "\n".join(found)


# --- experiment output in German and Chinese holds no English ---

# Words the output may hold besides its language's own: names, and for Chinese the terms its lessons
# keep in English. German is written in the same letters as English: a German word must come from the
# German catalogue (so an English sentence written into the code is caught, the words of the German
# texts are not).
# proj: the output projection's name in the model; Landlock: a layer of the grading box
NAMES = {"RoPE", "ALiBi", "YaRN", "PyTorch", "proj", "Landlock", "Anki", "FSRS", "fsrs"}
ZH_TERMS = {"softmax", "logit", "query"}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-zÄÖÜäöüß]+", text))


def _english_left(text: str, lang: str, experiment: str) -> list[str]:
    """Catalogue English in `text`, and words of 4+ letters that are neither the language's own,
    names nor code."""
    left = []
    for key, english in catalogue("en").items():
        if english == catalogue(lang).get(key):
            continue  # the same in both languages: a name or a formula
        for chunk in re.split(r"\{[^}]*\}", english):
            english_words = set(re.findall(r"[A-Za-z]{4,}", chunk)) - NAMES
            if len(chunk.strip()) >= 8 and english_words and chunk.strip() in text:
                left.append(f"{key}: {chunk.strip()!r}")
    text = text.replace(experiment, "")
    # code stays code: a command, a name called or reached through a dot (Linear(…), nn.MultiheadAttention)
    text = re.sub(r"python -m tutor[\w .-]*|[A-Za-z_][\w.]*\(|\.\w+", " ", text)
    own = (
        _words(" ".join(catalogue("de").values()).replace("\u00ad", "")) if lang == "de" else ZH_TERMS
    )  # soft hyphens
    for word in re.findall(r"\w+", text):  # whole words: n_embd, float32 and Köpfe are not English words
        if re.fullmatch(r"[A-Za-z]{4,}", word) and word not in own | NAMES:
            left.append(word)
    return left


def _shown(result: Result, lang: str) -> str:
    console = Console(width=200, record=True, file=io.StringIO())  # wide: no word is cut
    console.print(render.render_result(result, lang))
    return console.export_text()


def _train_compare(vary: str) -> Result:
    """train-compare's Result from two settings of two seeds each, all overfitting (no training needed)."""
    from tutor.experiments.course.training import compare_runs, run_label

    p = TrainCompareParams(vary=vary, heads=[1, 4], pos=["learned", "none"], steps=100, seeds=2)
    done = [
        {
            "label": run_label(h, pos, vary).model_dump(),
            "slug": slug,
            "seed": seed,
            "val_loss": loss + k / 50,
            "params": 1000,
            "seconds": 12.5,
            "curve": [[50, 3.0, loss - 0.1], [100, 2.9, loss]],
            "stored": h == 1,
        }
        for (slug, h, pos), loss in zip(p.runs(), (2.5, 2.4), strict=True)
        for k, seed in enumerate((p.seed, p.seed + 1))
    ]
    return compare_runs(p, done)


def _context_finetune() -> Result:
    """context-finetune's Result from two finished fine-tunes (no training needed)."""
    from tutor.experiments.course.finetune import finetune_result
    from tutor.experiments.params import ContextFinetuneParams

    p = ContextFinetuneParams(methods=["pi", "yarn"])
    done = [
        {
            "method": m,
            "before": {32: 5.4, 128: 6.9},
            "after": {32: 5.5, 128: 5.3 - k / 10},
            "entropy_before": 2.9,
            "entropy_after": 2.4,
            "steps": [1.0, 2.0],
            "losses": [5.6, 5.4],
            "seconds": 30.0,
        }
        for k, m in enumerate(p.methods)
    ]
    return finetune_result(p, 32, [32, 128], done, 70.0)


EXPERIMENTS = [name for name, spec in get_registry().items() if not spec.long]


@pytest.fixture(scope="module")
def results() -> dict[str, Result]:
    out = {name: run_quick(name) for name in EXPERIMENTS}
    out["alibi-6"] = run_quick("alibi", {"n_head": 12, "T": 4})  # the other rule, and "more heads"
    out["train-compare"] = _train_compare("heads")
    out["train-compare-pos"] = _train_compare("pos")
    out["context-finetune"] = _context_finetune()
    return out


@pytest.mark.parametrize("lang", ["de", "zh"])
def test_experiment_output_in_german_and_chinese_holds_no_english(results, lang):
    for name, result in results.items():
        text = _shown(result, lang)
        assert not _english_left(text, lang, result.experiment), (name, text)
        english = _shown(result, "en")
        assert text != english and "Headline numbers" in english, name


def test_every_headline_number_has_a_label_and_every_label_a_metric(results):
    labels = [key for key in catalogue("en") if key.startswith("metric.")]
    used = set()
    for result in results.values():
        for name in result.metrics:
            label = render.metric_label(result.experiment, name)
            assert isinstance(label, Msg), (result.experiment, name)
            used.add(label.key)
    assert set(labels) == used
    assert (
        render.metric_label("permutation", "gap_L1_nopos").in_lang("en")
        == "logit gap, 1-layer model, no positions"
    )
    assert (
        render.metric_label("context-scaling", "loss_4x_yarn").in_lang("de")
        == "Verlust bei 4-facher Länge, YaRN"
    )


def test_the_cli_prints_experiments_in_the_learners_language(tmp_path):
    from conftest import tutor_here  # in this process: test_experiments_cli runs `experiment` as a real one

    for lang, expect in (("de", "Steigung m"), ("zh", "斜率 m")):
        proc = tutor_here("experiment", "alibi", "--set", "n_head=4", "--lang", lang, home=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert expect in proc.stdout and not _english_left(proc.stdout, lang, "alibi"), proc.stdout


def test_the_prose_names_columns_that_exist(results):
    """The lessons point at a column by its name: it must be on screen under that name."""
    shown = {lang: results["rope-relative"].shown(lang).panels[0].columns for lang in LANGS}
    assert any(c.startswith("spread") for c in shown["en"])
    assert any(c.startswith("Streuung") for c in shown["de"])
    assert any(c.startswith("波动") for c in shown["zh"])
    prose = {
        lang: (ROOT / "tutor" / "lessons" / "03-rope-alibi" / f"{lang}.md").read_text(encoding="utf-8")
        for lang in LANGS
    }
    assert (
        "spread column" in prose["en"]
        and "Spalte mit der Streuung" in prose["de"]
        and "「波动」那一列" in prose["zh"]
    )


def test_a_result_is_shown_again_in_another_language_without_running_again():
    result = Result(
        experiment="x",
        params={},
        metrics={},
        panels=[
            TablePanel(title=Msg("exp.shuffle.diff"), columns=[Msg("exp.col.layer")], rows=[[Num(0.5)]]),
            SeriesPanel(title="s", series=[Series(name=Msg("exp.dk-scaling.unscaled"), x=[1.0], y=[2.0])]),
            TextPanel(title=Msg("exp.reading"), text=Msg("exp.shuffle.note")),
        ],
    )
    again = Result.model_validate_json(result.model_dump_json())  # as the app's child process sends it
    assert again == result
    de = again.shown("de")
    assert de.panels[0].title.startswith("Größte Abweichung") and de.panels[0].rows == [["0,5"]]
    assert de.panels[1].series[0].name == "unskaliert" and de.panels[2].title == "So liest du die Tabelle"
    assert set(de.model_dump(mode="json")) == {"experiment", "params", "metrics", "panels", "duration_s"}


@pytest.mark.parametrize("lang", ["de", "zh"])
def test_grade_output_labels_are_in_the_learners_language(lang):
    """Everything the grader adds around the checks' own messages: verdict, points, first failure,
    hint, not run, output, isolation, a grade not saved, the next hint to ask for."""
    from tutor.content.loader import load_course
    from tutor.grading.result import CheckResult, GradeResult
    from tutor.grading.text import render

    ex = next(
        e
        for lesson in load_course(ROOT / "tutor" / "lessons").lessons
        for e in lesson.exercises
        if e.id == "rope"
    )
    decls = ex.checks[:3]
    checks = [
        CheckResult(name=decls[0].id, status="pass", message="", hint="", points=1, max_points=1),
        CheckResult(name=decls[1].id, status="fail", message="…", hint="…", points=0, max_points=1),
        CheckResult(name=decls[2].id, status="skipped", message="not run: could not load", hint="", points=0),
    ]
    result = GradeResult(
        exercise=ex.id,
        status="fail",
        score=1,
        max_score=3,
        checks=checks,
        duration_s=1.25,
        output="42",
        isolation={"level": "strong", "layers": ["landlock ABI 7 (writes only in scratch)"]},
        saved=False,
    )
    for seen in (None, 0):
        text = render(result, ex, lang, hints_seen=seen)
        for title in [c.title or c.name for c in checks] + [ex.id]:
            text = text.replace(title, "")
        assert not _english_left(text, lang, "rope"), text
    assert say("grade.not_run", lang) in text and say("grade.box.strong", lang) in text


# --- the command line's help and its own errors ---

# code in the help: options, choices, metavars, file names, and the commands and actions one types
_NOT_PROSE = re.compile(
    r"--?[\w-]+|\{[^}]*\}|\b[A-Z][A-Z_]+\b|\S+\.(?:pt|py)\b|python -m tutor|\b(?:"
    + "|".join((*COMMANDS, *ACTIONS))
    + r")\b"
)
HELP_TERMS = {
    "Ctrl",
    "Transformer",
    "dropout",
    "torch",
    "cuda",
    "learned",
    "chinese",
    "Canvas",
    "canvas",
    "Moodle",
    "moodle",
    "Gradescope",
    "gradescope",
    "exercism",
    "LMS",
    "student",  # the columns of an overrides CSV
    "check",
    "points",
    "reason",
    "total",
    "file",  # and of a manifest CSV
    "submitted",
}  # names and values


@pytest.mark.parametrize("lang", ["de", "zh"])
@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_the_command_lines_help_is_in_the_learners_language(command, lang, capsys, monkeypatch):
    """`python -m tutor [COMMAND] --help`: headings, usage and every option's help in `lang`, each
    line within 80 columns (a Chinese character takes two)."""
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as done:
        build_parser(lang).parse_args([*([command] if command else []), "--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith(say("cli.usage", lang)) and say("cli.heading.options", lang) + ":" in shown
    assert max(cell_len(line) for line in shown.splitlines()) <= 80, shown
    prose = _NOT_PROSE.sub(" ", shown)
    assert not set(_english_left(prose, lang, "")) - HELP_TERMS, shown


def test_the_command_lines_errors_are_in_the_learners_language(tmp_path):
    import subprocess

    from conftest import PYTHON, run_tutor_env

    def tutor(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [PYTHON, "-m", "tutor", *args],
            env=run_tutor_env(tmp_path),
            cwd=ROOT,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
        )

    own = tutor("quiz", "--review", "--new", "-1", "--lang", "zh")  # the command's own check
    assert (own.returncode, own.stderr) == (2, "错误：--new 必须是 0 或更大的数\n")
    parsed = tutor("train", "--heads", "x", "--lang", "de")  # argparse's: its reason stays English
    assert parsed.returncode == 2
    assert parsed.stderr.startswith("Aufruf: python -m tutor train")
    assert "python -m tutor train: Fehler: argument --heads: invalid int value: 'x'" in parsed.stderr
    # errors raised deep inside (the registry, the lesson loader) carry a key, worded at the edge
    unknown = tutor("experiment", "bogus", "--lang", "de")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.startswith("Fehler: unbekanntes Experiment „bogus“; gültige Namen: heads, params, ")
    missing = tutor("lessons", "--lang", "zh", "--lessons", str(tmp_path / "nowhere"))
    assert (missing.returncode, missing.stderr) == (2, f"错误：找不到课程文件夹：{tmp_path / 'nowhere'}\n")
    bad = tutor("experiment", "alibi", "--set", "n_head=0", "--lang", "zh")  # each problem on a line
    assert bad.returncode == 2
    assert (
        bad.stderr
        == "错误：实验「alibi」的参数有误：\n  n_head：不允许（输入的是 0）；允许：整数 1..64，默认 8\n"
    )
