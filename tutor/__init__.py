"""Attention Tutor: multi-head attention and positional encoding, taught and proven live."""

__version__ = "0.1.0"
