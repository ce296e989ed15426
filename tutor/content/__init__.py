"""Lesson content: schema, loader, validator, Markdown/math preparation."""
