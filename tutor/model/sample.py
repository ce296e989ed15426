"""Let the course GPT write, one character at a time, and say what it weighed at each step.

Like nanoGPT's sample.py, but a generator: every step yields the character chosen, its probability,
the five likeliest characters, and (on request) every head's attention from the position that chose
it, so a caller can stream a poem and show why each character came.

    ck = load_checkpoint(path)
    for step in write(ck.model, ck.tokenizer, "白日", temperature=0.8, top_k=20, seed=1):
        print(step.char, end="", flush=True)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from tutor.model.gpt import GPT
from tutor.model.tokenizer import CharTokenizer

POEM_END = "\n\n"  # a blank line ends a poem in the corpus
POEM_START = "\n"  # training windows open with the line break before a poem: its first character is at 1


@dataclass
class Step:
    char: str  # the character written
    prob: float  # its probability at this temperature (before the top-k cut, like `top`)
    top: list[tuple[str, float]]  # the five likeliest next characters (after temperature), best first
    position: int  # its position in the text (prompt included)
    attention: torch.Tensor | None = field(default=None, repr=False)  # (n_layer, n_head, context) or None
    context: str = ""  # with attention: the characters the choosing position saw (the attention's columns)


@torch.no_grad()
def write(
    model: GPT,
    tokenizer: CharTokenizer,
    prompt: str = "",
    *,
    max_new: int = 200,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int | None = None,
    attention: bool = False,
    stop_at_poem_end: bool = True,
) -> Iterator[Step]:
    """Write after `prompt` (characters the model does not know become the unknown id) until the poem
    ends (a blank line, not yielded) or `max_new` characters. The prompt follows the line break that
    opens a poem in every training window, so an empty prompt starts a poem at position 1, as in
    training. With `attention`, each step carries every head's weights from the query that chose the
    character over the context it saw."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if top_k is not None and top_k < 0:
        raise ValueError(f"top_k must be at least 1, or 0 or None for no cut, got {top_k}")
    model.eval()
    gen = torch.Generator().manual_seed(seed) if seed is not None else None
    # the text reads as training windows do: the opening line break at position 0, the poem from 1
    ids = tokenizer.encode(POEM_START + prompt, unknown="unk")
    skip = 1  # the opening line break is not the learner's text
    text = prompt
    for _ in range(max_new):
        context = torch.tensor([ids[-model.cfg.block_size :]])
        logits, _, *weights = model(
            context, need_weights=attention
        )  # with attention: [(1, layer, head, T, T)]
        logits = logits[0, -1] / temperature
        probs = logits.softmax(-1)
        top = probs.topk(min(5, probs.numel()))
        if top_k:  # keep the k likeliest; 0 or None keeps every character
            kth = torch.topk(logits, min(top_k, logits.numel())).values[-1]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        next_id = int(torch.multinomial(logits.softmax(-1), 1, generator=gen))
        char = tokenizer.decode([next_id])
        maps, seen = None, ""
        if attention:
            seen = tokenizer.decode(context[0].tolist())
            maps = weights[0][0, :, :, -1]  # (layer, head, T): the last query's rows
        ids.append(next_id)
        if stop_at_poem_end and (text + char).endswith(POEM_END):
            return
        text += char
        yield Step(
            char=char,
            prob=float(probs[next_id]),
            top=[
                (tokenizer.decode([int(i)]), float(p)) for p, i in zip(top.values, top.indices, strict=True)
            ],
            position=len(ids) - 1 - skip,
            attention=maps,
            context=seen,
        )


PUNCT = "，。？！；"


def regular(line: str) -> bool:
    """A line of regular verse, as 99.7% of the corpus's lines are: a couplet of two clauses of 5 or 7
    characters, of the same length, each closed by ，。？！；."""
    clauses, clause = [], 0
    for ch in line.strip():
        clause += 1
        if ch in PUNCT:
            clauses.append(clause - 1)
            clause = 0
    return clause == 0 and len(clauses) == 2 and clauses[0] == clauses[1] in (5, 7)


def figures(text: str, probs: list[float]) -> dict:
    """What a written poem is made of: characters written, lines, lines of regular verse, and the mean
    probability of the characters chosen."""
    lines = [line for line in text.split("\n") if line.strip()]
    mean = sum(probs) / len(probs) if probs else 0.0
    return {
        "characters": len(probs),
        "lines": len(lines),
        "regular_lines": sum(regular(x) for x in lines),
        "mean_prob": round(mean, 4),
    }
