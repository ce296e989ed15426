"""Widgets shared by the screens: one concern per file."""
