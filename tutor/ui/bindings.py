"""Our keys and their labels in the learner's language, through Textual's public API only.

Every Binding of ours carries an id, and the id names its label in the catalogue (tutor.texts)
("key.<id>"); the key itself stays remappable through the id. Textual has no public way to change a
binding's description, so the descriptions stay as declared and whatever shows a key (the key bar,
the help screen) asks `label` for its words.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.dom import DOMNode

from tutor.texts import has, say


def label(binding: Binding, lang: str) -> str:
    """A key's words in `lang`: the catalogue's "key.<id>", else the binding's own description."""
    if binding.id and has(f"key.{binding.id}"):
        return say(f"key.{binding.id}", lang)
    return binding.description


def own_bindings(node: DOMNode) -> list[Binding]:
    """The bindings with an id (ours) that `node`'s classes declare in BINDINGS, a subclass's binding
    of a key replacing its base's, as Textual merges them."""
    by_key: dict[str, Binding] = {}
    for cls in reversed(type(node).__mro__):
        for binding in Binding.make_bindings(vars(cls).get("BINDINGS", [])):
            by_key[binding.key] = binding
    return [b for b in by_key.values() if b.id]
