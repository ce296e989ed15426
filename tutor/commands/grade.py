"""`python -m tutor grade ID [FILE] [--json] [--watch] [--hint [N]] [--seed S]`, `grade ID --batch DIR [--shard K/N]
[--max-files N …] [--export DIR [--roster CSV]]` and `grade --merge REPORT … [--export DIR [--roster CSV]]`.

Exit 0 pass, 1 fail or timeout, 2 error (the file could not be graded, or bad usage).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from contextlib import closing, nullcontext
from pathlib import Path

from tutor.errors import TutorError
from tutor.settings import (
    GRADE_MAX_SOURCE_BYTES,
    INTAKE_MAX_DEPTH,
    INTAKE_MAX_FILES,
    INTAKE_MAX_MEMBERS,
    INTAKE_MAX_RATIO,
    INTAKE_MAX_ZIP_BYTES,
)
from tutor.texts import say


def add_arguments(parser, t) -> None:
    parser.add_argument("id", nargs="?", metavar="ID", help=t("cli.opt.exercise.id"))
    parser.add_argument("file", nargs="?", type=Path, metavar="FILE", help=t("cli.opt.grade.file"))
    parser.add_argument("--json", action="store_true", help=t("cli.opt.grade.json"))
    parser.add_argument("--watch", action="store_true", help=t("cli.opt.grade.watch"))
    parser.add_argument(
        "--hint",
        nargs="?",
        type=int,
        const=0,
        default=None,
        metavar="N",
        help=t("cli.opt.grade.hint"),
    )
    parser.add_argument("--batch", type=Path, metavar="DIR", help=t("cli.opt.grade.batch"))
    parser.add_argument(
        "--format", choices=("table", "json", "csv"), default="table", help=t("cli.opt.grade.format")
    )
    parser.add_argument("--timeout", type=float, metavar="S", help=t("cli.opt.grade.timeout"))
    parser.add_argument("--shard", metavar="K/N", help=t("cli.opt.grade.shard"))
    parser.add_argument("--merge", nargs="+", type=Path, metavar="REPORT", help=t("cli.opt.grade.merge"))
    parser.add_argument("--export", type=Path, metavar="DIR", help=t("cli.opt.grade.export"))
    parser.add_argument("--roster", type=Path, metavar="CSV", help=t("cli.opt.grade.roster"))
    parser.add_argument("--force", action="store_true", help=t("cli.opt.grade.force"))
    parser.add_argument("--pick", choices=("latest", "best"), default="latest", help=t("cli.opt.grade.pick"))
    parser.add_argument("--points", type=float, metavar="N", help=t("cli.opt.grade.points"))
    parser.add_argument("--assignment", metavar="NAME", help=t("cli.opt.grade.assignment"))
    parser.add_argument("--overrides", type=Path, metavar="CSV", help=t("cli.opt.grade.overrides"))
    parser.add_argument("--gradescope", type=Path, metavar="JSON", help=t("cli.opt.grade.gradescope"))
    parser.add_argument("--deadline", metavar="TIME", help=t("cli.opt.grade.deadline"))
    parser.add_argument("--late-per-day", type=float, metavar="PCT", help=t("cli.opt.grade.late_per_day"))
    parser.add_argument("--cutoff", metavar="TIME", help=t("cli.opt.grade.cutoff"))
    parser.add_argument("--manifest", type=Path, metavar="CSV", help=t("cli.opt.grade.manifest"))
    parser.add_argument("--similar", action="store_true", help=t("cli.opt.grade.similar"))
    parser.add_argument(
        "--similar-min", type=float, default=0.5, metavar="F", help=t("cli.opt.grade.similar_min")
    )
    parser.add_argument("--jobs", type=int, metavar="N", help=t("cli.opt.grade.jobs"))
    parser.add_argument("--seed", metavar="S", help=t("cli.opt.grade.seed"))
    for flag, metavar, kind, _, _, default in _BOUNDS:  # what a batch reads at most (collect.Bounds)
        key = flag.removeprefix("--").replace("-", "_")
        parser.add_argument(
            flag, type=kind, metavar=metavar, help=t(f"cli.opt.grade.{key}").replace("{n}", default)
        )


# --flag, its metavar and type, the collect.Bounds field it sets, that field's unit, the default shown
_BOUNDS = (
    ("--max-files", "N", int, "files", 1, f"{INTAKE_MAX_FILES:,}"),
    ("--max-members", "N", int, "members", 1, f"{INTAKE_MAX_MEMBERS:,}"),
    ("--max-file-kb", "KB", int, "file_bytes", 2**10, f"{GRADE_MAX_SOURCE_BYTES // 2**10:,}"),
    ("--max-zip-mb", "MB", int, "zip_bytes", 2**20, f"{INTAKE_MAX_ZIP_BYTES // 2**20:,}"),
    ("--max-ratio", "R", float, "ratio", 1, f"{INTAKE_MAX_RATIO:,}"),
    ("--max-depth", "N", int, "depth", 1, f"{INTAKE_MAX_DEPTH:,}"),
)
# the least and the most each may be: a file larger than the grader takes is never read
_BOUND_RANGE = {"file_bytes": (1, GRADE_MAX_SOURCE_BYTES // 2**10), "ratio": (1, 10**6), "depth": (0, 64)}


def _bounds_option(args, lang: str) -> None:
    """--max-files and the other bounds of a batch's intake, checked before anything is read: args.bounds
    becomes a collect.Bounds (the defaults where none is given)."""
    given = {
        field: (flag, getattr(args, flag[2:].replace("-", "_")), unit)
        for flag, _, _, field, unit, _ in _BOUNDS
    }
    values = {}
    for field, (flag, value, unit) in given.items():
        if value is None:
            continue
        if args.batch is None:
            raise TutorError(say("grade.usage.bound_needs", lang, option=flag))
        least, most = _BOUND_RANGE.get(field, (1, 10**7))
        if not least <= value <= most:  # NaN too
            raise TutorError(
                say("grade.usage.bound", lang, option=flag, least=least, most=most, got=f"{value:g}")
            )
        values[field] = int(value * unit) if field != "ratio" else value
    from tutor.grading.instructor.collect import Bounds

    args.bounds = Bounds(**values)


def run(args, ctx) -> int:
    _seed_option(args, ctx.lang)
    _bounds_option(args, ctx.lang)
    if args.merge is not None:
        return _merge(args, ctx)
    from tutor.grading.judges import EarlyJudge  # light: the judge starts before the grading code loads

    one_grade = args.batch is None and args.hint is None and not args.watch
    # it imports torch while this process imports the grading code and loads the course
    with EarlyJudge() if one_grade else nullcontext() as early:
        _instructor_options(args, ctx.lang)
        from tutor.course import open_course

        ex = open_course(ctx.lessons_dir).exercise(args.id)
        limits = _limits(args.timeout, ctx.lang)
        _overrides_option(ex, args, ctx.lang)
        if args.batch is not None:
            return _batch(ex, args, ctx, limits)
        return _grade_learner_file(ex, args, ctx, limits, early)


def _seed_option(args, lang: str) -> None:
    """--seed S: a grade's seed as its report shows it, for one file (a grade replayed exactly)."""
    if args.seed is None:
        return
    from tutor.grading.kit import SEED

    if args.batch is not None or args.merge is not None:
        raise TutorError(say("grade.usage.seed_one_file", lang))
    if not SEED.fullmatch(args.seed):
        raise TutorError(say("grade.usage.seed", lang, got=repr(args.seed)[:40]))


def _limits(timeout: float | None, lang: str):
    """--timeout S as the grade's limits (None: the exercise's own)."""
    if timeout is None:
        return None
    if not 0 < timeout <= 600:
        raise TutorError(say("grade.usage.timeout", lang, got=f"{timeout:g}"))
    from tutor.grading.runner import Limits

    return Limits(timeout_s=timeout)


def _grade_learner_file(ex, args, ctx, limits, early) -> int:
    """`grade ID [FILE] [--hint [N]] [--watch]`: the general hint first if asked for, then the grade,
    recorded; with --watch again after every save. The exit code is the last finished grade's."""
    from tutor.grading.workspace import workspace_file
    from tutor.progress.store import Store

    path = args.file or workspace_file(ctx.home, ex)
    if args.file is None and not path.exists():
        raise TutorError(say("grade.usage.no_file", ctx.lang, path=str(path), id=ex.id))
    with Store(ctx.home) as store:
        if args.hint is not None:
            _print_hint(ex, args, ctx, store)
        last = {"code": 2}  # the exit code of the last grade that finished (kept through Ctrl-C)
        if args.watch:
            _watch(ex, path, ctx, args, store, limits, last)
        else:
            _grade_and_print(ex, path, ctx, args, store, limits, last, early)
        return last["code"]


def _print_hint(ex, args, ctx, store) -> None:
    """--hint [N]: general hint N (or the next unseen one), recorded; on stderr under --json."""
    from tutor.grading.hints import reveal_hint

    number, text = reveal_hint(store, ex, args.hint or None, ctx.lang)
    line = say("grade.hint_line", ctx.lang, n=number, total=len(ex.hints), text=text)
    print(line + "\n", file=sys.stderr if args.json else sys.stdout)


def _watch(ex, path, ctx, args, store, limits, last: dict) -> None:
    """--watch: grade now and after every save, until Ctrl-C. One warm judge for every grade; the
    watcher starts before the first grade, so a save during it is seen."""
    from tutor.grading.judges import WarmJudge
    from tutor.grading.watch import SaveWatcher, watch_file

    with WarmJudge() as warm, closing(SaveWatcher(path)) as watcher:
        try:
            _grade_and_print(ex, path, ctx, args, store, limits, last, warm)
            print(say("grade.watching", ctx.lang, path=path), file=sys.stderr)

            def again() -> None:
                print("\n" + "─" * 60, file=sys.stderr)
                _grade_and_print(ex, path, ctx, args, store, limits, last, warm)

            watch_file(watcher, again)
        except KeyboardInterrupt:
            print("\n" + say("grade.stopped_watching", ctx.lang), file=sys.stderr)


def _grade_and_print(ex, path, ctx, args, store, limits, last: dict, warm=None) -> None:
    from tutor.grading.submissions import grade_file

    progress = _Progress(ex, ctx.lang) if not args.json and sys.stderr.isatty() else None
    result = grade_file(
        ex, path, lang=ctx.lang, store=store, limits=limits, on_event=progress, warm=warm, seed=args.seed
    )
    if progress is not None:
        progress.clear()
    last["code"] = result.exit_code  # before printing: a Ctrl-C while printing keeps it
    _print(result, ex, ctx.lang, args.json, len({h.hint for h in store.hint_reveals(ex.id)}))


class _Progress:
    """One status line on a terminal while the checks run: `grading rope: 3/8 ✓✓✗`."""

    def __init__(self, ex, lang: str):
        self.ex, self.lang, self.marks = ex, lang, ""
        self._show(say("grade.loading", lang))

    def __call__(self, event: dict) -> None:
        if event.get("event") == "check":
            self.marks += {"pass": "✓", "fail": "✗"}.get(event.get("status", ""), "!")
            self._show(f"{len(self.marks)}/{len(self.ex.checks)} {self.marks}")

    def _show(self, text: str) -> None:
        sys.stderr.write("\r\033[K" + say("grade.busy", self.lang, id=self.ex.id, text=text))
        sys.stderr.flush()

    def clear(self) -> None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def _print(result, ex, lang: str, as_json: bool, hints_seen: int | None = None) -> None:
    from tutor.grading.text import render

    if as_json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
        if result.saved is False:
            print(say("grade.not_saved", lang), file=sys.stderr)
    else:
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None  # folded, never wrapped
        print(render(result, ex, lang, hints_seen, width))
    sys.stdout.flush()


def _batch(ex, args, ctx, limits) -> int:
    """`grade ID --batch DIR [--shard K/N]`: every file of the folder, reported as --format says."""
    from tutor.grading.instructor import batch

    if args.file or args.watch or args.hint is not None:
        raise TutorError(say("grade.usage.batch_alone", ctx.lang))

    jobs = args.jobs if args.jobs is not None else os.cpu_count() or 1
    if jobs < 1:
        raise TutorError(say("cli.train.at_least_1", ctx.lang, option="--jobs", got=str(jobs)))
    from tutor.commands.batch_progress import BatchProgress

    progress = BatchProgress(ex.id, ctx.lang, sys.stderr)
    texts: dict[str, str] = {}
    rows = batch.grade_folder(
        ex,
        args.batch,
        lang=ctx.lang,
        limits=limits,
        jobs=jobs,
        shard=args.shard,
        on_start=progress.start,
        on_done=progress.done,
        texts=texts,
        bounds=args.bounds,
    )
    args.similar_pairs = _similar(ex, texts, args) if args.similar else None
    progress.finish()
    args.graded_at = batch.graded_now()
    _stamp(rows, args, ctx.lang)
    if args.format == "json" and args.shard is not None:
        from tutor.grading.instructor.shards import shard_json

        print(shard_json(ex, rows, args.shard, args.graded_at))
    else:
        _report(ex, rows, args, ctx, lambda: batch.to_json(ex, rows, args.graded_at, args.similar_pairs))
    if args.gradescope is not None:
        from tutor.grading.instructor.lms_export import write_gradescope_results

        try:
            write_gradescope_results(args.gradescope, ex, rows, args.points, args.pick, ctx.lang)
        except OSError as err:
            where = batch.shown_name(str(args.gradescope))
            raise TutorError(
                say("grade.file.cannot_write", ctx.lang, path=where, error=str(err.strerror or err))
            ) from None
    return _export(ex, rows, args, ctx)


def _instructor_options(args, lang: str) -> None:
    """The checks of `grade ID --batch DIR [--shard K/N] [--export DIR [--roster CSV]]` that need
    nothing graded: a mistake stops before any file is (exit 2). Leaves args.shard as (K, N) or None and
    args.roster as a roster.Roster or None."""
    if args.id is None:
        raise TutorError(say("grade.usage.no_id", lang))
    if args.shard is not None and args.batch is None:
        raise TutorError(say("grade.usage.shard_needs", lang))
    if args.export is not None and args.batch is None:
        raise TutorError(say("grade.usage.export_needs", lang))
    if args.gradescope is not None and args.batch is None:
        raise TutorError(say("grade.usage.gradescope_needs", lang))
    if args.roster is not None and args.export is None:
        raise TutorError(say("grade.usage.roster_export", lang))
    _points_option(args, lang)
    _late_options(args, lang)
    if args.similar and args.batch is None:
        raise TutorError(say("grade.usage.similar_needs", lang))
    if not 0 < args.similar_min <= 1:  # NaN too
        raise TutorError(say("grade.usage.similar_min", lang, got=f"{args.similar_min:g}"))
    if args.shard is not None:
        from tutor.grading.instructor.shards import parse_shard

        args.shard = parse_shard(args.shard, lang)
    if args.roster is not None:
        from tutor.grading.instructor.export import read_roster

        args.roster = read_roster(args.roster, lang)


def _overrides_option(ex, args, lang: str) -> None:
    """--overrides CSV read and checked against the exercise, before anything is graded: args.overrides
    becomes (the overrides, the file as shown) or None."""
    if args.overrides is None:
        return
    if args.export is None:
        raise TutorError(say("grade.usage.overrides_export", lang))
    from tutor.grading.instructor.batch import shown_name
    from tutor.grading.instructor.overrides import read_overrides

    args.overrides = (read_overrides(args.overrides, ex, lang), shown_name(str(args.overrides)))


def _similar(ex, texts: dict[str, str], args) -> list:
    """--similar: the pairs of graded files alike (tutor.grading.instructor.similarity), less the starter's code."""
    from pathlib import Path as _Path

    from tutor.grading.instructor.similarity import similar_pairs

    starter = _Path(ex.folder or ".") / "starter.py"
    shared = starter.read_text(encoding="utf-8") if starter.is_file() else ""
    return similar_pairs(texts, shared, args.similar_min)


def _late_options(args, lang: str) -> None:
    """--deadline, --late-per-day, --cutoff and --manifest checked before anything is graded: args.late
    becomes the policy, args.manifest {file: time} or None."""
    from tutor.grading.instructor.deadlines import parse_when, read_manifest

    if (args.late_per_day is not None or args.cutoff is not None) and args.deadline is None:
        raise TutorError(say("grade.usage.late_needs", lang))
    if args.late_per_day is not None and not 0 <= args.late_per_day <= 100:
        raise TutorError(say("grade.usage.late_per_day", lang, got=f"{args.late_per_day:g}"))
    deadline = parse_when(args.deadline, "--deadline", lang) if args.deadline else None
    cutoff = parse_when(args.cutoff, "--cutoff", lang) if args.cutoff else None
    if cutoff is not None and deadline is not None and cutoff < deadline:
        raise TutorError(say("grade.usage.cutoff_before", lang))
    args.late = {"deadline": deadline, "per_day": args.late_per_day, "cutoff": cutoff}
    args.manifest = read_manifest(args.manifest, lang) if args.manifest is not None else None


def _points_option(args, lang: str) -> None:
    if args.points is not None and not 0 < args.points <= 100_000:  # NaN too
        raise TutorError(say("grade.usage.points", lang, got=f"{args.points:g}"))


def _merge(args, ctx) -> int:
    """`grade [ID] --merge A.json B.json … [--format F] [--export DIR [--roster CSV]]`: shard reports
    joined into the report of the whole folder (tutor.grading.instructor.shards), printed as --format says."""
    from tutor.grading.instructor import shards

    given = (args.file, args.batch, args.shard, args.timeout, getattr(args, "jobs", None))
    if any(v is not None for v in given) or args.watch or args.hint is not None or args.json:
        raise TutorError(say("grade.usage.merge_alone", ctx.lang))
    if args.roster is not None and args.export is None:
        raise TutorError(say("grade.usage.roster_export", ctx.lang))
    _points_option(args, ctx.lang)
    _late_options(args, ctx.lang)
    roster = None
    if args.roster is not None:
        from tutor.grading.instructor.export import read_roster

        roster = read_roster(args.roster, ctx.lang)
    reports = [shards.read_report(path, ctx.lang) for path in args.merge]
    merged = shards.merge_reports(reports, ctx.lang, args.id)
    from tutor.course import open_course

    ex = open_course(ctx.lessons_dir).exercise(merged.exercise)
    _overrides_option(ex, args, ctx.lang)
    recomputed = shards.recompute(ex, reports, ctx.lang)  # the merged rows, as their checks give them
    for warning in [*merged.warnings, *recomputed]:
        print(say("grade.merge.warning", ctx.lang, message=warning), file=sys.stderr)
    rows = shards.batch_rows(ex, merged.results, ctx.lang)
    args.roster = roster
    checks = shards.checks_version(ex)
    args.graded_at = merged.graded_at
    _stamp(rows, args, ctx.lang)
    _report(
        ex,
        rows,
        args,
        ctx,
        lambda: shards.report_json(merged.exercise, checks, merged.results, merged.graded_at),
    )
    return _export(ex, rows, args, ctx)


def _stamp(rows, args, lang: str) -> None:
    """Each row's owner and time, and where each came from (tutor.grading.instructor.provenance); with
    a deadline, a warning for the files with no time the tutor can trust."""
    from tutor.grading.instructor.provenance import stamp, time_warnings

    stamp(rows, args.manifest, args.roster)
    for warning in time_warnings(rows, args.late, lang, args.roster):
        print(say("grade.merge.warning", lang, message=warning), file=sys.stderr)


def _report(ex, rows, args, ctx, as_json) -> None:
    """A batch's rows on stdout as --format says (`as_json()` gives the JSON)."""
    from tutor.grading.instructor import batch

    if args.format == "json":
        print(as_json())
    elif args.format == "csv":
        print(batch.to_csv(rows), end="")
    else:
        print(batch.to_table(ex, rows, ctx.lang))
        for line in _similar_lines(getattr(args, "similar_pairs", None), ctx.lang):
            print(line)
    sys.stdout.flush()


def _similar_lines(pairs, lang: str) -> list[str]:
    """The table's lines for --similar: a heading, then a pair a line with the lines that match."""
    if pairs is None:
        return []
    if not pairs:
        return [say("grade.similar.none", lang)]

    def spans(ranges) -> str:
        return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges)

    lines = [say("grade.similar.title", lang, n=len(pairs))]
    for pair in pairs:
        lines.append(
            say(
                "grade.similar.pair",
                lang,
                a=pair.a,
                b=pair.b,
                percent=round(pair.similarity * 100),
                lines_a=spans(pair.lines_a),
                lines_b=spans(pair.lines_b),
            )
        )
    return lines


def _export(ex, rows, args, ctx) -> int:
    """--export DIR: the instructor's per-check CSV, gradebook and feedback files (tutor.grading.instructor.export)."""
    if args.export is None:
        return 0
    from tutor.grading.instructor.batch import shown_name
    from tutor.grading.instructor.export import write_exports

    lms = {"points": args.points, "assignment": args.assignment}
    audit = {"graded_at": args.graded_at}
    written = write_exports(
        ex,
        rows,
        args.export,
        ctx.lang,
        args.roster,
        force=args.force,
        pick=args.pick,
        lms=lms,
        overrides=args.overrides,
        audit=audit,
        late=args.late,
        similar=getattr(args, "similar_pairs", None),
    )
    for warning in written:
        print(say("grade.merge.warning", ctx.lang, message=warning), file=sys.stderr)
    print(
        say("grade.export.done", ctx.lang, n=len(rows), folder=shown_name(str(args.export))), file=sys.stderr
    )
    return 0
