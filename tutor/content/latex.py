"""One LaTeX formula -> readable Unicode for a terminal: `\\frac{QK^\\top}{\\sqrt{d_k}}` -> `QKᵀ/√dₖ`.

pylatexenc parses the formula (its walker knows every macro's arguments); the text is produced
here rather than by `LatexNodes2Text`, because that one loses grouping (`R_{n-m}k` -> `R_n-mk`,
`\\frac{m}{a/b}` -> `m/a/b`) and spacing (`\\le i` -> `≤i`). Its symbol table is reused.

Rules (the lesson tests pin them):
- a one-character sub/superscript with a Unicode form becomes it (θᵢ, dₖ, x², Kᵀ); digits and
  signs too (10⁻³); a longer word stays readable as `d_model`; anything else is bracketed: base^(−2i/d).
- `\\frac{a}{b}` -> a/b, bracketing either side that is not a single term; `\\sqrt{x}` -> √x or √(x + y).
- matrices -> [a, b; c, d]; cases -> { condition: value; ... }.
- an unknown command is an error (`LatexError`), never passed through raw.
"""

from __future__ import annotations

import re
import unicodedata

from pylatexenc import latex2text, latexwalker, macrospec

from tutor.errors import TutorError

SUPERSCRIPT = dict(
    zip(
        "0123456789+-−=()niT⊤abcdefghijklmoprstuvwxyzABDEGHIJKLMNOPRUVWαβγδεθφχ",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱᵀᵀᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵁⱽᵂᵅᵝᵞᵟᵋᶿᵠᵡ",
        strict=True,
    )
)
SUBSCRIPT = dict(
    zip(
        "0123456789+-−=()aehijklmnoprstuvxβγρφχ",
        "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ",
        strict=True,
    )
)
_NUMBERISH = re.compile(r"^[−+]?[0-9]+$")
_WORD = re.compile(r"^[\w′']+$")  # letters/digits (any script), e.g. "model", "train", "ij"
_SIMPLE = re.compile(r"^[\w′'⊤ᵀ⁰¹²³⁴⁵⁶⁷⁸⁹⁻ᵢⱼₖₘₙ₀-₉√.]+$|^\(.*\)$|^√\(.*\)$")

# Macros that only change the font or are decoration: keep their argument's text.
_KEEP_ARG = {
    "mathrm",
    "mathit",
    "mathbf",
    "mathsf",
    "mathtt",
    "mathcal",
    "boldsymbol",
    "bm",
    "textbf",
    "textit",
    "textrm",
    "texttt",
    "emph",
    "boxed",
    "operatorname",
    "mathop",
    "underline",
    "displaystyle",
    "textstyle",
}
_TEXT = {"text", "textrm", "textnormal", "mbox", "textit", "textbf", "texttt", "emph"}
_NOTHING = {
    "left",
    "right",
    "big",
    "Big",
    "bigg",
    "Bigg",
    "bigl",
    "bigr",
    "Bigl",
    "Bigr",
    "limits",
    "nolimits",
    "!",
}
_ACCENT = {
    "hat": "\u0302",
    "bar": "\u0304",
    "overline": "\u0304",
    "tilde": "\u0303",
    "vec": "\u20d7",
    "dot": "\u0307",
}
_EXTRA_SYMBOLS = {
    "ne": "≠",
    "|": "‖",
    "neg": "¬",
    "land": "∧",
    "lor": "∨",
    "lvert": "|",
    "rvert": "|",
    "lVert": "‖",
    "rVert": "‖",
    "colon": ":",
    "dotsc": "…",
    "dotsb": "…",
    "dotsm": "⋯",
    "argmax": "argmax",
    "argmin": "argmin",
    "softmax": "softmax",
    "ldots": "…",
    "prime": "′",
}
_SPACES = {
    ",": " ",
    ";": " ",
    ":": " ",
    " ": " ",
    "quad": "  ",
    "qquad": "  ",
    "enspace": " ",
    "thinspace": " ",
}
_MATRICES = {
    "matrix": "[]",
    "pmatrix": "[]",
    "bmatrix": "[]",
    "Bmatrix": "{}",
    "vmatrix": "||",
    "Vmatrix": "‖‖",
}
_ROWS = {
    "aligned",
    "align",
    "align*",
    "split",
    "gathered",
    "gather",
    "gather*",
    "array",
    "equation",
    "equation*",
}
_BINARY = set("·×±∓∗∘⊗⊙⊕≤≥≠≈≡∼∝→←↔⇒⇔↦∈∉⊂⊆∪∩÷")
_OPENERS = {"⟨", "⌊", "⌈", "{", "[", "("}
_BLACKBOARD = dict(zip("RNZQCE", "ℝℕℤℚℂ𝔼", strict=True))


class LatexError(TutorError, ValueError):
    """The formula cannot be shown readably; the message says which command or brace is at fault."""


def _walker_context() -> macrospec.LatexContextDb:
    db = latexwalker.get_default_latex_context_db()
    specs = [macrospec.MacroSpec(name, "{") for name in ("boxed", "operatorname", "mathop", "bm", "overline")]
    db.add_context_category("tutor", macros=specs, prepend=True)
    return db


_WALKER_DB = _walker_context()
_TEXT_DB = latex2text.get_default_latex_context_db()


def _symbol(name: str) -> str | None:
    if name in _EXTRA_SYMBOLS:
        return _EXTRA_SYMBOLS[name]
    spec = _TEXT_DB.get_macro_spec(name)
    repl = getattr(spec, "simplify_repl", None) if spec is not None else None
    if isinstance(repl, str) and "%" not in repl:
        return repl
    return None


def latex_to_unicode(source: str) -> str:
    """Convert the inside of one `$...$` / `$$...$$` formula; raises LatexError on what it cannot show."""
    walker = latexwalker.LatexWalker(source, latex_context=_WALKER_DB, tolerant_parsing=False)
    try:
        nodes, _, _ = walker.get_latex_nodes()
    except latexwalker.LatexWalkerError as err:
        raise LatexError("problem.math.parse", source=source, detail=str(err).splitlines()[0]) from None
    try:
        return _tidy(_Converter().nodes(nodes))
    except LatexError:
        raise
    # an odd construct the rules above did not foresee: say so, never crash the loader
    except (IndexError, ValueError, AttributeError, TypeError) as err:
        raise LatexError("problem.math.cannot_show_formula", source=source, kind=type(err).__name__) from None


def _tidy(text: str) -> str:
    text = unicodedata.normalize("NFC", re.sub(r"[ \t\r\n]+", " ", text).strip())  # ŷ as one character
    return re.sub(r"\( | \)", lambda m: m.group(0).strip(), text)


def _script(text: str, table: dict[str, str], mark: str) -> str:
    text = text.strip()
    if text in ("⊤", "T") and mark == "^":
        return "ᵀ"
    if (len(text) == 1 or _NUMBERISH.match(text)) and all(c in table for c in text):
        return "".join(table[c] for c in text)
    if _WORD.match(text):
        return mark + text
    return f"{mark}({text})"


def _bracket(text: str) -> str:
    text = text.strip()
    return text if _SIMPLE.match(text) else f"({text})"


class _Converter:
    def __init__(self) -> None:
        self.in_text = 0  # inside \text{...}: a hyphen is a hyphen, not a minus

    def nodes(self, nodes: list | None) -> str:
        out: list[str] = []
        # chars nodes as plain strings, so `\left.` can drop its dot
        items = [n.chars if isinstance(n, latexwalker.LatexCharsNode) else n for n in nodes or []]
        i = 0
        while i < len(items):
            node = items[i]
            i += 1
            if isinstance(node, str):
                chars = node
                j = 0
                while j < len(chars):
                    c = chars[j]
                    j += 1
                    if c in "^_" and not self.in_text:
                        rest = chars[j:].lstrip()
                        if rest:  # argument is the next character of this run
                            arg, j = self.chars(rest[0]), len(chars) - len(rest) + 1
                        elif i < len(items):  # argument is the next node: {group} or \macro
                            arg, i = self.node(items[i]), i + 1
                        else:
                            raise LatexError("problem.math.dangling", mark=c)
                        spaced = " " if arg != arg.rstrip() else ""  # `p_i^\top p_j`: keep the gap
                        out.append(_script(arg, SUPERSCRIPT if c == "^" else SUBSCRIPT, c) + spaced)
                    else:
                        out.append(self.chars(c))
            elif isinstance(node, latexwalker.LatexMacroNode) and node.macroname in ("left", "right"):
                nxt = items[i] if i < len(items) else None
                if isinstance(nxt, str) and nxt.startswith("."):
                    items[i] = nxt[1:]  # `\left.` is an invisible delimiter
            else:
                text = self.node(node)
                # `q\cdot k` is q·k: a gap after an operator only if there is one before it
                if text.rstrip() in _BINARY and text.endswith(" ") and out and not out[-1].endswith(" "):
                    text = text.rstrip()
                out.append(text)
        return "".join(out)

    def chars(self, text: str) -> str:
        return text if self.in_text else text.replace("-", "−")

    def node(self, node) -> str:
        if isinstance(node, latexwalker.LatexCharsNode):
            return self.nodes([node])
        if isinstance(node, latexwalker.LatexGroupNode):
            return self.nodes(node.nodelist)
        if isinstance(node, latexwalker.LatexCommentNode):
            return ""
        if isinstance(node, latexwalker.LatexSpecialsNode):
            return " " if node.specials_chars in ("&", "~") else self.chars(node.specials_chars)
        if isinstance(node, latexwalker.LatexMacroNode):
            return self.macro(node)
        if isinstance(node, latexwalker.LatexEnvironmentNode):
            return self.environment(node)
        if isinstance(node, latexwalker.LatexMathNode):
            return self.nodes(node.nodelist)
        raise LatexError("problem.math.cannot_show", what=repr(node.latex_verbatim()))

    def args(self, node) -> list:
        return [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]

    def arg_text(self, arg) -> str:
        return self.node(arg) if arg is not None else ""

    def macro(self, node) -> str:
        name, post = node.macroname, node.macro_post_space
        args = self.args(node)
        if name in _NOTHING:
            return ""
        if name in _SPACES:
            return _SPACES[name]
        if name in _TEXT or name in _KEEP_ARG:
            self.in_text += name in _TEXT
            try:
                return "".join(self.arg_text(a) for a in args) + post
            finally:
                self.in_text -= name in _TEXT
        if name in ("frac", "dfrac", "tfrac"):
            num, den = (self.arg_text(a) for a in args[-2:])
            return f"{_bracket(num)}/{_bracket(den)}"
        if name == "sqrt":
            inner = self.arg_text(args[-1])
            root = self.arg_text(args[0]).strip() if len(args) == 2 else ""
            sign = {"": "√", "2": "√", "3": "∛", "4": "∜"}.get(root) or _script(root, SUPERSCRIPT, "^") + "√"
            return sign + _bracket(inner)
        if name in _ACCENT:
            inner = self.arg_text(args[-1]).strip()
            return (inner + _ACCENT[name]) if len(inner) == 1 else inner
        if name == "mathbb":
            inner = self.arg_text(args[-1]).strip()
            return "".join(_BLACKBOARD.get(c, c) for c in inner)
        if name == "\\":
            return "; "
        symbol = _symbol(name)
        if symbol is None:
            raise LatexError("problem.math.command", name=f"\\{name}")
        # the space after a command name only ends the name; keep it as a gap except after an opener
        return symbol + ("" if symbol in _OPENERS else post)

    def environment(self, node) -> str:
        name = node.environmentname
        rows = self.rows(node.nodelist)
        if name in _MATRICES:
            left, right = tuple(_MATRICES[name])  # a pair of characters
            return left + "; ".join(", ".join(cells) for cells in rows) + right
        if name == "cases":
            parts = []
            for cells in rows:
                value, cond = (cells + [""])[:2]
                parts.append(f"{cond}: {value}" if cond else value)
            return "{ " + "; ".join(parts) + " }"
        if name in _ROWS:
            return "; ".join(" ".join(cells) for cells in rows)
        raise LatexError("problem.math.environment", name=name)

    def rows(self, nodes) -> list[list[str]]:
        """Split an environment body at `\\\\` (rows) and `&` (cells); empty trailing rows dropped."""
        rows: list[list[str]] = [[]]
        cell: list = []
        for n in nodes or []:
            if isinstance(n, latexwalker.LatexMacroNode) and n.macroname == "\\":
                rows[-1].append(_tidy(self.nodes(cell)))
                rows.append([])
                cell = []
            elif isinstance(n, latexwalker.LatexSpecialsNode) and n.specials_chars == "&":
                rows[-1].append(_tidy(self.nodes(cell)))
                cell = []
            else:
                cell.append(n)
        rows[-1].append(_tidy(self.nodes(cell)))
        return [r for r in rows if any(r)]
