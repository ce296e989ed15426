"""One quiz sitting, one question at a time: prompt, answer box, feedback and explanation.

Used by the quiz screen (lesson and review-due sittings) and the exercise screen (predictions).
Choice questions take the choice numbers ("2" or "1, 3"); open questions take the learner's own
answer, then show the model answer and ask for a self-rating (1–4).
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Markdown, Static

from tutor.content.schema import MultipleChoice, OpenQuestion, SingleChoice, pick
from tutor.quiz.texts import say
from tutor.ui.bindings import localise
from tutor.ui.strings import t


def _md_escape(text: str) -> str:
    return text.replace("\n", "  \n")


class QuizPanel(Vertical):
    BINDINGS = [Binding("ctrl+g", "hint", "Hint", id="hint")]

    def __init__(self, session, lang: str, on_finished: Callable[[], None] | None = None, **kw) -> None:
        super().__init__(classes="quiz", **kw)
        self.session = session
        self.lang = lang
        self.on_finished = on_finished
        self.state = "asking"  # asking | rating | feedback | done
        self.used_hint = False
        self.note: str | None = None
        self.number = 0
        self.last_feedback = None

    def compose(self) -> ComposeResult:
        yield Static(classes="q-counter")
        yield Markdown(classes="q-prompt")
        yield Static(classes="q-help")
        yield Input(classes="q-answer")
        yield Static(classes="q-error")
        yield Markdown(classes="q-feedback")

    def on_mount(self) -> None:
        localise(self, self.lang)  # the app relabels screens; this widget's own key is ours to do
        self._next()

    # --- showing ---------------------------------------------------------------------------

    def _next(self) -> None:
        self.used_hint, self.note = False, None
        self.query_one(".q-feedback", Markdown).update("")
        self._error("")
        item = self.session.next_question()
        if item is None:
            self._done()
            return
        self.number += 1
        self.state = "asking"
        self._show_question()
        box = self.query_one(".q-answer", Input)
        box.disabled = False
        box.value = ""
        box.focus()

    def _show_question(self) -> None:
        item = self.session.current
        if item is None:
            return
        q, lang = item.question, self.lang
        again = self.session.is_repeat(item)
        total = len(self.session.items)
        self.query_one(".q-counter", Static).update(
            f"[{t('quiz.again', lang)}]" if again else f"{min(self.number, total)}/{total}"
        )
        text = pick(q.prompt, lang)
        if isinstance(q, SingleChoice | MultipleChoice):
            text += "\n\n" + "\n".join(
                f"{i}. {_md_escape(pick(c.text, lang))}" for i, c in enumerate(q.choices, 1)
            )
        unit = getattr(q, "unit", None)
        if unit:
            text += f"\n\n*({pick(unit, lang)})*"
        self.query_one(".q-prompt", Markdown).update(text)
        if isinstance(q, SingleChoice | MultipleChoice):
            help_text = t("quiz.choices_help", lang)
        elif isinstance(q, OpenQuestion):
            help_text = t("quiz.open_help", lang)
        else:
            help_text = t("quiz.answer", lang)
        self.query_one(".q-help", Static).update(help_text)

    def _error(self, text: str) -> None:
        box = self.query_one(".q-error", Static)
        box.update(text)
        box.display = bool(text)

    def refresh_content(self, lang: str) -> None:
        self.lang = lang
        localise(self, lang)
        if self.state in ("asking", "rating"):
            self._show_question()
        elif self.state == "done":
            self._show_done()

    # --- answering -------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit(event.value)

    def submit(self, text: str) -> None:
        """The learner's answer (or Enter after feedback): the same path keys and tests take."""
        from tutor.quiz.check import AnswerError

        item = self.session.current
        if self.state == "feedback":
            self._next()
            return
        if self.state == "done" or item is None:
            return
        q = item.question
        if isinstance(q, OpenQuestion) and self.state == "asking":
            self.note = text.strip() or None
            self.state = "rating"
            self.query_one(".q-feedback", Markdown).update(
                f"**{t('quiz.model_answer', self.lang)}:** {pick(q.model_answer, self.lang)}"
            )
            self.query_one(".q-help", Static).update(t("quiz.rate", self.lang))
            self.query_one(".q-answer", Input).value = ""
            return
        try:
            if self.state == "rating":
                feedback = self.session.answer(text.strip(), note=self.note, used_hint=self.used_hint)
            else:
                feedback = self.session.answer(text, used_hint=self.used_hint)
        except AnswerError as err:
            self._error(err.text(self.lang))
            return
        except Exception as err:  # noqa: BLE001 - e.g. the store is busy: say so, keep the question
            self._error(f"{type(err).__name__}: {err}")
            return
        self.last_feedback = feedback
        self._error("")
        self.state = "feedback"
        self.query_one(".q-feedback", Markdown).update(self._feedback_text(feedback))
        self.query_one(".q-help", Static).update(t("quiz.next", self.lang))
        self.query_one(".q-answer", Input).value = ""

    def _feedback_text(self, fb) -> str:
        lang = self.lang
        lines = []
        if fb.correct is None:
            lines.append(f"**{t('quiz.rated', lang)}: {say(f'rating.{fb.rating}', lang)}**")  # "good", not 3
        else:
            lines.append(f"**{t('quiz.right' if fb.correct else 'quiz.wrong', lang)}**")
        if fb.understood and fb.correct is not None:
            lines.append(f"{t('quiz.understood', lang)}: `{fb.understood}`")
        if fb.correct is False and fb.expected:
            lines.append(f"{t('quiz.expected', lang)}: **{_md_escape(fb.expected)}**")
        for choice in fb.choices:
            if choice.picked and choice.why:
                lines.append(f"*{_md_escape(choice.text)}*: {_md_escape(choice.why)}")
        if fb.explanation:
            lines.append(fb.explanation)
        if fb.go_back:
            lines.append(t("quiz.go_back", lang, n=fb.misses_in_row, title=fb.go_back.title))
        elif fb.again_later:
            lines.append(f"*{t('quiz.again_later', lang)}*")
        return "\n\n".join(lines)

    def _done(self) -> None:
        self.state = "done"
        self._show_done()
        if self.on_finished is not None:
            self.on_finished()

    def _show_done(self) -> None:
        score = self.session.score()
        self.query_one(".q-counter", Static).update("")
        if score.total == 0:
            text = t("quiz.empty", self.lang)
        else:
            text = t("quiz.done", self.lang, correct=score.correct, total=score.total)
        self.query_one(".q-prompt", Markdown).update(f"**{text}**")
        self.query_one(".q-help", Static).update("")
        self.query_one(".q-answer", Input).disabled = True

    def action_hint(self) -> None:
        item = self.session.current
        hint = pick(item.question.hint, self.lang) if item is not None and item.question.hint else ""
        if not hint:
            self.notify(t("quiz.hint_none", self.lang))
            return
        self.used_hint = True
        self.query_one(".q-feedback", Markdown).update(f"💡 {hint}")
