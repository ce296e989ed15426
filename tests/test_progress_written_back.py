"""A home deleted while the tutor runs (issue 31): the next write puts the whole store back where it was,
from the connection that still holds it, and says so; nothing is lost on the next start."""

from __future__ import annotations

import shutil

import pytest

from tests.ui_helpers import make_app, right_answer, until
from tutor.progress.store import Store


def test_a_write_after_the_home_was_deleted_writes_the_store_back_whole(home):
    store = Store(home)
    store.mark_read("positions", "two-lines")
    shutil.rmtree(home)
    store.mark_read("positions", "mask-leaks-order")  # the next write
    assert (home / "progress.sqlite3").exists()
    [news] = store.db.take_news()
    assert news.key == "err.store.written_back" and store.db.take_news() == []
    store.mark_read("positions", "families")  # and the writes after it go to the file written back
    store.close()
    with Store(home) as again:
        assert {r.section for r in again.sections_read()} == {"two-lines", "mask-leaks-order", "families"}


def test_a_store_file_replaced_by_another_is_opened_not_overwritten(home, tmp_path):
    store = Store(home)
    store.mark_read("positions", "two-lines")
    other = tmp_path / "other"
    with Store(other) as elsewhere:
        elsewhere.mark_read("rope-alibi", "alibi")
    for suffix in ("", "-wal", "-shm"):
        (home / f"progress.sqlite3{suffix}").unlink(missing_ok=True)
    shutil.copy(other / "progress.sqlite3", home / "progress.sqlite3")
    store.mark_read("positions", "families")
    assert store.db.take_news() == []
    assert {r.section for r in store.sections_read()} == {"alibi", "families"}
    store.close()


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
async def test_the_app_says_it_wrote_the_progress_back_and_the_next_start_has_it(home, lang):
    from tutor.texts import say
    from tutor.ui.widgets.quiz_panel import QuizPanel

    app = make_app(home, lang)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await app.course_ready.wait()
        await app.open_quiz("multi-head")
        await pilot.pause()
        quiz = app.screen.query_one(QuizPanel)
        for n in range(2):
            if n == 1:
                shutil.rmtree(home)  # the home deleted while the app runs
            question = quiz.session.current.question
            if question.type == "open":
                await quiz.submit("own words")
            await quiz.submit(right_answer(question))
            await quiz.submit("")
            await pilot.pause()
        said = say("err.store.written_back", lang, home=str(home), path=str(home / "progress.sqlite3"))
        await until(pilot, lambda: any(n.message == said for n in app._notifications))
    with Store(home) as store:
        assert len(store.answers()) == 2  # both answers, the one before the deletion too
