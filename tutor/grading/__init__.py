"""Graded exercises: the judge and its sandboxed worker, the grade result, the learner's workspace.

Nothing here imports torch or Textual at import time. judge.py (trusted: the checks and verdicts) and
worker.py (untrusted: the learner's code, confined by sandbox.py) are separate processes that import
torch themselves; kit.py holds the helpers checks.py files use.
"""
