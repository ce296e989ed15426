"""English words on a German or Chinese screen: what the walk tests look for.

A word is English when the English side of the course writes it (its lessons, quizzes, exercises and
the catalogue) and it is not a name, not code the course shows, and not a word the other language writes
too: German shares the Latin letters and some words with English ("Name", "Test", "Token"), listed
below; Chinese keeps a few terms in Latin letters.
"""

from __future__ import annotations

import html
import re
import tomllib
from functools import cache
from pathlib import Path

from tutor.texts import catalogue

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "tutor" / "lessons"

# names (people, models, corpora, tools) and formats every language writes the same, lower case
NAMES = set(
    "rope alibi yarn pytorch torch landlock tang python textual unicode bert bloom chen clark deepseek haviv "
    "lewis llama mistral michel peng qwen roformer smith wikitext neox pile hugging face cuda gpus json toml "
    "csv fifo valueerror gptconfig nopos embd freq proj lang eval params nats autograd gpts llms press meta "
    "aware dynamic english canvas moodle gradescope exercism".split()
)
# the English names the acronyms stand for, written out beside them in every language
EXPANSIONS = ("Rotary Position Embedding", "Attention with Linear Biases")
# words German writes too (the same letters, a German word or a term German uses as it is)
GERMAN_TOO = set(
    "absolute addition also argument bias biases bits bytes blind block blocks code dimension editor enter "
    "exponent export extrapolation extreme fall falls fast feedback form format gradient hardware index "
    "information inverse isolation jobs kernel kernels layout link links live matrix minus moment name norm "
    "operation original orthogonal paper parallel parameter partner pause plus position problem "
    "proportional rate redundant relative reset rest rotation sandbox score scores seed seeds shard signal "
    "stand start still student tensor terminal test text threads timeout token tokens tokenizer training "
    "transformer trick tutor verse version will logit logits softmax batch checkpoint dropout embedding "
    "embeddings heatmap heatmaps quiz experiment experiments details budget lies explosion positions overfitting linear".split()
)
# terms the Chinese lessons keep in English letters
ZH_TERMS = {"softmax", "logit", "logits", "query", "token", "tokens", "batch", "checkpoint", "tensor"}


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _lang_strings(value, lang: str) -> list[str]:
    """The `lang` texts of a lesson data file: tables keyed en/de/zh give their `lang` entry."""
    if isinstance(value, dict):
        if lang in value and set(value) <= {"en", "de", "zh"}:
            return _strings(value[lang])
        return [s for v in value.values() for s in _lang_strings(v, lang)]
    if isinstance(value, list):
        return [s for v in value for s in _lang_strings(v, lang)]
    return []


@cache
def sources(lang: str) -> str:
    """Everything the course writes in `lang`: lessons, quizzes, exercise texts, the catalogue."""
    parts = list(catalogue(lang).values())
    for folder in sorted(p for p in LESSONS.iterdir() if p.is_dir()):
        md = folder / f"{lang}.md"
        if md.exists():
            parts.append(md.read_text(encoding="utf-8"))
        for data in [folder / "quiz.toml", *folder.glob("exercises/*/exercise.toml")]:
            if data.exists():
                parts += _lang_strings(tomllib.loads(data.read_text(encoding="utf-8")), lang)
    return "\n".join(parts)


def _code_free(text: str) -> str:
    """`text` without code: inline code, commands, names called or reached through a dot, identifiers."""
    text = re.sub(r"`[^`]*`|\{[^}]*\}", " ", text)
    # a quoted title, or (in Chinese) a term's English original in brackets: words not in CJK script
    text = re.sub(r"[„“\"«»「《（]([^\u3000-\u9fff„“”\"«»「」《》（）]{1,200}?)[“”\"«»」》）]", " ", text)
    text = re.sub(r"python -m tutor[\w .=-]*|[A-Za-z_][\w.]*\(|\.\w+|\w+=\S*", " ", text)
    return text


def words(text: str) -> set[str]:
    """Whole words of 4+ Latin letters (n_embd, float32, d_k and Köpfe are not English words)."""
    for name in EXPANSIONS:
        text = text.replace(name, " ")
    # a German quotation cut by the screen's edge: its closing mark with no opening one, or the reverse
    text = re.sub(r"^[^„“\u3000-\u9fff]{0,200}?“", " ", text)
    text = re.sub(r"„[^“\u3000-\u9fff]{0,200}$", " ", text)
    return {w for w in re.findall(r"\w+", _code_free(text)) if re.fullmatch(r"[A-Za-z]{4,}", w)}


@cache
def _vocabulary(lang: str) -> frozenset[str]:
    return frozenset(w.lower() for w in re.findall(r"[A-Za-zÄÖÜäöüß]+", _code_free(sources(lang))))


@cache
def code_words(lang: str) -> frozenset[str]:
    """Words of the code the course shows in `lang` (inline code, code blocks): the screen shows
    them without their backticks. Case kept: `learned` is code, "Learned" in a table is a word."""
    text = sources(lang)
    code = re.findall(r"```.*?```|`[^`]*`", text, flags=re.S)
    code += re.findall(r"^(?: {4}|\t).*$", text, flags=re.M)  # indented code
    return frozenset(w for chunk in code for w in re.findall(r"[A-Za-z]+", chunk))


@cache
def glossary_words(lang: str) -> frozenset[str]:
    """The words `lang`'s glossary fixes for its terms (tutor/lessons/glossary.toml `use`), lower case:
    German and Chinese keep some in Latin letters (Attention, Query, softmax)."""
    terms = tomllib.loads((LESSONS / "glossary.toml").read_text(encoding="utf-8"))
    use = " ".join(t[lang]["use"] for t in terms.values() if isinstance(t, dict) and lang in t)
    return frozenset(w.lower() for w in re.findall(r"[A-Za-z]+", use))


def _singulars(word: str) -> set[str]:
    """What `word` is the plural of, if anything (Queries, Keys, Batches)."""
    if word.endswith("ies"):
        return {word[:-3] + "y"}
    return {word[:-1], word[:-2]} if word.endswith("s") else set()


def english_left(text: str, lang: str, allowed: set[str] = frozenset()) -> list[str]:
    """English words in `text`, a screen in `lang` ("de" or "zh"): words of the English side of the
    course that are not names, not code, and not words `lang` writes too."""
    english = _vocabulary("en")
    own = (
        (GERMAN_TOO if lang == "de" else ZH_TERMS)
        | NAMES
        | glossary_words(lang)
        | {w.lower() for w in allowed}
    )
    code = code_words(lang)
    return sorted(
        w
        for w in words(text)
        if w.lower() in english and w.lower() not in own and not _singulars(w.lower()) & own and w not in code
    )


def screen_text(app) -> str:
    """The text on `app`'s screen now, line by line, from Textual's own screenshot (SVG)."""
    return svg_text(app.export_screenshot())


def svg_text(svg: str) -> str:
    """The text of a Textual screenshot (SVG), line by line."""
    lines: dict[float, list[tuple[float, str]]] = {}
    for x, y, body in re.findall(
        r'<text class="terminal-[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', svg
    ):
        lines.setdefault(float(y), []).append((float(x), html.unescape(body).replace("\xa0", " ")))
    return "\n".join(" ".join(chunk for _, chunk in sorted(row)) for _, row in sorted(lines.items()))
