"""What the progress store holds: one pydantic model per table, the one definition of a valid row.

The models validate rows in their stored form: JSON columns as JSON text, flags as 0/1, timestamps
as ISO text with a zone. The store checks every row it writes, and reads every row, through them;
`progress --import` checks every imported row through the same models. So nothing reaches the file
that the store could not read back. Read from the store, JSON columns come back parsed (dicts and
lists) and timestamps as timezone-aware datetimes, so callers never see the storage format.

Strict everywhere: no "5" for 5, no NaN or infinity, integers within SQLite's 64 bits, text within
a length limit and valid Unicode (no lone surrogates), times with a zone between 1970 and 9998.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    with_config,
)
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

from tutor.progress.schema import LAST_LOCATION
from tutor.texts import Said

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
NAME_MAX = 200  # ids and keys: lesson, section, question, exercise, hint, session, run key, ...
TEXT_MAX = 100_000  # free text: answers, check messages, notes, text inside JSON columns
JSON_DEPTH = 32  # how deeply a JSON column's value may nest
STAMP_MIN = datetime(1970, 1, 1, tzinfo=UTC)
STAMP_MAX = datetime(9999, 1, 1, tzinfo=UTC)  # exclusive: a day can still be added to any stored time

STRICT = ConfigDict(strict=True, extra="forbid")


def _problem(kind: str, message: str, **context: Any) -> PydanticCustomError:
    return PydanticCustomError(kind, message, context)


def short(value: Any, limit: int = 60) -> str:
    """repr(value) cut to `limit` characters: error messages stay readable and printable."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


# --- scalar types ------------------------------------------------------------------------


def _unicode(text: str, limit: int) -> str:
    if len(text) > limit:
        raise _problem(
            "too_long", "is {n} characters long; at most {limit} are allowed", n=len(text), limit=limit
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise _problem(
            "surrogate",
            "contains a lone surrogate ({char}) at character {at}; text must be valid Unicode",
            char=ascii(text[err.start]),
            at=err.start,
        ) from None
    return text


def _name(text: str) -> str:
    return _unicode(text, NAME_MAX)


def _text(text: str) -> str:
    return _unicode(text, TEXT_MAX)


def _int64(n: int) -> int:
    if not INT64_MIN <= n <= INT64_MAX:
        raise _problem(
            "int64", "should be an integer within SQLite's 64 bits (-2**63 to 2**63-1), not {n}", n=short(n)
        )
    return n


def _finite(x: float) -> float:
    if not math.isfinite(x):
        raise _problem("finite", "should be a finite number, not {x}", x=repr(x))
    return x


def _flag(value: Any) -> bool:
    """0/1 (as SQLite stores booleans) or true/false."""
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise _problem("flag", "should be 0 or 1 (or true/false), not {v}", v=short(value))


def _aware(value: Any) -> datetime:
    """ISO timestamp text (or a datetime) with a zone, between 1970 and 9998 -> datetime."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise _problem(
                "stamp",
                "should be an ISO timestamp with a zone, between 1970 and 9998, such as"
                " 2026-03-02T09:30:00+00:00, not {v}",
                v=short(value),
            ) from None
    if not isinstance(value, datetime):
        raise _problem("stamp", "should be an ISO timestamp in a string, not {v}", v=short(value))
    if value.tzinfo is None:
        raise _problem("stamp_zone", "has no time zone (add one, e.g. +00:00): {v}", v=value.isoformat())
    try:
        in_range = STAMP_MIN <= value.astimezone(UTC) < STAMP_MAX
    except OverflowError:
        in_range = False
    if not in_range:
        raise _problem("stamp_range", "should be between 1970 and 9998, not {v}", v=value.isoformat())
    return value


def _stamp_text(text: str) -> str:
    _aware(text)
    return text


def _hex64(text: str) -> str:
    if len(text) != 64 or not set(text) <= set("0123456789abcdef"):
        raise _problem("sha256", "should be 64 lower-case hex digits (a SHA-256), not {v}", v=short(text))
    return text


Name = Annotated[str, AfterValidator(_name)]
Text = Annotated[str, AfterValidator(_text)]
Int = Annotated[int, AfterValidator(_int64)]
Count = Annotated[int, Field(ge=0), AfterValidator(_int64)]
Rating = Annotated[int, Field(ge=1, le=4)]
Real = Annotated[float, AfterValidator(_finite)]
Flag = Annotated[bool, BeforeValidator(_flag)]
Stamp = Annotated[datetime, BeforeValidator(_aware)]  # stored as text, read as an aware datetime
StampText = Annotated[str, AfterValidator(_stamp_text)]  # a timestamp inside a JSON column: stays text
Sha256 = Annotated[str, AfterValidator(_hex64)]


# --- JSON columns ------------------------------------------------------------------------


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a number JSON allows")


def _json_text(value: Any) -> Any:
    """A JSON column's text -> its value (NaN and Infinity refused)."""
    if not isinstance(value, str):
        raise _problem("json_text", "should be a JSON document in a string, not {v}", v=short(value))
    try:
        return json.loads(value, parse_constant=_refuse_constant)
    except RecursionError:
        raise _problem("json_depth", "is nested too deeply") from None
    except ValueError as err:
        raise _problem("json", "is not valid JSON ({err})", err=str(err)) from None


FROM_JSON = BeforeValidator(_json_text)  # marks a JSON column: JSON text in storage, parsed when read


def _json_value(value: Any) -> Any:
    """A parsed JSON value: limited depth, 64-bit integers, finite numbers, valid and bounded text."""
    problem = _json_problem(value, "", 0)
    if problem:
        raise _problem("json_value", "{problem}", problem=problem)
    return value


def _json_problem(value: Any, path: str, depth: int) -> str | None:
    if depth > JSON_DEPTH:
        return f"at {path}: nested deeper than {JSON_DEPTH} levels"
    if isinstance(value, dict):
        for key, item in value.items():
            step = f"{path}[{short(key)}]"
            problem = _scalar_problem(key, f"{step} (the key)") or _json_problem(item, step, depth + 1)
            if problem:
                return problem
        return None
    if isinstance(value, list):
        return next(
            (p for i, item in enumerate(value) if (p := _json_problem(item, f"{path}[{i}]", depth + 1))), None
        )
    return _scalar_problem(value, path)


def _scalar_problem(value: Any, path: str) -> str | None:
    where = f"at {path}: " if path else ""
    if value is None or isinstance(value, bool):
        return None
    checks: dict[type, Callable[[Any], object]] = {str: _text, int: _int64, float: _finite}
    check = checks.get(type(value))
    if check is None:
        return f"{where}{short(value)} is not a JSON value"
    try:
        check(value)
    except PydanticCustomError as err:
        return where + err.message()
    return None


JsonValue = Annotated[Any, AfterValidator(_json_value)]
JsonObject = dict[Name, JsonValue]


def _as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


CurvePoint = Annotated[tuple[Int, Real | None, Real | None], BeforeValidator(_as_tuple)]  # step, train, val


@with_config(STRICT)
class GradedCheck(TypedDict):
    """One check of a submission, as in the grade JSON."""

    name: Name
    status: Literal["pass", "fail", "error", "timeout", "skipped"]
    message: Text
    hint: Text | None
    points: Real


@with_config(STRICT)
class FsrsCard(TypedDict):
    """fsrs.Card.to_dict() (fsrs 6)."""

    card_id: Int
    state: Literal[1, 2, 3]  # learning, review, relearning
    step: Count | None
    stability: Real | None
    difficulty: Real | None
    due: StampText
    last_review: StampText | None


# --- one model per table -----------------------------------------------------------------


class Record(BaseModel):
    model_config = ConfigDict(**STRICT, frozen=True)

    imported: Flag = False  # True when the row came from `progress --import`, not from this machine


class SectionRead(Record):
    lesson: Name
    section: Name
    first_at: Stamp
    last_at: Stamp


class QuizAnswerRow(Record):
    """One answer to a quiz question, or to an exercise's predict question (then `exercise` is set)."""

    lesson: Name
    question: Name
    exercise: Name | None = None
    answer: Text  # what the learner typed or picked, as text
    correct: Flag | None  # None for open questions (the learner rated themselves)
    rating: Rating | None  # the FSRS rating this answer earned (1 again .. 4 easy); None for predictions
    used_hint: Flag = False
    counted: Flag = False  # True when it moved the long-term schedule (first answer of the day)
    session: Name | None = None
    at: Stamp


class QuizAnswer(QuizAnswerRow):
    id: int


class ReviewState(Record):
    """The spaced-repetition state of one quiz question."""

    lesson: Name
    question: Name
    card: Annotated[FsrsCard, FROM_JSON]  # fsrs.Card.to_dict()
    due: Stamp
    last_review: Stamp | None
    reviews: Count  # answers that counted toward the schedule
    lapses: Count  # of which rated "again"


class GradedSubmissionRow(Record):
    exercise: Name
    at: Stamp
    sha256: Sha256
    status: Literal["pass", "fail", "error", "timeout"]  # as in the grade JSON
    score: Real
    max_score: Real
    checks: Annotated[list[GradedCheck], FROM_JSON]
    hints_revealed: Count = 0


class GradedSubmission(GradedSubmissionRow):
    id: int


class HintRevealRow(Record):
    exercise: Name
    hint: Name  # e.g. "0" for the first general hint, or a check id
    at: Stamp


class HintReveal(HintRevealRow):
    id: int


class ExperimentRunRow(Record):
    name: Name
    params: Annotated[JsonObject, FROM_JSON]
    metrics: Annotated[JsonObject, FROM_JSON]
    note: Text | None = None
    at: Stamp


class ExperimentRun(ExperimentRunRow):
    id: int


class TrainingRun(Record):
    key: Name
    config: Annotated[JsonObject, FROM_JSON]
    status: Name  # e.g. "running" | "done" | "cancelled" | "failed"
    final_val_loss: Real | None = None
    params: Count | None = None
    seconds: Real | None = None
    curve: Annotated[list[CurvePoint], FROM_JSON] = []  # (step, train_loss, val_loss)
    at: Stamp


class KvEntry(Record):
    """A small value under a key; the last location has a fixed shape (the progress summary shows it)."""

    key: Name
    value: Annotated[JsonValue, FROM_JSON]
    at: Stamp

    @field_validator("value")
    @classmethod
    def _location_shape(cls, value: Any, info: ValidationInfo) -> Any:
        if info.data.get("key") == LAST_LOCATION and not (
            isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
        ):
            raise _problem("location", "should be an object of text values, not {v}", v=short(value))
        return value


# Each table's rows as written (log tables without their row id).
ROWS: dict[str, type[Record]] = {
    "section_reads": SectionRead,
    "quiz_answers": QuizAnswerRow,
    "review_cards": ReviewState,
    "submissions": GradedSubmissionRow,
    "hint_reveals": HintRevealRow,
    "experiment_runs": ExperimentRunRow,
    "training_runs": TrainingRun,
    "kv": KvEntry,
}


def problems(err: ValidationError) -> list[Said]:
    """Each error as "field.path: what is wrong", with the bad input quoted short (so it prints)."""
    return [
        Said("err.record.problem", field=record_field_path(e["loc"]), what=_message(e))
        for e in err.errors(include_url=False)
    ]


def record_field_path(loc: tuple[int | str, ...]) -> str:
    """("checks", 0, "status") -> "checks[0].status"; odd names (long, unprintable) quoted short."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            name = part if part.isascii() and part.isprintable() and len(part) <= 60 else short(part)
            text += f".{name}" if text else name
    return text


def _message(error: Any) -> Said | str:
    if error["type"] == "missing":
        return Said("err.record.missing")
    if error["type"] == "extra_forbidden":
        return Said("err.record.unknown_field")
    message: str = error["msg"]
    if message.startswith("Input should"):  # pydantic's own wording: say what was found instead
        return Said("err.record.found", detail=message.removeprefix("Input "), got=short(error["input"]))
    return message
