"""LaTeX -> Unicode for the terminal, on the formulas the two seed lessons actually use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tutor.content.latex import LatexError, latex_to_unicode
from tutor.content.markdown import convert_math, convert_prose, split_body
from tutor.content.prose import parse_language_file
from tutor.content.schema import ExperimentRef

SEED_FORMULAS = [
    (
        r"\text{MultiHead}(Q,K,V) = \text{Concat}(\text{head}_1,\dots,\text{head}_h)W^O",
        "MultiHead(Q,K,V) = Concat(head₁,…,headₕ)Wᴼ",
    ),
    (r"\text{head}_i = \text{Attention}(QW_i^Q, KW_i^K, VW_i^V)", "headᵢ = Attention(QWᵢ^Q, KWᵢᴷ, VWᵢⱽ)"),
    (
        r"\text{Attention}(PX, PK, PV) = P\,\text{Attention}(X,K,V)",
        "Attention(PX, PK, PV) = P Attention(X,K,V)",
    ),
    (r"q = (q_0, q_1) \leftrightarrow q_0 + i q_1", "q = (q₀, q₁) ↔ q₀ + i q₁"),
    (
        r"q' = R_m q = \begin{pmatrix} \cos m\theta & -\sin m\theta \\ \sin m\theta & \cos m\theta \end{pmatrix}"
        r"\begin{pmatrix} q_0 \\ q_1 \end{pmatrix}",
        "q' = Rₘ q = [cos mθ, −sin mθ; sin mθ, cos mθ][q₀; q₁]",
    ),
    (
        r"\boxed{\langle R_m q, R_n k\rangle = \langle q, R_{n-m}k\rangle = f(q, k, n - m)}",
        "⟨Rₘ q, Rₙ k⟩ = ⟨q, R_(n−m)k⟩ = f(q, k, n − m)",
    ),
    (r"\theta_i = \text{base}^{-2i/d}, \qquad i = 0,1,\dots,d/2-1", "θᵢ = base^(−2i/d), i = 0,1,…,d/2−1"),
    (
        r"\text{Attention} = \text{softmax}\left(\frac{QK^\top}{\sqrt{d}} + \text{bias}\right)",
        "Attention = softmax(QKᵀ/√d + bias)",
    ),
    (
        r"\text{bias}_{ij} = \begin{cases} 0 & j \le i \\ -\alpha(i - j) & j > i \end{cases}",
        "bias_ij = { j ≤ i: 0; j > i: −α(i − j) }",
    ),
    (r"3 \times d_{model} \times d_{model}", "3 × d_model × d_model"),
    (r"4 d_{model}^2", "4 d_model²"),
    (r"d_k = d_{model}/h", "dₖ = d_model/h"),
    (r"d_{model} = h \times d_k", "d_model = h × dₖ"),
    (r"QK^\top", "QKᵀ"),
    (r"R^\top R = I", "Rᵀ R = I"),
    (r"p_i^\top p_j", "pᵢᵀ pⱼ"),
    (r"[1/2^1, 1/2^2, \dots, 1/2^8]", "[1/2¹, 1/2², …, 1/2⁸]"),
    (r"\frac{m}{L_{\text{target}}/L_{\text{train}}}", "m/(L_target/L_train)"),
    (r"m \to m \cdot \frac{L_{\text{train}}}{L_{\text{target}}}", "m → m · L_train/L_target"),
    (r"\sqrt{d_k}", "√dₖ"),
    (r"\frac{QK^\top}{\sqrt{d_k}}", "QKᵀ/√dₖ"),
    (r"q = (W_Q x_i + p_i)", "q = (W_Q xᵢ + pᵢ)"),
    (r"\langle R_m q, R_n k\rangle = f(q,k,n-m)", "⟨Rₘ q, Rₙ k⟩ = f(q,k,n−m)"),
    (r"10^6", "10⁶"),
    (r"base=10000", "base=10000"),
    (r"m\theta", "mθ"),
    (r"q\cdot k", "q·k"),
]


@pytest.mark.parametrize(("latex", "unicode"), SEED_FORMULAS)
def test_seed_formula_becomes_readable_unicode(latex: str, unicode: str):
    assert latex_to_unicode(latex) == unicode


@pytest.mark.parametrize(
    ("latex", "unicode"),
    [
        (r"\text{non-causal} a-b", "non-causal a−b"),  # a hyphen in \text stays a hyphen
        (r"\sum_{i=1}^{n} x_i", "∑_(i=1)ⁿ xᵢ"),
        (r"\log_2 x", "log₂ x"),
        (r"x^{-1}", "x⁻¹"),
        (r"\mathbb{R}^{d}", "ℝᵈ"),
        (r"\hat{y}", "ŷ"),
        (r"\sqrt[3]{x+1}", "∛(x+1)"),
        (r"\operatorname{softmax}(x)", "softmax(x)"),
        (r"\frac12", "1/2"),
        (r"\left. x \right|_0", "x |₀"),
        (r"\frac{a+b}{c}", "(a+b)/c"),
    ],
)
def test_more_latex_constructs(latex: str, unicode: str):
    assert latex_to_unicode(latex) == unicode


@pytest.mark.parametrize(
    ("latex", "message"),
    [
        (r"\foo x", r"unknown LaTeX command \foo"),
        (r"\frac{a}{b", "cannot parse"),
        (r"x^", "nothing to apply to"),
        (r"\begin{weird}x\end{weird}", "unknown LaTeX environment 'weird'"),
    ],
)
def test_what_cannot_be_shown_is_an_error_not_raw_latex(latex: str, message: str):
    with pytest.raises(LatexError, match=re.escape(message)):
        latex_to_unicode(latex)


@given(st.sampled_from([f for f, _ in SEED_FORMULAS]), st.sampled_from([f for f, _ in SEED_FORMULAS]))
def test_no_latex_syntax_survives_conversion(a: str, b: str):
    text, issues = convert_math(f"Erst ${a}$, dann $${b}$$ 然后。", markdown=False)
    assert not issues
    assert not re.search(r"\\[A-Za-z]|\$|\{[^ ]|\^\{|_\{", text), text


def test_inline_and_display_math_in_prose_are_converted():
    text, issues = convert_math(
        "Scores: $\\frac{QK^\\top}{\\sqrt{d_k}}$.\n\n$$\\theta_i = \\text{base}^{-2i/d}$$\n"
    )
    assert not issues
    assert text == "Scores: QKᵀ/√dₖ.\n\nθᵢ = base^(−2i/d)\n"


def test_markdown_specials_in_a_formula_are_escaped_and_star_becomes_an_operator():
    text, _ = convert_math("$d_{model} * h$ and $|x| < y$")
    assert text == r"d\_model ∗ h and \|x\| \< y"
    plain, _ = convert_math("$d_{model} * h$", markdown=False)
    assert plain == "d_model ∗ h"


def test_code_spans_fences_and_escaped_dollars_are_left_alone():
    source = "Price \\$5, `x = $a$`, ``b`$c$`` and $a^2$.\n\n```python\n# $\\frac{1}{2}$\nx = 1  # $y$\n```\n"
    text, issues = convert_prose(source)
    assert not issues
    assert (
        text == "Price \\$5, `x = $a$`, ``b`$c$`` and a².\n\n```python\n# $\\frac{1}{2}$\nx = 1  # $y$\n```"
    )


def test_a_dollar_followed_by_a_space_is_a_dollar_sign():
    assert convert_math("costs $ 5 and $ 6", markdown=False) == ("costs $ 5 and $ 6", [])


def test_a_currency_dollar_before_math_does_not_pair_with_it():
    # the hand-written scanner read "5, then $x" as the formula: dollarmath's first `$` after an
    # opening one is its only closing candidate, and " $x" has a space before it
    assert convert_math("pay $5, then $x$ is math", markdown=False) == ("pay $5, then x is math", [])


def test_two_currency_dollars_are_no_math_and_no_problem():
    assert convert_math("It costs $5 and $6.", markdown=False) == ("It costs $5 and $6.", [])
    assert convert_math("It costs $5 and $6.") == ("It costs $5 and $6.", [])
    assert convert_math("5$ and 6$", markdown=False) == ("5$ and 6$", [])


@pytest.mark.parametrize("text", ["$x $", "$ x$", "$x$5", "2$x$", "$$"])
def test_dollarmath_rules_decide_what_is_math(text: str):
    # no space just inside a single `$`, no digit just outside; `$$` alone is left as written
    assert convert_math(text, markdown=False)[0] == text


def test_a_lone_dollar_sign_with_no_dollar_after_it_in_its_paragraph_is_reported():
    text = "Costs $5, and `inline $code$` is code.\n\nNext $x$ paragraph."
    converted, issues = convert_math(text, markdown=False)
    assert converted == "Costs $5, and `inline $code$` is code.\n\nNext x paragraph."
    assert [(i.line, i.message.key) for i in issues] == [(0, "problem.math.unclosed")]


def test_math_does_not_cross_a_paragraph_a_list_item_or_a_heading():
    text = "a $x\n\nb$ c\n- d $y\n- e$ f\n## g $z\nh$ i"
    converted, issues = convert_math(text, markdown=False)
    assert converted == text
    assert [(i.line, i.message.key) for i in issues] == [(n, "problem.math.unclosed") for n in (0, 3, 5)]


def test_math_in_tables_lists_quotes_and_links_is_converted():
    text = "| a | $x^2$ |\n|---|---|\n| $y_1$ | b |\n\n- item $\\alpha$\n> quote $\\beta$\n\n[$\\gamma$](u)"
    converted, issues = convert_math(text, markdown=False)
    assert not issues
    assert converted == "| a | x² |\n|---|---|\n| y₁ | b |\n\n- item α\n> quote β\n\n[γ](u)"


def test_fenced_code_in_a_text_is_left_as_written():
    text = "See:\n```python\nx = '$a$'  # \\frac\n\ny = 1\n```\nand $b$."
    assert convert_math(text, markdown=False) == (text.replace("$b$", "b"), [])


def test_an_escaped_dollar_is_a_dollar_sign_and_an_escaped_backslash_no_latex():
    assert convert_math(r"\$5 and \$x\$", markdown=False) == ("$5 and $x$", [])
    assert convert_math(r"\$5 and \$x\$") == (r"\$5 and \$x\$", [])
    assert convert_math(r"a \\frac b", markdown=False) == (r"a \\frac b", [])


FENCES = [  # (text, [(kind, first line, line count, info, closed)])
    (
        "a\n```py\nx\n```\nb",
        [("prose", 0, 1, "", True), ("fence", 1, 3, "py", True), ("prose", 4, 1, "", True)],
    ),
    ("~~~~ experiment e\nk = 1\n~~~\n~~~~~", [("fence", 0, 4, "experiment e", True)]),
    ("```\nx\n````  \n", [("fence", 0, 3, "", True)]),
    ("```\nx\n``` y\n\n", [("fence", 0, 4, "", False)]),
    ("    ```\n    x", [("prose", 0, 2, "", True)]),  # four spaces in: prose (there is no indented code)
    ("- item\n  ```\n  x\n  ```", [("prose", 0, 1, "", True), ("fence", 1, 3, "", True)]),
    ("> ```\n> x", [("prose", 0, 2, "", True)]),  # in a quote: prose, as before
]


@pytest.mark.parametrize(("text", "want"), FENCES)
def test_fences_are_found_by_commonmark_rules(text: str, want: list):
    from tutor.content.markdown import blocks

    assert [(b.kind, b.start, len(b.lines), b.info, b.closed) for b in blocks(text)] == want


def test_unclosed_math_and_raw_latex_in_prose_are_reported_with_their_line():
    _, issues = convert_math("line one\nhas $x without end\n\nand \\frac{1}{2} here")
    assert [(i.line, str(i.message).split(" (")[0]) for i in issues] == [
        (1, "unclosed $ math"),
        (3, "raw LaTeX \\frac outside $...$"),
    ]


def test_chinese_text_around_math_is_kept():
    text, _ = convert_math("位置 $m$ 对应角度 $m\\theta$。", markdown=False)
    assert text == "位置 m 对应角度 mθ。"


BODY = """Before the run.

```experiment permutation
layers = [1, 2]
text = "白日依山尽"
```

Between.

```experiment shuffle
```

```python
x = 1
```
After."""


def test_split_body_gives_text_and_experiments_in_order():
    parts = split_body(BODY)
    assert parts == [
        "Before the run.",
        ExperimentRef(name="permutation", params={"layers": [1, 2], "text": "白日依山尽"}),
        "Between.",
        ExperimentRef(name="shuffle", params={}),
        "```python\nx = 1\n```\nAfter.",
    ]


_PIECES = list("$\\{}^_ab`~\n #&'-") + [
    "frac",
    "sqrt",
    "text",
    "begin{cases}",
    "end{cases}",
    "left(",
    "right",
]
_PIECES += ["```", "## T {#x}\n", "```experiment a\n", "\\\\"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_any_text_gives_problems_never_exceptions(text: str):
    convert_prose(text)
    convert_math(text, markdown=False)
    split_body(text)
    parse_language_file(text, Path("x.md"))


def test_line_breaks_between_chinese_characters_are_dropped_not_turned_into_spaces():
    from tutor.content.markdown import convert_prose, join_cjk_lines

    assert join_cjk_lines("一模\n一样。\n下一句") == "一模一样。下一句"
    kept = "段落\n\n新段\n- 列表\n| 表 |\nvalue 值\nnext"
    assert join_cjk_lines(kept) == kept  # paragraphs, lists, tables and Latin neighbours keep their breaks
    prose, _ = convert_prose("一模\n一样\n\n```python\nx = '一\n样'\n```\n")
    assert "一模一样" in prose and "'一\n样'" in prose  # code is left as written


def test_a_line_break_beside_a_curly_quote_in_chinese_is_dropped_and_in_english_kept():
    from tutor.content.markdown import join_cjk_lines

    assert join_cjk_lines("对\n“白日依山尽”和\n“山依日白尽”") == "对“白日依山尽”和“山依日白尽”"
    assert join_cjk_lines("叫做“位置”\n的东西") == "叫做“位置”的东西"
    assert join_cjk_lines("- 横跨多个字去切，\n  会把") == "- 横跨多个字去切，会把"  # a list item's next line
    kept = "the “one”\n“two” and\n‘three’"
    assert join_cjk_lines(kept) == kept


def test_shipped_chinese_texts_have_no_soft_breaks_between_characters():
    import re

    from tutor.content.loader import load_course
    from tutor.settings import shipped_lessons_dir

    soft = re.compile(r"[\u4e00-\u9fff，。：；！？、“”‘’]\n[ \t]*[\u4e00-\u9fff，。：；！？、“”‘’]")
    course = load_course(shipped_lessons_dir())
    texts = [s.body["zh"] for lesson in course.lessons for s in lesson.sections]
    texts += [q.explanation["zh"] for lesson in course.lessons for q in lesson.quiz]
    texts = [re.sub(r"```.*?```", "", t, flags=re.S) for t in texts]
    assert texts and not [t for t in texts if soft.search(t)]


def _chinese_texts(node) -> list[str]:
    """Every Chinese text of a loaded lesson: section bodies, quiz and exercise texts."""
    from pydantic import BaseModel

    if isinstance(node, BaseModel):
        return [t for name in type(node).model_fields for t in _chinese_texts(getattr(node, name))]
    if isinstance(node, dict):
        return [node["zh"]] if isinstance(node.get("zh"), str) else []
    if isinstance(node, list | tuple):
        return [t for item in node for t in _chinese_texts(item)]
    return []


def test_shipped_chinese_texts_emphasise_with_bold_never_italics():
    """Many terminals draw no italics for Chinese characters: `*强调*` would not show at all."""
    from markdown_it import MarkdownIt

    from tutor.content.loader import load_course
    from tutor.settings import shipped_lessons_dir

    parser = MarkdownIt().enable("table")
    texts = [t for lesson in load_course(shipped_lessons_dir()).lessons for t in _chinese_texts(lesson)]
    italic = [
        t[:60]
        for t in texts
        for token in parser.parse(t)
        for c in token.children or []
        if c.type == "em_open"
    ]
    assert len(texts) > 100 and italic == []
