"""`python -m tutor` with no subcommand: the full-screen app (Textual is imported only here)."""

from __future__ import annotations


def run_app(ctx) -> int:
    """Run the app; when it has ended, the process ends at once: the store is closed, the children
    stopped and the terminal restored already, and the interpreter's own teardown of the app's heap
    (Textual, the course, pydantic) took 40-300 ms after ctrl+q (benchmarks/bench_responsiveness.py).

    In a served session (`python -m tutor serve` started it: TUTOR_SERVED), the process first ends with
    its server however that ends (one killed outright left its apps running), then keeps itself to its
    learner's home and the course (tutor.serve.confine), before Textual or the course is loaded, while it
    has one thread."""
    import os
    import sys

    from tutor.settings import env

    served = None
    if env("TUTOR_SERVED") is not None:
        from tutor.proc.spawn import die_with_parent
        from tutor.serve.confine import confine_app
        from tutor.serve.session import session

        served = session()
        if served is not None:
            die_with_parent()  # the server started it (its shell exec'd it): the server is its parent
            confine_app(ctx.home, ctx.lessons_dir, served.folder, served.learner)

    from tutor.ui.app import TutorApp

    app = TutorApp(lang=ctx.lang, lessons_dir=ctx.lessons_dir, home=ctx.home, served=served)
    code = app.run()
    code = code if isinstance(code, int) else (app.return_code or 0)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
