"""`python -m tutor lessons [--json]`: the lessons in order, with sections, experiments, quiz and exercises.

Lesson folders that fail to load are named on stderr after the list (the good ones are still
listed; `python -m tutor check` says what is wrong). Exit 0 when at least the listing worked.

JSON (stdout): a list, one object per lesson:
    {"id", "order", "title", "summary", "prerequisites", "folder",
     "sections": [{"id", "title", "experiments": [name, ...]}],
     "experiments": [name, ...], "quiz_count", "exercise_count", "exercises": [id, ...]}
Texts are in the chosen language (falling back to English).
"""

from __future__ import annotations

import json
import sys


def add_arguments(parser, t) -> None:
    parser.add_argument("--json", action="store_true", help=t("cli.opt.lessons.json"))


def lesson_summaries(course, lang: str) -> list[dict]:
    from tutor.i18n import pick

    out = []
    for lesson in course.lessons:
        sections = [
            {"id": s.id, "title": pick(s.title, lang), "experiments": [e.name for e in s.experiments]}
            for s in lesson.sections
        ]
        out.append(
            {
                "id": lesson.id,
                "order": lesson.order,
                "title": pick(lesson.title, lang),
                "summary": pick(lesson.summary, lang),
                "prerequisites": list(lesson.prerequisites),
                "folder": str(lesson.folder) if lesson.folder else None,
                "sections": sections,
                "experiments": [name for s in sections for name in s["experiments"]],
                "quiz_count": len(lesson.quiz),
                "exercise_count": len(lesson.exercises),
                "exercises": [ex.id for ex in lesson.exercises],
            }
        )
    return out


def run(args, ctx) -> int:
    from tutor.course import open_course
    from tutor.texts import say

    course = open_course(ctx.lessons_dir)
    summaries = lesson_summaries(course, ctx.lang)
    if args.json:
        print(json.dumps(summaries, ensure_ascii=False, indent=2))
    else:
        for item in summaries:
            print(f"{item['order']:>2}. {item['id']}: {item['title']}")
            for s in item["sections"]:
                runs = (
                    "  " + say("cli.lessons.experiments", ctx.lang, names=s["experiments"])
                    if s["experiments"]
                    else ""
                )
                print(f"      {s['id']}: {s['title']}{runs}")
            counts = say(
                "cli.lessons.counts", ctx.lang, n=item["quiz_count"], exercises=item["exercise_count"]
            )
            print(f"      {counts}" + (f" ({', '.join(item['exercises'])})" if item["exercises"] else ""))
        if not summaries:
            print(say("cli.lessons.none", ctx.lang))
    for folder in course.skipped:
        count = sum(1 for p in course.errors if folder in (p.file, *p.file.parents))
        print(say("cli.lessons.skipped", ctx.lang, folder=folder, n=count), file=sys.stderr)
    return 0
