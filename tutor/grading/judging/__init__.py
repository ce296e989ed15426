"""The judge: a trusted process (judge.py, started as a script) that runs an exercise's checks against a
submission it never imports, asking the boxed worker for values (remote) and saying what a check finds (voice)."""
