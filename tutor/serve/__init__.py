"""The tutor in a browser: `python -m tutor serve` (server.py) for one learner or a class (roster.py)."""
