"""The full-screen Textual app: the only package that imports Textual.

`tutor.commands.app.run_app(ctx)` imports `tutor.ui.app` lazily, so the headless CLI never pays
for Textual.
"""
