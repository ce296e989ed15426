"""`python -m tutor` with no subcommand: the full-screen app (Textual is imported only here)."""

from __future__ import annotations


def run_app(ctx) -> int:
    from tutor.ui.app import TutorApp

    app = TutorApp(lang=ctx.lang, lessons_dir=ctx.lessons_dir, home=ctx.home)
    code = app.run()
    return code if isinstance(code, int) else (app.return_code or 0)
