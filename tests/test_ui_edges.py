"""The app at its edges: home's next step and its columns across F5, search in the lesson
text from the palette, a language switch redrawing the quiz, and Continue after a restart. Real app
(Pilot at 80×24), real store in a temporary home."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from textual.widgets import OptionList, Static

from tests.ui_helpers import aim_over, make_app, palette_hits, plain, settle, until
from tutor.i18n import pick

SIZE = (80, 24)


async def at_section(app, lesson: str, section: str, timeout: float = 5.0) -> bool:
    """Wait until the lesson screen shows `lesson` at `section` (the aim sets it when it starts)."""
    import asyncio

    for _ in range(int(timeout / 0.05)):
        screen = app.screen
        if (
            getattr(screen, "lesson_id", None) == lesson
            and getattr(screen, "current_section", None) == section
        ):
            return True
        await asyncio.sleep(0.05)
    return False


def text_of(app, selector: str) -> str:
    return " ".join(plain(app.screen.query_one(selector, Static).content, SIZE[0]).split())


def columns(app) -> list[int]:
    """Where each progress cell of the first row starts (the title column's right edge and after)."""
    table = app.screen.query_one("#lessons", OptionList)
    row = str(table.get_option_at_index(0).prompt)
    return [cell_len(row[: row.index(cell)]) for cell in ("0%", "0/", "·")]  # in terminal cells


async def test_home_names_the_next_step_in_each_language_n_does_it_and_f5_keeps_the_columns(home):
    app = make_app(home, "en")
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await settle(app)
        lesson = app.tutor.lessons[0]
        first = lesson.sections[0]
        assert text_of(app, "#home-next") == (
            f"Next: read “{pick(first.title, 'en')}” in {pick(lesson.title, 'en')} · n opens it"
        )
        where = columns(app)
        await pilot.press("f5")  # de
        await settle(app)
        assert text_of(app, "#home-next") == (
            f"Als Nächstes: lies „{pick(first.title, 'de')}“ in {pick(lesson.title, 'de')} · n öffnet ihn"
        )
        await pilot.press("f5")  # zh
        await settle(app)
        assert (
            text_of(app, "#home-next")
            == f"下一步：读「{pick(lesson.title, 'zh')}」的「{pick(first.title, 'zh')}」 · 按 n 打开"
        )
        assert columns(app) == where  # the columns did not move
        await pilot.press("n")
        assert await at_section(app, lesson.id, first.id)


def words(text: str) -> str:
    return " ".join(text.replace("`", "").replace("*", "").split())


async def test_f5_redraws_the_question_its_feedback_and_a_refusal_in_the_new_language(home):
    from tests.ui_helpers import right_answer, wrong_answer
    from tutor.content.schema import SingleChoice
    from tutor.ui.widgets.quiz_panel import QuizPanel

    app = make_app(home, "en")
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("multi-head")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        while not isinstance(quiz.item.question, SingleChoice):  # on to a choice question
            await quiz.submit(right_answer(quiz.item.question))
            await quiz.submit("")
        q = quiz.item.question
        await quiz.submit("99")  # not a choice: refused
        await pilot.pause()
        refused = text_of(app, ".q-error")
        await pilot.press("f5")  # de
        await pilot.pause()
        assert text_of(app, ".q-error") == words(quiz._refused.in_lang("de")) != refused
        await quiz.submit(wrong_answer(q))
        await pilot.pause()
        await pilot.press("f5")  # zh
        await pilot.pause()
        prompt, feedback = text_of(app, ".q-prompt"), text_of(app, ".q-feedback")
        assert words(pick(q.prompt, "zh"))[:12] in prompt
        picked = next(c for c in q.choices if not c.correct)
        for said in (pick(q.explanation, "zh"), pick(picked.text, "zh")):
            assert words(said).replace(" ", "")[:12] in feedback.replace(" ", "")
        assert pick(q.explanation, "en")[:20] not in feedback


@pytest.mark.slow
async def test_f5_words_a_shown_grade_again_in_the_new_language_without_recording_it(home):
    from tests.ui_helpers import drawn_text, unlock_exercise
    from tutor.progress.store import Store

    app = make_app(home, "en")
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "alibi")
        await pilot.press("g")
        await settle(app, 0.3)
        english = screen.result
        assert english.status != "pass"
        await pilot.press("f5")  # de
        await settle(app, 0.3)
        german = screen.result
        assert german is not english and german.seed == english.seed
        shown = drawn_text(screen.query_one("#ex-checks", Static))
        failed = [(e, g) for e, g in zip(english.checks, german.checks, strict=True) if g.status != "pass"]
        assert failed and any(e.message != g.message for e, g in failed)
        assert all(" ".join(g.message.split()) in shown for _, g in failed)
        assert all(" ".join(e.message.split()) not in shown for e, g in failed if e.message != g.message)
        with Store(home) as store:
            assert len(store.submissions("alibi")) == 1  # graded once; worded twice


async def test_the_palette_finds_a_word_of_the_lesson_text_in_german_and_opens_its_section(home):
    from textual.command import CommandList

    from tutor.content.search import passages

    app = make_app(home, "de")
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        course = app.tutor.course
        # a word of one paragraph only, in no title: only the text can find it
        found = passages(course, "de")
        titles = " ".join(
            pick(x.title, "de") + " " + pick(s.title, "de") for x in course.lessons for s in x.sections
        )
        lesson = course.lessons[1]
        target = lesson.sections[2]
        mine = [p for p in found if p.lesson == lesson.id and p.section == target.id]
        word = max(
            (
                w
                for p in mine
                for w in p.text.split()
                if w.isalpha()
                and w.lower() not in titles.lower()
                and sum(w.lower() in q.folded for q in found) == 1
            ),
            key=len,
        )
        prompts = await palette_hits(pilot, app, word)
        hits = app.screen.query_one(CommandList)
        where = f"Im Text: {pick(lesson.title, 'de')} › {pick(target.title, 'de')}"
        index = next(i for i, p in enumerate(prompts) if word in p and where in p)
        assert len(prompts[index].splitlines()[0]) <= 62  # a snippet, not the paragraph
        hits.highlighted = index
        await pilot.press("enter")
        assert await at_section(app, lesson.id, target.id)


@pytest.mark.slow  # 6-10 s: over the default run's budget (docs/development.md); CI's slow run has it
async def test_continue_after_a_restart_comes_back_to_the_panel_of_e_and_the_line_scrolled_to(home):
    from textual.containers import VerticalScroll

    from tutor.progress.store import Store

    app = make_app(home, "en")
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_lesson("multi-head")
        await aim_over(app)
        await pilot.press("e", "e")  # to the second experiment
        await aim_over(app)
        panel = app.screen.chosen
        # the place is saved once the scrolling has stopped for REMEMBER_AFTER_S
        await until(
            pilot, lambda: (app.tutor.store.last_location() or {}).get("experiment") == panel.ref.name
        )
        with Store(home) as store:
            where = store.last_location()
        assert where["experiment"] == panel.ref.name and where["section"] == app.screen.current_section
        prose = app.screen.query_one("#prose", VerticalScroll)
        aimed = prose.scroll_y
        await pilot.press("down", "down", "down")  # and on by three lines: the app ends at once
        await until(pilot, lambda: prose.scroll_y == aimed + 3)
        scrolled = prose.scroll_y
    again = make_app(home, "en")
    async with again.run_test(size=SIZE) as pilot:
        await again.course_ready.wait()
        await pilot.press("c")
        await aim_over(again)
        assert again.screen.lesson_id == "multi-head"
        assert again.screen.query_one("#prose", VerticalScroll).scroll_y == scrolled


async def test_a_finished_quiz_sitting_says_what_next_and_n_does_it(home, tmp_path):
    from quiz_fixtures import write_lesson

    from tests.ui_helpers import right_answer
    from tutor.ui.widgets.quiz_panel import QuizPanel

    app = make_app(home, "de", lessons=write_lesson(tmp_path / "lessons"))
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("tiny-heads")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        while quiz.state != "done":
            await quiz.submit(right_answer(quiz.item.question))
            await quiz.submit("")
        await settle(app)
        lesson = app.tutor.lessons[0]
        first = lesson.sections[0]
        assert text_of(app, "#quiz-next") == (
            f"Als Nächstes: lies „{pick(first.title, 'de')}“ in {pick(lesson.title, 'de')} · n öffnet ihn"
        )
        await pilot.press("n")
        assert await at_section(app, lesson.id, first.id)


@pytest.mark.slow
async def test_a_passed_exercise_says_what_next(home):
    import shutil

    from tests.ui_helpers import unlock_exercise

    app = make_app(home, "en")
    async with app.run_test(size=SIZE) as pilot:
        await app.course_ready.wait()
        screen = await unlock_exercise(app, pilot, "alibi")
        lesson, ex = app.tutor.exercise("alibi")
        shutil.copyfile(ex.folder / "solution.py", screen.file)
        await pilot.press("g")
        await settle(app, 0.3)
        assert screen.result.status == "pass"
        first = lesson.sections[0]  # nothing read yet: the lesson the learner is in, from its start
        assert (
            text_of(app, "#ex-next")
            == f"Next: read “{pick(first.title, 'en')}” in {pick(lesson.title, 'en')} · n opens it"
        )
