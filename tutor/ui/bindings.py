"""Footer and help labels in the learner's language: every Binding carries an id, and the id names
its label in the catalogue (tutor.texts) ("key.<id>"); the key itself stays remappable through the id."""

from __future__ import annotations

from dataclasses import replace

from textual.dom import DOMNode

from tutor.texts import has, say


def localise(node: DOMNode, lang: str) -> None:
    """Replace the descriptions of `node`'s own bindings (a per-instance copy) by `lang`'s words."""
    table = node._bindings.key_to_bindings
    for key, bindings in table.items():
        table[key] = [
            replace(b, description=say(f"key.{b.id}", lang)) if b.id and has(f"key.{b.id}") else b
            for b in bindings
        ]
