"""Character tokenizer: one id per character seen in the corpus, saved inside the checkpoint.

Id 0 is a declared unknown token (U+FFFD). `encode` refuses characters it has never seen unless
asked to map them to that token, so a typo never turns silently into some other character's id.
"""

from __future__ import annotations

from collections.abc import Iterable

UNK = "\ufffd"


class UnknownCharacterError(ValueError):
    def __init__(self, unknown: list[tuple[int, str]]):
        self.unknown = unknown
        shown = ", ".join(f"{ch!r} at {i}" for i, ch in unknown[:8])
        more = f" and {len(unknown) - 8} more" if len(unknown) > 8 else ""
        super().__init__(
            f"{len(unknown)} character(s) not in the model's vocabulary: {shown}{more} "
            f"(pass unknown='unk' to map them to {UNK!r})"
        )


class CharTokenizer:
    def __init__(self, chars: Iterable[str]):
        chars = list(chars)
        if not chars or chars[0] != UNK:
            chars = [UNK, *(c for c in chars if c != UNK)]
        if len(set(chars)) != len(chars):
            raise ValueError("tokenizer vocabulary has duplicate characters")
        if any(len(c) != 1 for c in chars):
            raise ValueError("a character tokenizer's vocabulary holds single characters only")
        self.chars = chars
        self.stoi = {c: i for i, c in enumerate(chars)}

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        return cls(sorted(set(text) - {UNK}))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str, unknown: str = "error") -> list[int]:
        if unknown not in ("error", "unk"):
            raise ValueError(f"unknown must be 'error' or 'unk', got {unknown!r}")
        ids = [self.stoi.get(c, -1) for c in text]
        missing = [(i, text[i]) for i, t in enumerate(ids) if t < 0]
        if missing and unknown == "error":
            raise UnknownCharacterError(missing)
        return [max(t, 0) for t in ids]

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.chars[int(i)] for i in ids)

    def to_dict(self) -> dict:
        return {"kind": "char", "chars": "".join(self.chars)}

    @classmethod
    def from_dict(cls, data: dict) -> CharTokenizer:
        if data.get("kind") != "char":
            raise ValueError(f"not a character tokenizer: kind={data.get('kind')!r}")
        return cls(list(data["chars"]))
