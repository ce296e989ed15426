"""Graded exercises: the sandboxed runner, the grade result, the learner's workspace.

Nothing here imports torch or Textual at import time; `harness.py` (the child side) and `kit.py`
(helpers for checks.py) import torch inside the grading process only.
"""
