"""Opening the SQLite file safely: recognise ours, move aside what is not, migrate, serialise writes.

A file that is not a readable SQLite database of ours is never wiped: it is renamed to
`progress.sqlite3.corrupt-<UTC timestamp>` (with its -wal/-shm companions) and a notice says so.
A file written by a newer tutor (higher schema version) is left alone and opening fails clearly.
Opening (recognise, move aside, switch to WAL, migrate) holds an exclusive lock on
`progress.sqlite3.lock` beside the store, so two tutors starting at the same moment take turns.

A store deleted while it is open (the learner's home folder removed under a running app) would take
every later write into a file no name leads to, lost when the app ends. So each write first checks the
file is still there; when it is gone, the home is made again and the store written back to its place
from the connection that still holds it, all of it, and a notice says so (`news`, for the app to show).
Deleted as it opens, it is written back at once. Before it opens (the app opens it a second or so
after its first frame, which already shows the progress), `Held` keeps the file open from the app's
start, and writes it back if it went meanwhile.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tutor.errors import TutorError
from tutor.progress.migrations import MIGRATIONS, SCHEMA_VERSION
from tutor.progress.schema import APPLICATION_ID, FILE_NAME
from tutor.settings import STORE_BUSY_TIMEOUT_S
from tutor.texts import Said

log = logging.getLogger("tutor.progress")

SQLITE_MAGIC = b"SQLite format 3\x00"


class StoreBusy(TutorError):
    """Another process held the store's write lock for longer than the timeout."""


class StoreTooNew(TutorError):
    """The file was written by a newer version of the tutor; we do not touch it."""


def local_now() -> datetime:
    """The default clock: aware, in the machine's local zone (so "today" is the learner's day)."""
    return datetime.now(UTC).astimezone()


def end_of_today(now: datetime) -> datetime:
    """Midnight after `now` in its own zone: "due today" means due before this."""
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return start + timedelta(days=1)


def first_free(name: Callable[[str], Path]) -> Path:
    """The first of name(""), name("-2"), name("-3"), ... that does not exist: a kept file is never overwritten."""
    n, path = 1, name("")
    while path.exists():
        n += 1
        path = name(f"-{n}")
    return path


def to_text(dt: datetime) -> str:
    if dt.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def from_text(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


class Database:
    """Two connections to `home/progress.sqlite3`, each shared by threads under its own lock: one
    writes, one transaction at a time; one reads. In WAL mode a read goes on while a write waits for
    another process's lock (up to the busy timeout), so a read on the app's UI thread never waits
    for the app's writer thread."""

    def __init__(
        self, home: Path, *, now: Callable[[], datetime] = local_now, timeout_s: float = STORE_BUSY_TIMEOUT_S
    ):
        self.home = Path(home)
        self.path = self.home / FILE_NAME
        self.now = now
        self.timeout_s = timeout_s
        self.notices: list[Said] = []  # things the CLI/app should tell the learner (e.g. a moved file)
        self.news: list[Said] = []  # such notices since they were last taken (take_news): the app shows them
        self._lock = threading.RLock()  # the writing connection
        self._read_lock = threading.Lock()  # the reading connection
        try:
            self.home.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise TutorError("err.store.no_home", path=str(self.home), why=err.strerror) from None
        with self._opening():
            self.conn = self._open()
        self._file = self._identity()
        if self._file is None:  # deleted as it opened (its home removed): the connection still holds it
            self._write_back()
            self._file = self._identity()
        try:
            self._reader = self._connect()
            self._reader.execute("PRAGMA query_only = ON")
        except sqlite3.Error as err:
            self.conn.close()
            raise TutorError("err.store.cannot_open", path=str(self.path), why=str(err)) from None

    # --- opening -------------------------------------------------------------------------

    @contextmanager
    def _opening(self) -> Iterator[None]:
        """Open one process at a time. Unserialised, a tutor opening a fresh store read its
        application id before another's migration committed and its tables after, took the file
        for some other program's and moved it aside with the other's answers in it; or it met the
        other's switch to WAL and gave up as busy at once."""
        try:
            fd = os.open(self.path.with_name(FILE_NAME + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as err:
            raise TutorError("err.store.cannot_open", path=str(self.path), why=err.strerror) from None
        try:
            deadline = time.monotonic() + self.timeout_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise self._busy() from None
                    time.sleep(0.01)
            yield
        finally:
            os.close(fd)  # and with it the lock

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so each write is exactly one
        # transaction and the write lock is taken up front (no deadlock-prone lock upgrades).
        conn = sqlite3.connect(
            self.path, timeout=self.timeout_s, isolation_level=None, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(self.timeout_s * 1000)}")
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            problem = self._foreign_header()
        except OSError as err:
            raise TutorError("err.store.cannot_read", path=str(self.path), why=err.strerror) from None
        if problem:
            self._move_aside(problem)
        conn: sqlite3.Connection | None = None
        try:
            conn = self._connect()
            problem = self._inspect(conn)
        except sqlite3.OperationalError as err:
            if conn is not None:
                conn.close()
            if _is_locked(err):
                raise self._busy() from None
            raise TutorError("err.store.cannot_open", path=str(self.path), why=str(err)) from None
        except sqlite3.DatabaseError as err:
            problem = Said("err.store.unreadable", detail=str(err))
        if problem:
            if conn is not None:
                conn.close()  # before the file is moved aside: no handle left on the old file
            self._move_aside(problem)
            conn = self._connect()
        assert conn is not None  # the first try connected, or raised
        try:
            # WAL: readers never block the writer, and a killed writer leaves committed rows intact.
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            self._migrate(conn)
        except sqlite3.OperationalError as err:
            conn.close()
            if _is_locked(err):
                raise self._busy() from None
            raise TutorError("err.store.cannot_open", path=str(self.path), why=str(err)) from None
        return conn

    def _foreign_header(self) -> Said | None:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return None
        with self.path.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
        return None if head == SQLITE_MAGIC else Said("err.store.not_sqlite")

    def _inspect(self, conn: sqlite3.Connection) -> Said | None:
        """Why the file is not a usable store of ours, or None. Raises StoreTooNew for newer files."""
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            return Said("err.store.damaged", detail=check)
        app_id, version, tables = conn.execute(  # one statement: one snapshot of the file
            "SELECT (SELECT application_id FROM pragma_application_id),"
            " (SELECT user_version FROM pragma_user_version),"
            " (SELECT count(*) FROM sqlite_master WHERE type = 'table')"
        ).fetchone()
        if app_id == 0 and version == 0 and tables == 0:
            return None  # empty: a new store
        if app_id != APPLICATION_ID:
            return Said("err.store.foreign")
        if version > SCHEMA_VERSION:
            conn.close()
            raise StoreTooNew("err.store.too_new", path=str(self.path), version=version, known=SCHEMA_VERSION)
        return None

    def _move_aside(self, reason: Said) -> None:
        stamp = self.now().astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        aside = first_free(lambda n: self.path.with_name(f"{FILE_NAME}.corrupt-{stamp}{n}"))
        try:
            self.path.rename(aside)
            for suffix in ("-wal", "-shm"):
                companion = self.path.with_name(FILE_NAME + suffix)
                if companion.exists():
                    companion.rename(aside.with_name(aside.name + suffix))
        except OSError as err:
            raise TutorError(
                "err.store.stuck", path=str(self.path), reason=reason, why=err.strerror
            ) from None
        notice = Said("err.store.moved_aside", path=str(self.path), reason=reason, aside=aside.name)
        log.info(str(notice))  # a record for whoever logs; the CLI and the app show the notice, worded
        self.notices.append(notice)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return  # up to date: opening takes no write lock, so a busy writer elsewhere does not stop us
        conn.execute("BEGIN IMMEDIATE")  # a second process opening at the same moment waits here
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for steps in MIGRATIONS[version:]:
                for statement in steps:
                    conn.execute(statement)
            if version < SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _busy(self) -> StoreBusy:
        return StoreBusy("err.store.busy", path=str(self.path), seconds=self.timeout_s)

    # --- using ---------------------------------------------------------------------------

    def _identity(self) -> tuple[int, int] | None:
        return identity(self.path)

    def _still_there(self) -> None:
        """Before a write: the store file must still be the one open. Deleted (its home removed), it is
        written back from the open connection; replaced by another file, that one is opened."""
        now = self._identity()
        if now == self._file:
            return
        with self._read_lock:
            if now is None:
                self._write_back()
            old, old_reader = self.conn, self._reader
            self.conn, self._reader = self._connect(), self._connect()
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = FULL")
            self._reader.execute("PRAGMA query_only = ON")
            old.close()
            old_reader.close()
            self._file = self._identity()

    def _write_back(self) -> None:
        notice = write_back(self.conn, self.home, self.path)
        self.notices.append(notice)
        self.news.append(notice)

    def take_news(self) -> list[Said]:
        """The notices since the last call (a store written back): each is shown once."""
        news, self.news = self.news, []
        return news

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it is committed, or none of it."""
        with self._lock:
            self._still_there()
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as err:
                if _is_locked(err):
                    raise self._busy() from None
                raise
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            try:
                self.conn.execute("COMMIT")
            except sqlite3.OperationalError as err:
                self.conn.execute("ROLLBACK")
                if _is_locked(err):
                    raise self._busy() from None
                raise

    def read(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        """The rows of one statement (one snapshot of what is committed), on the reading connection:
        never held up by a write of this process, nor by another process's write lock."""
        with self._read_lock:
            try:
                return self._reader.execute(sql, params).fetchall()
            except sqlite3.OperationalError as err:
                if _is_locked(err):
                    raise self._busy() from None
                raise

    def close(self) -> None:
        with self._lock, self._read_lock:
            self.conn.close()
            self._reader.close()


def identity(path: Path) -> tuple[int, int] | None:
    """A file's device and inode, None when no file has its name."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def write_back(conn: sqlite3.Connection, home: Path, path: Path) -> Said:
    """The store a connection holds, written back to `path` after its file was deleted (its home made
    again); the notice that says so."""
    try:
        home.mkdir(parents=True, exist_ok=True)
        copy = sqlite3.connect(path)
        try:
            conn.backup(copy)  # every page the open store holds, committed
        finally:
            copy.close()
    except (OSError, sqlite3.Error) as err:
        raise TutorError("err.store.cannot_write_back", path=str(path), why=str(err)) from None
    notice = Said("err.store.written_back", home=str(home), path=str(path))
    log.info(str(notice))
    return notice


class Held:
    """The progress file held open from the app's start until its store opens (a read connection, which
    keeps the file and its write-ahead log open): deleted in between (the learner removed the home in the
    first second), `written_back` puts it back, all of it, before the store opens. A few milliseconds,
    standard library only; nothing is held when there is no file yet, or one SQLite cannot read."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.path = self.home / FILE_NAME
        self._file = identity(self.path)
        self._conn: sqlite3.Connection | None = None
        if self._file is None:
            return
        try:
            # mode=rw: a file deleted since it was seen is not made again, empty, by opening it
            uri = self.path.absolute().as_uri() + "?mode=rw"
            self._conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA query_only = ON")
            self._conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the log too
        except sqlite3.Error:  # not a store (the store moves it aside as it opens): nothing held
            self.close()
        else:
            if identity(self.path) != self._file:  # deleted, or replaced, as it was opened
                self.close()

    def written_back(self) -> Said | None:
        """The file held, written back if no file has its name now (a notice), else None: a file that is
        there (the held one, or one the learner put there) is the store's to open."""
        if self._conn is None or identity(self.path) is not None:
            return None
        return write_back(self._conn, self.home, self.path)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _is_locked(err: sqlite3.OperationalError) -> bool:
    text = str(err).lower()
    return "locked" in text or "busy" in text
