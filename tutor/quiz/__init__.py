"""Quizzes: reading answers, checking them, spaced-repetition scheduling, and a sitting's logic.

Import from the modules (tutor.quiz.session, tutor.quiz.check, ...): the package itself loads nothing.
"""
