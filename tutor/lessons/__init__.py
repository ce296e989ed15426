"""Course content: lessons, quizzes and exercises as data."""
