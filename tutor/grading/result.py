"""The grade of one submission, exactly the grade JSON of docs/formats.md.

    {"version": VERSION (the format's), "exercise", "status": "pass"|"fail"|"error"|"timeout", "score", "max_score",
     "checks": [{"name", "title", "status", "message", "hint", "points", "max_points"}], "duration_s", "output",
     "isolation": {"level": "strong"|"partial"|"basic"|"none", "layers": [what was in force],
                   "missing": [what "strong" needs and was not there]},
     "seed": what the checks drew their inputs from (kit.grade_seed: 16 hex digits, secret until the
             grade is made; `grade --seed` replays it; "" when no code ran)}

"none" is a grade no learner code ran for (an unreadable file, an answer file parsed as data). The
layers are named as in tutor/grading/box/sandbox.py (private-root, pid-namespace, network-namespace,
landlock, seccomp, limits, no-new-files).

A check's status is "pass", "fail" (wrong answer), "error" (the learner's code raised or the
process died while it ran), "timeout" (it was running when time ran out) or "skipped" (never ran).
`points` is what the check earned (0 unless it passed), `max_points` what it can earn (the exercise's
points for it) and `title` its title in the grade's language. A report written before they were added
reads with "" and 0; a merge fills both in from the course's exercise.toml (shards.batch_rows). The
progress store keeps a check without them (submissions.save_submission).

Every text of a grade may hold what the learner's code wrote, so the models hold them as
tutor.grading.untrusted makes them: a check's message and hint on one line (line breaks shown as ↵),
the output clean of escape and control sequences. However a grade is made (built from the judge's
events, read from a report), no text in it can pass for the grader's own lines where it is shown.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tutor.grading.untrusted import clean, one_line

VERSION: Final = 1  # of the grade JSON's format; batch and shard reports and exports say it too
Status = Literal["pass", "fail", "error", "timeout"]
CheckStatus = Literal["pass", "fail", "error", "timeout", "skipped"]

EXIT_CODES: dict[str, int] = {"pass": 0, "fail": 1, "timeout": 1, "error": 2}


class CheckResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str  # the check id from exercise.toml
    title: str = ""  # its title in the grade's language
    status: CheckStatus
    message: str
    hint: str
    points: float
    max_points: float = 0  # what it can earn: the exercise's points for it

    @field_validator("title", "message", "hint")
    @classmethod
    def _one_line(cls, text: str) -> str:
        return one_line(text)


class GradeResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = VERSION
    exercise: str
    status: Status
    score: float
    max_score: float
    checks: list[CheckResult]
    duration_s: float
    output: str
    isolation: dict = Field(default_factory=lambda: {"level": "none", "layers": [], "missing": []})
    seed: str = ""
    saved: bool | None = Field(None, exclude=True)  # recorded in the store; False: it stayed busy

    @field_validator("output")
    @classmethod
    def _clean(cls, text: str) -> str:
        return clean(text)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def first_failure(self) -> CheckResult | None:
        return next((c for c in self.checks if c.status != "pass"), None)

    def to_json(self) -> dict:
        return self.model_dump(mode="json")
