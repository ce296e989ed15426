"""The app's words are in the one catalogue, tutor.texts: `t` is its lookup `say` under the name
tutor/ui/app.py still imports (the app module moves to `from tutor.texts import say` with its rewrite)."""

from __future__ import annotations

from tutor.texts import say as t

__all__ = ["t"]
