"""What the command line tells a learner in their first week: each notice once, counts in words that
agree with them, the last place by its titles (issue 31)."""

from __future__ import annotations

import pytest

from tests.conftest import tutor_here
from tutor.progress.store import Store


@pytest.mark.parametrize("lang", ["en", "de", "zh"])
def test_a_corrupt_progress_file_is_reported_once_in_the_learners_language(home, lang):
    (home / "progress.sqlite3").write_bytes(b"not a database at all")
    done = tutor_here("progress", "--lang", lang, home=home)
    assert done.returncode == 0
    aside = next(home.glob("progress.sqlite3.corrupt-*")).name
    assert done.stderr.count(aside) == 1, done.stderr  # once: the notice, not also a log line in English
    if lang != "en":
        assert "could not be used" not in done.stderr


@pytest.mark.parametrize(
    ("place", "words"),
    [
        (
            {"screen": "lab", "lesson": "multi-head", "exercise": "split-heads"},
            "last place: the exercise “Split into heads and merge back” of “Multi-head attention”",
        ),
        ({"screen": "quiz", "lesson": "positions"}, "last place: the quiz of “Where is each character?"),
        ({"screen": "quiz"}, "last place: the review"),
        (
            {"screen": "lesson", "lesson": "rope-alibi", "section": "alibi", "offset": "3"},
            "last place: the lesson “RoPE, ALiBi and longer contexts”, section “",
        ),
    ],
)
def test_progress_names_the_last_place_by_its_titles(home, place, words):
    with Store(home) as store:
        store.set_last_location(place)
    out = " ".join(tutor_here("progress", home=home).stdout.split())
    assert words in out, out
    assert "screen=" not in out and "exercise=" not in out


def test_progress_names_the_last_place_in_chinese(home):
    with Store(home) as store:
        store.set_last_location({"screen": "lab", "lesson": "multi-head", "exercise": "split-heads"})
    out = "".join(tutor_here("progress", "--lang", "zh", home=home).stdout.split())
    assert "上次位置：「多头注意力」的练习「" in out, out


@pytest.mark.parametrize(
    ("lang", "one", "many"),
    [("en", "1 line,", "2 lines,"), ("de", "1 Zeile,", "2 Zeilen,"), ("zh", "1 行，", "2 行，")],
)
def test_counts_of_lines_are_said_in_the_form_their_number_takes(lang, one, many):
    from tutor.texts import Said, say

    def figures(lines: int) -> str:
        return say(
            "cli.generate.figures",
            lang,
            characters=Said("exp.write.characters", n=8),
            lines=Said("exp.write.lines", n=lines),
            regular=0,
            mean="0.13",
            seconds="0.5",
        )

    assert one in figures(1) and "1 lines" not in figures(1)
    assert many in figures(2)
    assert (
        say(
            "exp.write.written",
            lang,
            text="白日",
            characters=Said("exp.write.characters", n=1),
            lines=Said("exp.write.lines", n=1),
            regular_lines=0,
            mean_prob=0.1,
        ).count(one.rstrip(",，"))
        == 1
    )


@pytest.mark.parametrize(
    ("lang", "time"), [("en", "about 45 min"), ("de", "etwa 45 Min."), ("zh", "约 45 分钟")]
)
def test_exercise_list_gives_each_exercises_time_and_difficulty(home, lang, time):
    with Store(home) as store:
        store.record_submission("rope", sha256="1" * 64, status="fail", score=5, max_score=12)
    out = tutor_here("exercise", "list", "--lang", lang, home=home).stdout
    rope = next(line for line in out.splitlines() if line.startswith("rope "))
    assert time in rope and "●●●" in rope and "5/12" in rope
    import json

    rows = {r["id"]: r for r in json.loads(tutor_here("exercise", "list", "--json", home=home).stdout)}
    assert (rows["split-heads"]["minutes"], rows["split-heads"]["difficulty"]) == (15, 1)
    assert rows["rope"]["state"] == "started"
