"""The learner's progress: a SQLite store in the tutor home (see store.py for the API).

Exports are lazy (PEP 562) so importing the package costs nothing until a name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tutor.progress.db import StoreBusy, StoreTooNew
    from tutor.progress.store import Store

__all__ = ["Store", "StoreBusy", "StoreTooNew"]


def __getattr__(name: str) -> Any:
    if name == "Store":
        from tutor.progress.store import Store

        return Store
    if name in ("StoreBusy", "StoreTooNew"):
        from tutor.progress import db

        return getattr(db, name)
    raise AttributeError(f"module 'tutor.progress' has no attribute {name!r}")
