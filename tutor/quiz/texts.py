"""The quiz's own words (prompts, verdicts, messages) in English, German and Chinese.

`say(key, lang, **values)` falls back to English. The Textual app can use the same keys, so the
quiz reads alike in both front ends.
"""

from __future__ import annotations

from tutor.i18n import localise

TEXTS: dict[str, dict[str, str]] = {
    # sitting
    "title.quiz": {"en": "Quiz: {title}", "de": "Quiz: {title}", "zh": "测验：{title}"},
    "title.review": {"en": "Review", "de": "Wiederholung", "zh": "复习"},
    "title.predict": {
        "en": "Predict before you code: {exercise}",
        "de": "Erst vorhersagen, dann programmieren: {exercise}",
        "zh": "先预测，再写代码：{exercise}",
    },
    "intro": {
        "en": "{n} question(s). Type ? for a hint where there is one; Ctrl-D or Ctrl-C stops (answers are saved).",
        "de": "{n} Frage(n). ? zeigt einen Hinweis, wo es einen gibt; Strg-D oder Strg-C beendet (Antworten bleiben gespeichert).",
        "zh": "共 {n} 题。有提示的题输入 ? 查看提示；Ctrl-D 或 Ctrl-C 结束（已答的会保存）。",
    },
    "resumed": {
        "en": "Picking up where you left off: {answered} of {total} answered.",
        "de": "Weiter, wo du aufgehört hast: {answered} von {total} beantwortet.",
        "zh": "从上次停下的地方继续：已答 {answered}/{total} 题。",
    },
    "plan": {
        "en": "{due} due today, {new} new",
        "de": "{due} heute fällig, {new} neu",
        "zh": "今日到期 {due} 道，新题 {new} 道",
    },
    "new_waiting": {
        "en": "{n} new question(s) to try",
        "de": "{n} neue Frage(n) zum Ausprobieren",
        "zh": "{n} 道新题可以做",
    },
    "second_round": {
        "en": "Once more, the ones you missed (not scored):",
        "de": "Noch einmal die verpassten Fragen (ohne Wertung):",
        "zh": "再来一遍答错的题（不计分）：",
    },
    "counter.again": {"en": "again · {n}/{total}", "de": "nochmal · {n}/{total}", "zh": "重做 · {n}/{total}"},
    "unit": {"en": "(unit: {unit})", "de": "(Einheit: {unit})", "zh": "（单位：{unit}）"},
    # prompts
    "prompt.multiple": {
        "en": "answers (numbers, e.g. 1, 3)> ",
        "de": "Antworten (Nummern, z. B. 1, 3)> ",
        "zh": "答案（编号，如 1, 3）> ",
    },
    "prompt.single": {"en": "answer (number)> ", "de": "Antwort (Nummer)> ", "zh": "答案（编号）> "},
    "prompt.text": {"en": "answer> ", "de": "Antwort> ", "zh": "答案> "},
    "prompt.open": {
        "en": "your answer (Enter to skip)> ",
        "de": "deine Antwort (Enter überspringt)> ",
        "zh": "你的回答（回车跳过）> ",
    },
    "prompt.rating": {
        "en": "how did you do? again / hard / good / easy (1-4)> ",
        "de": "wie lief es? nochmal / schwer / gut / leicht (1-4)> ",
        "zh": "答得怎么样？重来 / 困难 / 良好 / 简单 (1-4)> ",
    },
    "hint": {"en": "Hint: {hint}", "de": "Hinweis: {hint}", "zh": "提示：{hint}"},
    "no_hint": {
        "en": "no hint for this one",
        "de": "zu dieser Frage gibt es keinen Hinweis",
        "zh": "这题没有提示",
    },
    "try_hint": {"en": "type ? for a hint", "de": "? zeigt einen Hinweis", "zh": "输入 ? 查看提示"},
    "model_answer": {
        "en": "Model answer: {answer}",
        "de": "Musterantwort: {answer}",
        "zh": "参考答案：{answer}",
    },
    "your_answer": {
        "en": "Your answer: {answer}",
        "de": "Deine Antwort: {answer}",
        "zh": "你的回答：{answer}",
    },
    # feedback
    "right": {"en": "✓ Right", "de": "✓ Richtig", "zh": "✓ 正确"},
    "wrong": {"en": "✗ Not quite", "de": "✗ Nicht ganz", "zh": "✗ 不太对"},
    "rated": {"en": "Rated: {rating}", "de": "Bewertet: {rating}", "zh": "已自评：{rating}"},
    "rating.1": {"en": "again", "de": "nochmal", "zh": "重来"},
    "rating.2": {"en": "hard", "de": "schwer", "zh": "困难"},
    "rating.3": {"en": "good", "de": "gut", "zh": "良好"},
    "rating.4": {"en": "easy", "de": "leicht", "zh": "简单"},
    "read_as": {
        "en": "read your answer as {value}",
        "de": "deine Antwort gelesen als {value}",
        "zh": "你的答案读作 {value}",
    },
    "the_answer": {"en": "The answer: {answer}", "de": "Die Antwort: {answer}", "zh": "答案：{answer}"},
    "why_not": {
        "en": "Why not “{choice}”: {why}",
        "de": "Warum nicht „{choice}“: {why}",
        "zh": "为什么不是「{choice}」：{why}",
    },
    "go_back": {
        "en": "Missed {n} times in a row: re-read “{title}”.",
        "de": "{n}-mal hintereinander verpasst: lies „{title}“ noch einmal.",
        "zh": "连续答错 {n} 次：请重读「{title}」。",
    },
    "comes_back": {
        "en": "Try it again later: it comes back in this sitting.",
        "de": "Versuch es später noch einmal: die Frage kommt in dieser Runde wieder.",
        "zh": "稍后再试一次：这题本轮还会再出现。",
    },
    "next_review": {
        "en": "Next review {when} ({date})",
        "de": "Nächste Wiederholung {when} ({date})",
        "zh": "下次复习：{when}（{date}）",
    },
    "today": {"en": "today", "de": "heute", "zh": "今天"},
    "tomorrow": {"en": "tomorrow", "de": "morgen", "zh": "明天"},
    "in_days": {"en": "in {n} days", "de": "in {n} Tagen", "zh": "{n} 天后"},
    # end
    "stopped": {
        "en": "Stopped. {answered} of {total} answered; every answer so far is saved.",
        "de": "Beendet. {answered} von {total} beantwortet; alle bisherigen Antworten sind gespeichert.",
        "zh": "已停止。已答 {answered}/{total} 题，所有答案都已保存。",
    },
    "score": {
        "en": "Score: {correct}/{total} right at the first attempt ({percent}%)",
        "de": "Ergebnis: {correct}/{total} beim ersten Versuch richtig ({percent} %)",
        "zh": "得分：首次作答正确 {correct}/{total}（{percent}%）",
    },
    "reread": {
        "en": "re-read: “{title}” (lesson {lesson})",
        "de": "noch einmal lesen: „{title}“ (Lektion {lesson})",
        "zh": "重读：「{title}」（课 {lesson}）",
    },
    "due_today": {
        "en": "{n} review(s) due today: python -m tutor quiz --review",
        "de": "{n} Wiederholung(en) heute fällig: python -m tutor quiz --review",
        "zh": "今天有 {n} 道题待复习：python -m tutor quiz --review",
    },
    "unlocked": {
        "en": "All predictions answered: the coding task is open.",
        "de": "Alle Vorhersagen beantwortet: die Programmieraufgabe ist offen.",
        "zh": "所有预测都已答对：编程任务已解锁。",
    },
    "already_unlocked": {
        "en": "All predictions are answered already: the coding task is open.",
        "de": "Alle Vorhersagen sind schon beantwortet: die Programmieraufgabe ist offen.",
        "zh": "所有预测都已答过：编程任务已解锁。",
    },
    "nothing_due": {
        "en": "Nothing to review today.",
        "de": "Heute gibt es nichts zu wiederholen.",
        "zh": "今天没有要复习的题。",
    },
    "next_due": {
        "en": "Next review: {date}.",
        "de": "Nächste Wiederholung: {date}.",
        "zh": "下次复习：{date}。",
    },
    # python -m tutor progress
    "progress.title": {"en": "Progress ({path})", "de": "Fortschritt ({path})", "zh": "学习进度（{path}）"},
    "progress.lesson": {"en": "lesson", "de": "Lektion", "zh": "课"},
    "progress.sections": {"en": "sections read", "de": "Abschnitte gelesen", "zh": "已读小节"},
    "progress.quiz": {"en": "quiz right", "de": "Quiz richtig", "zh": "测验答对"},
    "progress.due": {"en": "due today", "de": "heute fällig", "zh": "今日待复习"},
    "progress.exercises": {"en": "exercises passed", "de": "Übungen bestanden", "zh": "已通过练习"},
    "progress.footer": {
        "en": "reviews due today: {due}   training runs kept: {runs}",
        "de": "heute fällige Wiederholungen: {due}   gespeicherte Trainingsläufe: {runs}",
        "zh": "今日待复习：{due}   已保存的训练：{runs}",
    },
    "progress.last_place": {"en": "last place: {where}", "de": "zuletzt: {where}", "zh": "上次位置：{where}"},
    # answers that are not answers (check.AnswerError)
    "err.pick_one": {"en": "pick a choice", "de": "wähle eine Antwort", "zh": "请选择一项"},
    "err.pick_some": {
        "en": "pick one or more choices",
        "de": "wähle eine oder mehrere Antworten",
        "zh": "请选择一项或多项",
    },
    "err.only_one": {"en": "pick exactly one choice", "de": "wähle genau eine Antwort", "zh": "只能选一项"},
    "err.no_such_choice": {
        "en": "{token!r} is not one of the choices: type a number from 1 to {n}",
        "de": "{token!r} ist keine der Antworten: tippe eine Nummer von 1 bis {n}",
        "zh": "{token!r} 不是选项之一：请输入 1 到 {n} 的编号",
    },
    "err.not_a_number": {
        "en": "{token!r} is not a number I can read: type digits or a calculation such as 2^-8, 128*128 or 2π",
        "de": "{token!r} kann ich nicht als Zahl lesen: tippe Ziffern oder eine Rechnung wie 2^-8, 128*128 oder 2π",
        "zh": "{token!r} 不是能读懂的数：请输入数字或算式，如 2^-8、128*128 或 2π",
    },
    "err.rating": {
        "en": "rate yourself: again, hard, good or easy (1-4)",
        "de": "bewerte dich: nochmal, schwer, gut oder leicht (1-4)",
        "zh": "请自评：重来、困难、良好或简单（1-4）",
    },
    "err.empty": {"en": "type an answer", "de": "gib eine Antwort ein", "zh": "请输入答案"},
}


def say(key: str, lang: str = "en", **values: object) -> str:
    """The text for `key` in `lang` (English if missing), with `values` filled in."""
    return localise(TEXTS, key, lang, **values)
