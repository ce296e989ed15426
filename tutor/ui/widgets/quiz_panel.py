"""One quiz sitting, one question at a time: prompt, answer box, hint, feedback and explanation.

Used by the quiz screen (lesson and review sittings) and the exercise screen (predictions).
Choice questions take the choice numbers as shown ("2" or "1, 3"); open questions take the
learner's own answer, then show it beside the model answer and ask for a self-rating (1–4).
What is said about an answer comes from tutor.quiz.feedback, as in the plain-terminal quiz. Prompt
and feedback are tutor.ui.rich_markdown text: Chinese breaks between characters, as in the lesson.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from tutor.content.schema import MultipleChoice, OpenQuestion, SingleChoice
from tutor.i18n import pick
from tutor.quiz.check import answer_kind
from tutor.quiz.feedback import Line, counter, feedback_lines, open_answer_lines
from tutor.texts import say
from tutor.ui.rich_markdown import Prose
from tutor.ui.widgets.host import host_of
from tutor.wrap import reflow

if TYPE_CHECKING:
    from tutor.quiz.session import Feedback, Item, QuizSession

# How each tone of a feedback line is marked up (the terminal uses tutor.quiz.feedback.STYLE).
_MARKDOWN = {"right": "**{}**", "wrong": "**{}**", "rated": "**{}**", "warn": "**{}**", "quiet": "*{}*"}


def _md_escape(text: str) -> str:
    return text.replace("\n", "  \n")


def as_markdown(lines: list[Line]) -> str:
    return "\n\n".join(_MARKDOWN.get(line.tone, "{}").format(_md_escape(line.text)) for line in lines)


class QuizPanel(Vertical):
    BINDINGS = [Binding("ctrl+g", "hint", "Hint", id="hint")]

    class Answered(Message):
        """An answer is recorded and its feedback shown: what counts today's work has changed."""

    def __init__(
        self, session: QuizSession, lang: str, on_finished: Callable[[], None] | None = None, **kw
    ) -> None:
        super().__init__(classes="quiz", **kw)
        self.session = session
        self.lang = lang
        self.on_finished = on_finished
        self.state = "asking"  # asking | rating | feedback | done
        self.used_hint = False
        self.note: str | None = None
        self.item: Item | None = None  # the question on screen (it stays while its feedback is shown)
        self.last_feedback: Feedback | None = None
        self._answered: str | None = None  # what the learner answered (worded again on F5)
        self._refused = None  # the AnswerError on screen (worded again on F5)
        self._recording = False  # an answer is with the store's writer: Enter waits for its feedback
        self._again = False  # the question on screen came back after a miss (its counter says "again")

    def compose(self) -> ComposeResult:
        yield Static(classes="q-counter")
        yield Static(classes="q-prompt")
        yield Static(classes="q-help")
        yield Input(classes="q-answer")
        yield Static(classes="q-error")
        yield Static(classes="q-hint")
        yield Static(classes="q-feedback")

    def on_mount(self) -> None:
        self._next()

    # --- showing ---------------------------------------------------------------------------

    def _next(self) -> None:
        self.used_hint, self.note = False, None
        self.query_one(".q-feedback", Static).update("")
        self._error("")
        self.item = self.session.next_question()
        if self.item is None:
            self._done()
            return
        self._again = self.session.is_repeat(self.item)  # as asked: a redraw after the answer keeps it
        self.state = "asking"
        self._show_question()
        self._show_hint()
        box = self.query_one(".q-answer", Input)
        box.disabled = False
        box.value = ""
        box.focus()

    def _show_question(self) -> None:
        item = self.item
        if item is None:
            return
        q, lang = item.question, self.lang
        self.query_one(".q-counter", Static).update(Text(counter(self.session, item, lang, self._again)))
        text = _md_escape(reflow(pick(q.prompt, lang)))
        if isinstance(q, SingleChoice | MultipleChoice):
            text += "\n\n" + "\n".join(
                f"{i}. {_md_escape(reflow(pick(c.text, lang)))}" for i, c in enumerate(q.choices, 1)
            )
        unit = getattr(q, "unit", None)
        if unit:
            text += f"\n\n*({pick(unit, lang)})*"
        self.query_one(".q-prompt", Static).update(Prose(text))
        self.query_one(".q-help", Static).update(self._help_text())
        if self.state == "rating" and isinstance(q, OpenQuestion):
            self.query_one(".q-feedback", Static).update(
                Prose(as_markdown(open_answer_lines(q, self.note, lang)))
            )

    def _help_text(self) -> str:
        assert self.item is not None  # help is asked about the question on screen
        q = self.item.question
        if self.state == "rating":
            return say("quiz.rate", self.lang)
        return say(f"quiz.help.{answer_kind(q)}", self.lang)

    def _hint(self) -> str:
        item = self.item
        return pick(item.question.hint, self.lang) if item is not None and item.question.hint else ""

    def _show_hint(self) -> None:
        """The hint line (once asked for) and the hint key (only while there is a hint to show)."""
        box = self.query_one(".q-hint", Static)
        box.update(Text(say("quiz.hint", self.lang, hint=self._hint())) if self.used_hint else "")
        box.display = self.used_hint
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "hint":
            return self.state in ("asking", "rating") and bool(self._hint())
        return True

    def _error(self, error) -> None:
        """Why the input was refused: an AnswerError (kept, to be worded again on F5) or a text."""
        self._refused = error if hasattr(error, "in_lang") else None
        text = error.in_lang(self.lang) if self._refused is not None else str(error)
        box = self.query_one(".q-error", Static)
        box.update(Text(text))
        box.display = bool(text)

    def refresh_content(self, lang: str) -> None:
        """Everything on screen in `lang`: the question, the hint, why an input was refused, and
        the feedback with the explanation and the right answer."""
        self.lang = lang
        if self.state in ("asking", "rating", "feedback"):
            self._show_question()
            self._show_hint()
            if self._refused is not None:
                self._error(self._refused)
        if self.state == "feedback" and self.last_feedback is not None:
            self.last_feedback = self._feedback_in(lang)
            self._show_feedback()
        elif self.state == "done":
            self._show_done()

    def _feedback_in(self, lang: str) -> Feedback:
        """The feedback on screen with its texts in `lang`: the answer is checked again (checking
        records nothing), the explanation and the section to go back to are taken in `lang`."""
        from tutor.quiz.check import check_answer

        feedback, item = self.last_feedback, self.item
        assert feedback is not None  # the feedback on screen
        if item is None or self._answered is None:
            return feedback
        question = item.question
        check = check_answer(question, self._answered, lang)
        go_back = feedback.go_back
        if go_back is not None:
            section = next((s for s in item.lesson.sections if s.id == go_back.section), None)
            go_back = go_back.model_copy(update={"title": pick((section or item.lesson).title, lang)})
        return feedback.model_copy(
            update={
                "explanation": pick(question.explanation, lang),
                "expected": check.expected,
                "understood": check.understood,
                "choices": check.choices,
                "go_back": go_back,
            }
        )

    # --- answering -------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.run_worker(self.submit(event.value), group="answer")

    async def submit(self, text: str) -> None:
        """The learner's answer (or Enter after feedback): the same path keys and tests take.
        The answer is checked and recorded by the app's store writer: the app keeps running while
        the store is busy, and the feedback shows once the answer is recorded (an Enter meanwhile
        is not another answer)."""
        from tutor.quiz.check import AnswerError

        item = self.item
        if self._recording:
            return
        if self.state == "feedback":
            self._next()
            return
        if self.state == "done" or item is None:
            return
        if isinstance(item.question, OpenQuestion) and self.state == "asking":
            self.note = text.strip() or None
            self.state = "rating"
            self._show_question()
            self._show_hint()
            self.query_one(".q-answer", Input).value = ""
            return
        if self.state == "rating":
            answer = partial(self.session.answer, text.strip(), note=self.note, used_hint=self.used_hint)
        else:
            answer = partial(self.session.answer, text, used_hint=self.used_hint)
        host = host_of(self)
        self._recording = True
        try:
            # recorded by the app's store writer; in place in an app that has none
            feedback = await host.tutor.written(lambda _store: answer()) if host is not None else answer()
        except Exception as err:  # noqa: BLE001 - e.g. the store is busy: say so, keep the question
            if self.is_attached:
                self._error(err if isinstance(err, AnswerError) else f"{type(err).__name__}: {err}")
            return
        finally:
            self._recording = False
        if not self.is_attached:
            return  # the learner left meanwhile: the answer is recorded, with nothing to show it on
        self.last_feedback = feedback
        self._answered = text.strip() if self.state == "rating" else text
        self._error("")
        self.state = "feedback"
        self._show_feedback()
        self.refresh_bindings()
        self.query_one(".q-answer", Input).value = ""
        self.post_message(self.Answered())

    def _show_feedback(self) -> None:
        assert self.item is not None and self.last_feedback is not None  # an answer was just checked
        lang, question = self.lang, self.item.question
        lines = feedback_lines(self.last_feedback, lang, self.session.now())
        if isinstance(question, OpenQuestion):  # the learner's own answer stays beside the model answer
            lines = [*open_answer_lines(question, self.note, lang), *lines]
        self.query_one(".q-feedback", Static).update(Prose(as_markdown(lines)))
        self.query_one(".q-help", Static).update(say("quiz.next", lang))

    def _done(self) -> None:
        self.state = "done"
        self._show_done()
        self._show_hint()
        if self.on_finished is not None:
            self.on_finished()

    def _show_done(self) -> None:
        score = self.session.score()
        self.query_one(".q-counter", Static).update("")
        if score.total == 0:
            text = say("quiz.empty", self.lang)
        else:
            text = say("quiz.done", self.lang, correct=score.correct, total=score.total)
        self.query_one(".q-prompt", Static).update(Prose(f"**{text}**"))
        self.query_one(".q-help", Static).update("")
        self.query_one(".q-answer", Input).disabled = True

    def action_hint(self) -> None:
        if not self._hint():
            return
        self.used_hint = True
        self._show_hint()
