"""The learner's progress: a SQLite store in the tutor home (see store.py for the API).

Import from the modules (tutor.progress.store, ...): the package itself loads nothing.
"""
