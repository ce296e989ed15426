"""The served class's pages, and the one check of what a page sends.

notice_page(request, "expired", 403)    a plain page that says why the tutor is not shown, in the
                                        browser's language (the learner is not known yet)
link_page(lang, title)                  the answer to a link: it moves on to /learn/ at once
tutor_page(template, lang, ...)         tutor/serve/page.html with its texts in the learner's language
parse_message(text)                     a websocket message as the page sends it, or None
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from aiohttp import web

from tutor.i18n import FALLBACK, LANGS
from tutor.texts import say

PAGE = Path(__file__).with_name("page.html")
MAX_MESSAGE = 1 << 20  # a websocket message: a paste of a whole exercise file fits
NO_STORE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


def page_lang(request: web.Request) -> str:
    """The first of the browser's languages that the tutor speaks (for pages before a learner is known)."""
    for part in request.headers.get("Accept-Language", "").split(","):
        lang = part.split(";")[0].strip().lower()[:2]
        if lang in LANGS:
            return lang
    return FALLBACK


def notice_page(request: web.Request, what: str, status: int) -> web.Response:
    """A plain page that says why the tutor is not shown (`what`: refused, expired, full, home)."""
    lang = page_lang(request)
    title, text = say(f"serve.page.{what}.title", lang), say(f"serve.page.{what}.text", lang)
    return web.Response(
        text=_plain(lang, title, f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>"),
        status=status,
        content_type="text/html",
        headers=NO_STORE,
    )


def _plain(lang: str, title: str, body: str, head: str = "") -> str:
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"{head}<style>body{{font-family:sans-serif;background:#0c181f;color:#eee;display:flex;"
        "align-items:center;justify-content:center;height:90vh}main{max-width:36em;background:#12232d;"
        f"padding:2em}}</style></head><body><main>{body}</main></body></html>"
    )


def parse_message(data: str) -> tuple | None:
    """A websocket message as the page sends it, checked whole: (kind, value), or None to drop it."""
    if len(data) > MAX_MESSAGE:
        return None
    try:
        message = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, list) or not message or not isinstance(message[0], str):
        return None
    kind, rest = message[0], message[1:]
    if kind == "stdin" and len(rest) == 1 and isinstance(rest[0], str):
        try:
            return kind, rest[0].encode("utf-8")  # a lone surrogate is no text: dropped
        except UnicodeEncodeError:
            return None
    if kind == "resize" and len(rest) == 1 and isinstance(rest[0], dict):
        width, height = rest[0].get("width"), rest[0].get("height")
        if type(width) is int and type(height) is int:
            return kind, (min(500, max(10, width)), min(500, max(10, height)))
        return None
    if kind == "ping" and len(rest) == 1 and isinstance(rest[0], str) and len(rest[0]) <= 32:
        return kind, rest[0]
    if kind in ("blur", "focus") and not rest:
        return kind, None
    return None


def link_page(lang: str, title: str) -> web.Response:
    """The link's answer (its cookie is set by the caller): a page that replaces itself with /learn/ at
    once, by script and by refresh, so the token stays in no history entry and no Referer carries it."""
    text = html.escape(say("serve.page.starting", lang))
    head = '<meta http-equiv="refresh" content="0;url=/learn/">'
    script = '<script>window.location.replace("/learn/")</script>'
    return web.Response(
        text=_plain(lang, title, f"<p>{text}</p>{script}", head), content_type="text/html", headers=NO_STORE
    )


def tutor_page(
    template: str, lang: str, title: str, idle_minutes: float, codes: dict[str, int], static: str = "/static/"
) -> web.Response:
    """The tutor's page for a learner of `lang`: the texts its notices show, the close codes that say
    which to show, and where its static files are (`static/`, relative, under a proxy's prefix)."""
    values = {
        "static": static,
        "lang": lang,
        "title": html.escape(title),
        "starting": html.escape(say("serve.page.starting", lang)),
        "ended": html.escape(say("serve.page.ended", lang)),
        "idle": html.escape(say("serve.page.idle", lang, minutes=round(idle_minutes))),
        "taken": html.escape(say("serve.page.taken", lang)),
        "link": html.escape(say("serve.page.link_ended", lang)),
        "busy": html.escape(say("serve.page.busy", lang)),
        "full": html.escape(say("serve.page.full.text", lang)),
        "restart": html.escape(say("serve.page.restart", lang)),
        "codes": json.dumps(codes),
    }
    for name, value in values.items():
        template = template.replace("{{ " + name + " }}", value)
    return web.Response(text=template, content_type="text/html", headers=NO_STORE)
