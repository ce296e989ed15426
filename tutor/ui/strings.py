"""The app's own words (labels, keys, messages) in en/de/zh; lesson text comes from the content files.

`t(key, lang, **values)` falls back to English, like `schema.pick` does for lesson text.
"""

from __future__ import annotations

from tutor.i18n import localise

_TEXT: dict[str, dict[str, str]] = {
    "app.title": {"en": "Attention Tutor", "de": "Attention-Tutor", "zh": "注意力教程"},
    # keys (footer and help)
    "key.help": {"en": "Help", "de": "Hilfe", "zh": "帮助"},
    "key.home": {"en": "Home", "de": "Start", "zh": "主页"},
    "key.lesson": {"en": "Lesson", "de": "Lektion", "zh": "课程"},
    "key.quiz": {"en": "Quiz", "de": "Quiz", "zh": "测验"},
    "key.lab": {"en": "Exercise", "de": "Übung", "zh": "练习"},
    "key.lang": {"en": "Language", "de": "Sprache", "zh": "语言"},
    "key.theme": {"en": "Light/dark", "de": "Hell/dunkel", "zh": "明/暗"},
    "key.open": {"en": "Open", "de": "Öffnen", "zh": "打开"},
    "key.continue": {"en": "Continue", "de": "Weiter", "zh": "继续"},
    "key.review": {"en": "Review due", "de": "Fällige", "zh": "复习"},
    "key.next": {"en": "Next §", "de": "Nächster §", "zh": "下一节"},
    "key.prev": {"en": "Prev §", "de": "Voriger §", "zh": "上一节"},
    "key.run": {"en": "Run", "de": "Ausführen", "zh": "运行"},
    "key.cancel": {"en": "Cancel run", "de": "Abbrechen", "zh": "取消"},
    "key.toc": {"en": "Contents", "de": "Inhalt", "zh": "目录"},
    "key.edit": {"en": "Edit", "de": "Bearbeiten", "zh": "编辑"},
    "key.grade": {"en": "Grade", "de": "Bewerten", "zh": "评分"},
    "key.hint": {"en": "Hint", "de": "Tipp", "zh": "提示"},
    "key.solution": {"en": "Solution", "de": "Lösung", "zh": "参考答案"},
    "key.back": {"en": "Back", "de": "Zurück", "zh": "返回"},
    "key.palette": {"en": "Commands", "de": "Befehle", "zh": "命令"},
    "key.quit": {"en": "Quit", "de": "Beenden", "zh": "退出"},
    "key.next_exp": {"en": "Next experiment", "de": "Nächstes Experiment", "zh": "下一个实验"},
    # home
    "home.col.lesson": {"en": "Lesson", "de": "Lektion", "zh": "课程"},
    "home.col.read": {"en": "Read", "de": "Gelesen", "zh": "已读"},
    "home.col.quiz": {"en": "Quiz", "de": "Quiz", "zh": "测验"},
    "home.col.ex": {"en": "Exercises", "de": "Übungen", "zh": "练习"},
    "home.col.due": {"en": "Due", "de": "Fällig", "zh": "待复习"},
    "home.hint": {
        "en": "Enter opens a lesson · c continues where you left off · r reviews what is due · ? lists every key",
        "de": "Enter öffnet eine Lektion · c macht dort weiter, wo du warst · r wiederholt Fälliges · ? zeigt alle Tasten",
        "zh": "回车打开课程 · c 从上次的位置继续 · r 复习到期的题目 · ? 查看所有按键",
    },
    "home.due": {
        "en": "{n} review(s) due today",
        "de": "{n} Wiederholung(en) heute fällig",
        "zh": "今天有 {n} 道题待复习",
    },
    "home.nothing_due": {
        "en": "Nothing due for review",
        "de": "Nichts zu wiederholen",
        "zh": "暂无待复习的题目",
    },
    "home.load_errors": {
        "en": "Some lessons could not be loaded (the others work):",
        "de": "Einige Lektionen ließen sich nicht laden (die anderen funktionieren):",
        "zh": "有些课程无法加载（其余课程可以正常使用）：",
    },
    "home.loading": {"en": "Loading the lessons…", "de": "Lektionen werden geladen…", "zh": "正在加载课程…"},
    "home.no_lessons": {
        "en": "No lessons found in {dir}",
        "de": "Keine Lektionen in {dir}",
        "zh": "{dir} 中没有课程",
    },
    "home.continue_none": {
        "en": "Nothing to continue yet: opening the first lesson",
        "de": "Noch nichts fortzusetzen: die erste Lektion wird geöffnet",
        "zh": "还没有可以继续的内容：打开第一课",
    },
    # lesson
    "lesson.none": {
        "en": "Pick a lesson on the home screen (F1).",
        "de": "Wähle eine Lektion auf der Startseite (F1).",
        "zh": "请在主页（F1）选择一课。",
    },
    "lesson.no_experiment": {
        "en": "No experiment in view",
        "de": "Kein Experiment im Blick",
        "zh": "当前没有实验",
    },
    "lesson.no_exercise": {
        "en": "This lesson has no exercise",
        "de": "Diese Lektion hat keine Übung",
        "zh": "本课没有练习",
    },
    "lesson.no_quiz": {
        "en": "This lesson has no quiz",
        "de": "Diese Lektion hat kein Quiz",
        "zh": "本课没有测验",
    },
    # experiment panel
    "exp.run": {"en": "r: run", "de": "r: ausführen", "zh": "r：运行"},
    "exp.running": {"en": "running…", "de": "läuft…", "zh": "运行中…"},
    "exp.loading_torch": {"en": "loading PyTorch…", "de": "PyTorch wird geladen…", "zh": "正在加载 PyTorch…"},
    "exp.done": {"en": "done in {s:.1f} s", "de": "fertig in {s:.1f} s", "zh": "用时 {s:.1f} 秒"},
    "exp.finished": {
        "en": "done · r runs again",
        "de": "fertig · r führt erneut aus",
        "zh": "完成 · r 再次运行",
    },
    "exp.cancelled": {"en": "cancelled", "de": "abgebrochen", "zh": "已取消"},
    "exp.failed": {
        "en": "The experiment failed",
        "de": "Das Experiment ist fehlgeschlagen",
        "zh": "实验失败",
    },
    "exp.bad_params": {
        "en": "Fix the parameters first",
        "de": "Bitte zuerst die Parameter korrigieren",
        "zh": "请先修正参数",
    },
    "exp.busy": {
        "en": "already running (c cancels)",
        "de": "läuft bereits (c bricht ab)",
        "zh": "正在运行（c 取消）",
    },
    "exp.eta": {
        "en": "run {run}/{runs} {label} · step {step}/{steps} · loss {loss} · ETA {eta}",
        "de": "Lauf {run}/{runs} {label} · Schritt {step}/{steps} · Verlust {loss} · noch {eta}",
        "zh": "第 {run}/{runs} 轮 {label} · 步 {step}/{steps} · 损失 {loss} · 剩余 {eta}",
    },
    "exp.metrics": {"en": "Headline numbers", "de": "Kennzahlen", "zh": "关键数值"},
    "exp.params": {"en": "Parameters", "de": "Parameter", "zh": "参数"},
    # quiz
    "quiz.title": {"en": "Quiz: {lesson}", "de": "Quiz: {lesson}", "zh": "测验：{lesson}"},
    "quiz.review_title": {"en": "Review due", "de": "Fällige Wiederholungen", "zh": "到期复习"},
    "quiz.answer": {
        "en": "Your answer, then Enter",
        "de": "Deine Antwort, dann Enter",
        "zh": "输入答案后按回车",
    },
    "quiz.choices_help": {
        "en": "Type the number(s) of your choice, e.g. 2 or 1,3",
        "de": "Nummer(n) eintippen, z. B. 2 oder 1,3",
        "zh": "输入选项编号，例如 2 或 1,3",
    },
    "quiz.open_help": {
        "en": "Write your answer; the model answer follows",
        "de": "Schreib deine Antwort; danach folgt die Musterlösung",
        "zh": "写下你的答案，随后显示参考答案",
    },
    "quiz.rate": {
        "en": "Compare with the model answer and rate yourself: 1 again · 2 hard · 3 good · 4 easy",
        "de": "Vergleiche mit der Musterlösung und bewerte dich: 1 nochmal · 2 schwer · 3 gut · 4 leicht",
        "zh": "与参考答案对照并自评：1 重来 · 2 困难 · 3 良好 · 4 简单",
    },
    "quiz.model_answer": {"en": "Model answer", "de": "Musterlösung", "zh": "参考答案"},
    "quiz.right": {"en": "✓ Right", "de": "✓ Richtig", "zh": "✓ 正确"},
    "quiz.wrong": {"en": "✗ Not quite", "de": "✗ Nicht ganz", "zh": "✗ 不太对"},
    "quiz.rated": {"en": "Rated", "de": "Bewertet", "zh": "已自评"},
    "quiz.expected": {"en": "Expected", "de": "Erwartet", "zh": "正确答案"},
    "quiz.understood": {
        "en": "Read your answer as",
        "de": "Deine Antwort gelesen als",
        "zh": "你的答案被理解为",
    },
    "quiz.again_later": {
        "en": "This one comes back later in this sitting.",
        "de": "Diese Frage kommt in dieser Runde noch einmal.",
        "zh": "本轮稍后会再问这道题。",
    },
    "quiz.go_back": {
        "en": "Missed {n} times in a row: reread “{title}”.",
        "de": "{n}-mal in Folge verfehlt: lies „{title}“ noch einmal.",
        "zh": "连续答错 {n} 次：请重读“{title}”。",
    },
    "quiz.next": {"en": "Enter: next question", "de": "Enter: nächste Frage", "zh": "回车：下一题"},
    "quiz.done": {
        "en": "Done: {correct}/{total} right at the first try",
        "de": "Fertig: {correct}/{total} beim ersten Versuch richtig",
        "zh": "完成：首次答对 {correct}/{total}",
    },
    "quiz.empty": {
        "en": "No questions here right now.",
        "de": "Gerade keine Fragen.",
        "zh": "目前没有题目。",
    },
    "quiz.hint_none": {
        "en": "No hint for this question",
        "de": "Kein Tipp zu dieser Frage",
        "zh": "这道题没有提示",
    },
    "quiz.again": {"en": "again", "de": "nochmal", "zh": "再来"},
    # exercise
    "ex.file": {"en": "Your file", "de": "Deine Datei", "zh": "你的文件"},
    "ex.keys": {
        "en": "e: open in $EDITOR · g: grade · h: next hint · s: solution (after a pass) · saving the file re-grades it",
        "de": "e: im $EDITOR öffnen · g: bewerten · h: nächster Tipp · s: Lösung (nach dem Bestehen) · Speichern bewertet neu",
        "zh": "e：用 $EDITOR 打开 · g：评分 · h：下一条提示 · s：参考答案（通过后）· 保存文件会自动重新评分",
    },
    "ex.grading": {"en": "grading…", "de": "wird bewertet…", "zh": "评分中…"},
    "ex.isolation": {
        "en": "graded in a sandbox, isolation: {level}",
        "de": "in einer Sandbox bewertet, Isolation: {level}",
        "zh": "在沙箱中评分，隔离级别：{level}",
    },
    "ex.pass": {
        "en": "✓ All checks pass ({score}/{max})",
        "de": "✓ Alle Prüfungen bestanden ({score}/{max})",
        "zh": "✓ 全部通过（{score}/{max}）",
    },
    "ex.fail": {
        "en": "✗ {score}/{max} points: {status}",
        "de": "✗ {score}/{max} Punkte: {status}",
        "zh": "✗ {score}/{max} 分：{status}",
    },
    "ex.no_editor": {
        "en": "No editor: set $VISUAL or $EDITOR (e.g. export EDITOR=nano), or edit {path} in another window — saving re-grades it.",
        "de": "Kein Editor: setze $VISUAL oder $EDITOR (z. B. export EDITOR=nano) oder bearbeite {path} in einem anderen Fenster – Speichern bewertet neu.",
        "zh": "没有编辑器：请设置 $VISUAL 或 $EDITOR（如 export EDITOR=nano），或在另一个窗口编辑 {path}——保存后会自动重新评分。",
    },
    "ex.editor_failed": {
        "en": "The editor could not be started: {err}",
        "de": "Der Editor ließ sich nicht starten: {err}",
        "zh": "无法启动编辑器：{err}",
    },
    "ex.timeout": {
        "en": "Grading did not finish within {s:.0f} s and was stopped.",
        "de": "Die Bewertung war nach {s:.0f} s nicht fertig und wurde gestoppt.",
        "zh": "评分在 {s:.0f} 秒内没有完成，已停止。",
    },
    "ex.grade_failed": {
        "en": "Grading failed: {err}",
        "de": "Bewertung fehlgeschlagen: {err}",
        "zh": "评分失败：{err}",
    },
    "ex.hints": {"en": "Hints", "de": "Tipps", "zh": "提示"},
    "ex.no_more_hints": {"en": "No more hints", "de": "Keine weiteren Tipps", "zh": "没有更多提示了"},
    "ex.predict_first": {
        "en": "Answer these predictions first; the coding task opens after.",
        "de": "Beantworte zuerst diese Vorhersagen; danach öffnet sich die Aufgabe.",
        "zh": "请先回答这些预测题，之后才开放编程任务。",
    },
    "ex.none": {
        "en": "Pick an exercise: Ctrl+P, then type its name.",
        "de": "Wähle eine Übung: Strg+P, dann ihren Namen tippen.",
        "zh": "选择一个练习：按 Ctrl+P，然后输入练习名称。",
    },
    "ex.output": {"en": "Output of your code", "de": "Ausgabe deines Codes", "zh": "你的代码的输出"},
    # help
    "help.title": {"en": "Keys", "de": "Tasten", "zh": "按键"},
    "help.close": {"en": "Esc or ? closes this", "de": "Esc oder ? schließt", "zh": "按 Esc 或 ? 关闭"},
    "help.global": {"en": "Everywhere", "de": "Überall", "zh": "全局"},
    "help.here": {"en": "On this screen", "de": "Auf dieser Seite", "zh": "本页面"},
    # palette and notices
    "cmd.lesson": {"en": "Lesson", "de": "Lektion", "zh": "课程"},
    "cmd.experiment": {"en": "Experiment", "de": "Experiment", "zh": "实验"},
    "cmd.exercise": {"en": "Exercise", "de": "Übung", "zh": "练习"},
    "cmd.quiz": {"en": "Quiz", "de": "Quiz", "zh": "测验"},
    "cmd.review": {"en": "Review due", "de": "Fällige Wiederholungen", "zh": "到期复习"},
    "cmd.review_help": {
        "en": "Questions due today across all lessons",
        "de": "Heute fällige Fragen aus allen Lektionen",
        "zh": "所有课程中今天到期的题目",
    },
    "cmd.lang": {"en": "Language: {name}", "de": "Sprache: {name}", "zh": "语言：{name}"},
    "lang.switched": {"en": "Language: English", "de": "Sprache: Deutsch", "zh": "语言：中文"},
}


def t(key: str, lang: str, **values: object) -> str:
    return localise(_TEXT, key, lang, **values)


def has(key: str) -> bool:
    return key in _TEXT
