"""What makes the first screen quick (the time itself: benchmarks/bench_startup.py):
the app's command line imports no subcommand, the catalogue and the parsed course are reused while
their files are unchanged, and home lists the lessons from the saved cards before the course loads."""

from __future__ import annotations

import pickle
import shutil
import subprocess
import sys
import threading
import types
from pathlib import Path

from textual.widgets import OptionList

from tests.conftest import PYTHON, ROOT, run_tutor_env
from tests.ui_helpers import make_app, until
from tutor import course as course_module
from tutor import parse_cache, texts
from tutor.content.index import COURSE_ENTRY, saved_cards
from tutor.settings import shipped_lessons_dir


def test_the_apps_command_line_imports_no_subcommand_and_bad_options_still_fail():
    probe = (
        "import sys\n"
        "from tutor.cli import parse\n"
        "args = parse(['--lang', 'de', '--home', 'h'])\n"
        "assert args.command is None and args.lang == 'de', args\n"
        "loaded = [m for m in sys.modules if m.startswith('tutor.commands.')]\n"
        "assert not loaded, loaded\n"
        "assert parse(['lessons']).command == 'lessons'\n"
    )
    subprocess.run([PYTHON, "-c", probe], check=True, cwd=ROOT, env=run_tutor_env())
    bad = subprocess.run(
        [PYTHON, "-m", "tutor", "--lang", "xx"], capture_output=True, text=True, cwd=ROOT, env=run_tutor_env()
    )
    assert bad.returncode == 2 and "python -m tutor: error: argument --lang" in bad.stderr


def test_the_catalogue_is_kept_and_read_again_when_its_toml_changes(tmp_path, monkeypatch):
    shutil.copy(texts.HERE / "en.toml", tmp_path / "en.toml")
    monkeypatch.setattr(texts, "HERE", tmp_path)
    texts.catalogue.cache_clear()
    try:
        assert texts.catalogue("en")["app.title"] == "Attention Tutor"
        assert parse_cache.entry(tmp_path, "en").is_file()
        texts.catalogue.cache_clear()
        parses = []
        real = parse_cache.Kept.save
        monkeypatch.setattr(
            parse_cache.Kept, "save", lambda self, value: parses.append(1) or real(self, value)
        )
        assert texts.catalogue("en")["app.title"] == "Attention Tutor"  # kept: not parsed again
        assert parses == []
        source = tmp_path / "en.toml"
        source.write_text(
            source.read_text(encoding="utf-8").replace('title = "Attention Tutor"', 'title = "Tutor!"'),
            encoding="utf-8",
        )
        texts.catalogue.cache_clear()
        assert texts.catalogue("en")["app.title"] == "Tutor!"
        assert parses == [1]
    finally:
        texts.catalogue.cache_clear()


def test_the_parsed_course_is_reused_until_a_lesson_file_changes(tmp_path, monkeypatch):
    lessons = tmp_path / "lessons"
    shutil.copytree(shipped_lessons_dir(), lessons, ignore=shutil.ignore_patterns("__pycache__"))
    parses = []
    real = course_module.open_course
    monkeypatch.setattr(course_module, "open_course", lambda d: parses.append(d) or real(d))

    first = course_module.open_course_cached(lessons)
    again = course_module.open_course_cached(lessons)
    assert len(parses) == 1
    assert [x.id for x in again.lessons] == [x.id for x in first.lessons]
    assert again.lessons[0].sections[0].body == first.lessons[0].sections[0].body
    cards = saved_cards(lessons)
    assert [c.id for c in cards.cards] == [x.id for x in first.lessons]
    assert cards.cards[1].questions == tuple(q.id for q in first.lessons[1].quiz)

    toml = lessons / "02-positions" / "lesson.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert saved_cards(lessons) is None  # stale: not shown
    course_module.open_course_cached(lessons)
    assert len(parses) == 2
    assert saved_cards(lessons) is not None


def test_the_kept_course_names_the_code_that_parsed_it_and_no_caller(tmp_path):
    lessons = tmp_path / "lessons"
    shutil.copytree(shipped_lessons_dir(), lessons, ignore=shutil.ignore_patterns("__pycache__"))
    course_module.open_course_cached(lessons)
    with parse_cache.entry(lessons, COURSE_ENTRY).open("rb") as fh:
        code = {str(Path(p).relative_to(ROOT)) for p in pickle.load(fh)["code"]}
    parser = {
        "tutor/content/loader.py",
        "tutor/content/schema.py",
        "tutor/course.py",
        "tutor/texts/__init__.py",
    }
    assert parser | {"tutor/errors.py", "tutor/experiments/registry.py"} <= code  # found, not listed by hand
    assert not {c for c in code if c.startswith(("tutor/ui/", "tutor/commands/"))}


def test_a_kept_parse_is_made_again_when_the_code_that_made_it_changes(tmp_path, monkeypatch):
    """Editing any module loaded when a parse was kept (here a stand-in parser module) gives it
    another key, as does editing an input."""
    parser = tmp_path / "tutor" / "fake_parser.py"
    parser.parent.mkdir()
    parser.write_text("RULE = 1\n", encoding="utf-8")
    monkeypatch.setattr(parse_cache, "CODE_ROOT", tmp_path)
    monkeypatch.setitem(sys.modules, "tutor.fake_parser", types.SimpleNamespace(__file__=str(parser)))
    source = tmp_path / "input.toml"
    source.write_text("a = 1\n", encoding="utf-8")

    def kept() -> parse_cache.Kept:
        return parse_cache.Kept(parse_cache.entry(tmp_path, "input"), [source])

    first = kept()
    assert first.load() is None
    first.save({"a": 1})
    assert kept().load() == {"a": 1}
    parser.write_text("RULE = 2\n", encoding="utf-8")  # same inputs, other code
    again = kept()
    assert again.load() is None
    again.save({"a": 2})
    assert kept().load() == {"a": 2}
    source.write_text("a = 3\n", encoding="utf-8")
    assert kept().load() is None


async def test_home_lists_the_lessons_from_the_saved_cards_before_the_course_loads(home, monkeypatch):
    app = make_app(home)  # the first start parses the course and saves the cards
    async with app.run_test(size=(80, 24)):
        await app.course_ready.wait()
    lessons = [x.id for x in app.tutor.lessons]

    release = threading.Event()
    import tutor.ui.app as app_module

    real_load = app_module.load
    monkeypatch.setattr(app_module, "load", lambda *a: release.wait(30) and real_load(*a))
    again = make_app(home)
    async with again.run_test(size=(80, 24)) as pilot:
        await until(
            pilot, lambda: again.screen.query("#lessons") and again.screen.query_one("#lessons").option_count
        )
        assert again.tutor.course is None  # still loading
        table = again.screen.query_one("#lessons", OptionList)
        assert [table.get_option_at_index(i).id for i in range(table.option_count)] == lessons
        release.set()
        await again.course_ready.wait()
