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
        "en": "{n} question(s). Type ? for a hint; Ctrl-D stops (answers are saved).",
        "de": "{n} Frage(n). ? zeigt einen Hinweis; Strg-D beendet (Antworten bleiben gespeichert).",
        "zh": "共 {n} 题。输入 ? 查看提示；Ctrl-D 结束（已答的会保存）。",
    },
    "second_round": {
        "en": "Once more, the ones you missed (not scored):",
        "de": "Noch einmal die verpassten Fragen (ohne Wertung):",
        "zh": "再来一遍答错的题（不计分）：",
    },
    "again_label": {"en": "again", "de": "nochmal", "zh": "重做"},
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
    "hint": {"en": "hint:", "de": "Hinweis:", "zh": "提示："},
    "no_hint": {
        "en": "no hint for this one",
        "de": "zu dieser Frage gibt es keinen Hinweis",
        "zh": "这题没有提示",
    },
    "try_hint": {"en": "type ? for a hint", "de": "? zeigt einen Hinweis", "zh": "输入 ? 查看提示"},
    "model_answer": {"en": "model answer:", "de": "Musterantwort:", "zh": "参考答案："},
    # feedback
    "right": {"en": "✓ right", "de": "✓ richtig", "zh": "✓ 正确"},
    "wrong": {"en": "✗ not right", "de": "✗ nicht richtig", "zh": "✗ 不对"},
    "rated": {"en": "rated {rating}", "de": "bewertet: {rating}", "zh": "自评：{rating}"},
    "rated_again": {
        "en": "rated again: it comes back soon",
        "de": "bewertet: nochmal – die Frage kommt bald wieder",
        "zh": "自评：重来——这题很快会再出现",
    },
    "rating.1": {"en": "again", "de": "nochmal", "zh": "重来"},
    "rating.2": {"en": "hard", "de": "schwer", "zh": "困难"},
    "rating.3": {"en": "good", "de": "gut", "zh": "良好"},
    "rating.4": {"en": "easy", "de": "leicht", "zh": "简单"},
    "read_as": {"en": "(read as {value})", "de": "(gelesen als {value})", "zh": "（理解为 {value}）"},
    "the_answer": {"en": "the answer: {answer}", "de": "die Antwort: {answer}", "zh": "答案：{answer}"},
    "why_not": {
        "en": "why not “{choice}”:",
        "de": "warum nicht „{choice}“:",
        "zh": "为什么不是「{choice}」：",
    },
    "held_back": {
        "en": "try again: the explanation comes with the right answer",
        "de": "versuch es noch einmal: die Erklärung kommt mit der richtigen Antwort",
        "zh": "再试一次：答对后会显示解释",
    },
    "go_back": {
        "en": "missed {n} times in a row: re-read “{title}”",
        "de": "{n}-mal hintereinander verpasst: lies „{title}“ noch einmal",
        "zh": "连续答错 {n} 次：请重读「{title}」",
    },
    "comes_back": {
        "en": "this one comes back later in this sitting",
        "de": "diese Frage kommt in dieser Runde noch einmal",
        "zh": "这题稍后会再问一次",
    },
    "next_review": {
        "en": "next review {when} ({date})",
        "de": "nächste Wiederholung {when} ({date})",
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
        "en": "{token!r} is not one of the choices (1-{n} or {ids})",
        "de": "{token!r} ist keine der Antworten (1-{n} oder {ids})",
        "zh": "{token!r} 不是选项之一（1-{n} 或 {ids}）",
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
