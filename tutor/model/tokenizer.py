"""Character tokenizer: one id per character, saved inside the checkpoint.

Id 0 is a declared unknown token (U+FFFD). `encode` refuses characters it has never seen unless
asked to map them to that token, so a typo never turns silently into some other character's id.

Vocabulary policy for new training runs (`CharTokenizer.for_training`): every character seen at least
MIN_COUNT (3) times in the TRAINING split gets its own id, in code-point order; everything else (rarer
characters, and characters that appear only in validation or in a prompt) maps to id 0. On the Tang corpus
this keeps 6,009 of 7,899 training characters, and id 0 stands for 0.09% of training and 0.13% of
validation characters. Why:
- a character seen once or twice gets almost no gradient, yet costs an output row, and the output layer
  is as costly as all the blocks at this size: dropping those rows makes each step cheaper;
- the rare characters give id 0 real training examples, so a character the model has never seen gets a
  learned "some rare character" probability instead of an untrained row;
- counting on the training split alone keeps the validation text unseen, vocabulary included.

`from_text` (every character of the text, no threshold) is the older rule; tokenizers made with it load unchanged
through `from_dict`. The shipped checkpoints' tokenizers follow the policy above (6,010 ids on the Tang split).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

UNK = "\ufffd"
MIN_COUNT = 3


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
        """Every character of `text` (no threshold)."""
        return cls(sorted(set(text) - {UNK}))

    @classmethod
    def for_training(cls, train_text: str, min_count: int = MIN_COUNT) -> CharTokenizer:
        """The vocabulary policy (module docstring): characters seen at least `min_count` times in `train_text`."""
        if min_count < 1:
            raise ValueError(f"min_count must be at least 1, got {min_count}")
        counts = Counter(train_text)
        return cls(sorted(c for c, n in counts.items() if n >= min_count and c != UNK))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str, unknown: str = "error") -> list[int]:
        if unknown not in ("error", "unk"):
            raise ValueError(f"unknown must be 'error' or 'unk', got {unknown!r}")
        ids = [self.stoi.get(c, -1) for c in text]
        if -1 not in ids:  # the common case, checked at C speed: a corpus is millions of characters
            return ids
        if unknown == "error":
            raise UnknownCharacterError([(i, text[i]) for i, t in enumerate(ids) if t < 0])
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


COURSE_CHECKPOINT = Path(__file__).with_name("checkpoints") / "gpt-learned.pt"


def course_tokenizer(path: Path | None = None) -> CharTokenizer:
    """The tokenizer of the shipped course GPT (tutor/model/checkpoints/gpt-learned.pt), or of `path`.

    Learners' files use it to turn poem lines into ids and to size a model's vocabulary like the course
    model's (three-layers' order_gap). Read once per process."""
    return _tokenizer_from(Path(path) if path else COURSE_CHECKPOINT)


@lru_cache(maxsize=4)
def _tokenizer_from(path: Path) -> CharTokenizer:
    import torch

    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}: the course tokenizer is stored in it")
    payload = torch.load(path, map_location="cpu", weights_only=True)
    return CharTokenizer.from_dict(payload["tokenizer"])
