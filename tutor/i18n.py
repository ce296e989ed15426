"""Language choice: `--lang`, then `TUTOR_LANG`, then the locale, then English."""

from __future__ import annotations

import locale
from collections.abc import Mapping
from typing import Any

from tutor.settings import LOCALE_VARIABLES, env

LANG_NAMES = {"en": "English", "de": "Deutsch", "zh": "中文"}  # each in its own words, in cycling order
LANGS = tuple(LANG_NAMES)
FALLBACK = "en"


def normalise_lang(value: str | None) -> str | None:
    """'zh_CN.UTF-8' -> 'zh', 'de-AT' -> 'de'; None for anything we do not teach in."""
    if not value:
        return None
    code = value.strip().lower().replace("-", "_").split(".")[0].split("_")[0]
    return code if code in LANGS else None


def pick_lang(explicit: str | None = None) -> str:
    for candidate in (explicit, env("TUTOR_LANG")):
        lang = normalise_lang(candidate)
        if lang:
            return lang
    for var in LOCALE_VARIABLES:
        lang = normalise_lang(env(var))
        if lang:
            return lang
    try:
        lang = normalise_lang(locale.getlocale()[0])
    except ValueError:
        lang = None
    return lang or FALLBACK


# Any: keys are str or content.schema.Lang (a Mapping's key type is invariant)
def pick(text: Mapping[Any, str] | None, lang: str) -> str:
    """A course text in `lang`, falling back to English; '' for no text (a plain dict: no pydantic)."""
    if not text:
        return ""
    return text.get(lang) or text.get("en", "")
