"""A class for `python -m tutor serve --roster CSV`: who the learners are, and the links that let them in.

The roster is a CSV file with a header naming the columns `id,name,language` (`language` may be left
out: then English). An id names the learner's folder under the server's folder, so it is held to a
short, safe alphabet: ASCII letters, digits, `_` and `-`, 1 to 64 of them, starting with a letter or a
digit. No id can then name a path outside `learners/`, on any file system.

Each learner's link carries a secret token of 128 bits from `secrets`, valid for a number of days. The
links are printed once and kept in `links.csv` in the server's folder, readable by its owner only
(mode 0600), so that the same links work after a restart; a learner new to the roster gets a new one,
and `--renew` gives everyone a new one (the old links stop working). A token is compared in constant
time and never logged.
"""

from __future__ import annotations

import csv
import hmac
import io
import math
import os
import re
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tutor.errors import TutorError
from tutor.i18n import LANGS

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
COLUMNS = ("id", "name", "language")
LINKS_FILE = "links.csv"
CLASS_FILE = "class.json"  # who is in the class, without tokens (for `python -m tutor class`)
LEARNERS_FOLDER = "learners"
TOKEN_BYTES = 16  # 128 bits


@dataclass(frozen=True)
class RosterLearner:
    id: str
    name: str
    lang: str
    token: str = ""
    expires: float = math.inf  # a Unix time; a link without an end in the single-learner server

    def expired(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) >= self.expires

    def home(self, folder: Path) -> Path:
        """This learner's home: always directly inside `folder/learners` (the id's alphabet has no
        path separator and no dot)."""
        return folder / LEARNERS_FOLDER / self.id


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise TutorError("err.serve.roster_missing", path=str(path)) from None
    except UnicodeDecodeError as err:
        raise TutorError("err.serve.roster_not_utf8", path=str(path), byte=err.start) from None
    except OSError as err:
        raise TutorError(
            "err.serve.roster_unreadable", path=str(path), error=str(err.strerror or err)
        ) from None


def read_learners(path: Path) -> list[RosterLearner]:
    """The learners of a roster CSV, checked whole: the first problem stops it, naming file and line."""
    reader = csv.reader(io.StringIO(_read_text(path), newline=""), strict=True, skipinitialspace=True)
    learners: list[RosterLearner] = []
    first_line: dict[str, int] = {}
    try:
        columns = [c.strip().lower() for c in next(reader, None) or []]
        if "id" not in columns or "name" not in columns or not set(columns) <= set(COLUMNS):
            raise TutorError("err.serve.roster_header", file=str(path), got=",".join(columns))
        for cells in reader:
            line = reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(columns):
                raise TutorError(
                    "err.serve.roster_cells", file=str(path), line=line, n=len(columns), got=len(cells)
                )
            row = dict(zip(columns, (c.strip() for c in cells), strict=True))
            learner_id, lang = row["id"], (row.get("language") or "en").lower()
            if not ID_PATTERN.fullmatch(learner_id):
                raise TutorError("err.serve.roster_id", file=str(path), line=line, id=learner_id[:80])
            if lang not in LANGS:
                raise TutorError(
                    "err.serve.roster_lang", file=str(path), line=line, got=lang[:20], langs=", ".join(LANGS)
                )
            if learner_id.lower() in first_line:  # case-insensitive file systems would share a folder
                raise TutorError(
                    "err.serve.roster_twice",
                    file=str(path),
                    line=line,
                    id=learner_id,
                    first=first_line[learner_id.lower()],
                )
            first_line[learner_id.lower()] = line
            learners.append(RosterLearner(learner_id, row["name"], lang))
    except csv.Error as err:
        raise TutorError(
            "err.serve.roster_csv", file=str(path), line=reader.line_num, error=str(err)
        ) from None
    if not learners:
        raise TutorError("err.serve.roster_empty", file=str(path))
    return learners


def read_links(path: Path) -> dict[str, tuple[str, float]]:
    """{learner id: (token, expires)} from an earlier run's links file; nothing when there is none."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    tokens = {}
    for row in csv.DictReader(io.StringIO(text, newline="")):
        token = (row.get("token") or "").strip()
        try:
            expires = datetime.fromisoformat(row.get("expires") or "").timestamp()
        except ValueError:
            continue  # a row edited by hand into something else: that learner gets a new link
        if ID_PATTERN.fullmatch(row.get("id") or "") and len(token) >= 22:
            tokens[row["id"]] = (token, expires)
    return tokens


def give_tokens(
    folder: Path, learners: list[RosterLearner], valid_days: float, renew: bool = False
) -> tuple[list[RosterLearner], list[RosterLearner]]:
    """Every learner with a token: the one from `folder/links.csv` if they had one (expired or not:
    an expired link stays so until `renew`), else a new one valid for `valid_days`. Returns (all
    learners, those whose link is new); `write_links` keeps them."""
    known = {} if renew else read_links(folder / LINKS_FILE)
    until = time.time() + valid_days * 86400
    given, new = [], []
    for learner in learners:
        token, expires = known.get(learner.id) or (new_token(), until)
        with_token = RosterLearner(learner.id, learner.name, learner.lang, token, expires)
        given.append(with_token)
        if learner.id not in known:
            new.append(with_token)
    return given, new


def write_links(folder: Path, learners: list[RosterLearner], base_url: str) -> Path:
    """`folder/links.csv`: every learner's token, its end and link, readable by the owner only."""
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(("id", "name", "language", "token", "expires", "link"))
    for learner in learners:
        expires = datetime.fromtimestamp(learner.expires, UTC).isoformat(timespec="seconds")
        writer.writerow(
            (learner.id, learner.name, learner.lang, learner.token, expires, link(base_url, learner.token))
        )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LINKS_FILE
    tmp = path.with_name(f".{LINKS_FILE}.{secrets.token_hex(4)}.tmp")
    fd = os.open(
        tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600
    )  # never readable by others, not even briefly
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(out.getvalue())
    os.replace(tmp, path)
    return path


def link(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/learn/{token}"


def token_owner(learners: list[RosterLearner], token: str) -> RosterLearner | None:
    """The learner whose token this is. Every token is compared, each in constant time, so that the
    time taken says nothing about how much of a token was right, nor whose it was close to."""
    found = None
    given = token.encode("utf-8", "replace")
    for learner in learners:
        if hmac.compare_digest(learner.token.encode(), given):
            found = learner
    return found
