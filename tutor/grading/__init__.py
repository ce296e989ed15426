"""Graded exercises, by job:

- here: what the learner's commands and the app use: grading a file (runner, submissions), starting a
  judge (judges), the grade (result, untrusted, text, hints), the learner's exercise files (workspace,
  watch), "runs" exercises (runs), the authors' checks (authoring) and the check API they write
  checks.py with (kit: `from tutor.grading.kit import expect`);
- judging/: the judge, a trusted process started as a script (judging/judge.py), that runs the checks,
  the learner's module as a check sees it (remote), what a check says (voice), training the learner's model;
- box/: the sandboxed worker that runs the learner's code (worker), its box (sandbox, seccomp, landlock)
  and the plain-data wire between it and the judge;
- instructor/: batches, collecting an LMS's download, rosters, shards, exports, deadlines, overrides and
  similarity.

Nothing here imports torch or Textual at import time. The judge and the worker are separate processes
that import torch themselves.
"""
