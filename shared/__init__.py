"""Helpers of the standard library's kind that both the model (models/) and the tutor (tutor/) use: the
layer below both, importing neither (tests/test_layers.py), so any layer may use it."""
