"""Long-form guides and FAQs: Markdown per language with TOML front matter, English fallback."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore

from clusterscout import resources

FALLBACK_LANG: Final = "en"
_ANCHOR: Final = re.compile(r"\s*\{#([A-Za-z][\w-]*)\}\s*$")
_FRONT: Final = re.compile(r"\A\+\+\+\s*\n(.*?)\n\+\+\+\s*\n", re.DOTALL)
_LINK: Final = re.compile(r"\[([^\]]+)\]\([^)]*\)")


def _heading_anchors(state: StateCore) -> None:
    """``## Title {#id}`` becomes ``<h2 id="id">Title</h2>``."""
    tokens = state.tokens
    for i, tok in enumerate(tokens):
        if tok.type != "heading_open" or i + 1 >= len(tokens):
            continue
        inline = tokens[i + 1]
        match = _ANCHOR.search(inline.content)
        if match is None:
            continue
        tok.attrSet("id", match.group(1))
        inline.content = inline.content[: match.start()]
        if inline.children:
            last = inline.children[-1]
            last.content = _ANCHOR.sub("", last.content)


def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "typographer": False})
    md.core.ruler.push("heading_anchors", _heading_anchors)
    return md


_MD: Final = _renderer()


@dataclass(frozen=True, slots=True)
class Section:
    """One ``##`` section: heading text, its anchor (if any) and its body as HTML."""

    title: str
    anchor: str | None
    html: str
    text: str


@dataclass(frozen=True, slots=True)
class Document:
    """A rendered content file."""

    lang: str
    fallback: bool
    front: dict[str, Any]
    intro_html: str
    sections: tuple[Section, ...]

    @property
    def title(self) -> str:
        """The front-matter title."""
        return str(self.front.get("title", ""))

    @property
    def description(self) -> str:
        """The front-matter description (may be empty)."""
        return str(self.front.get("description", ""))


def _plain(markdown: str) -> str:
    text = _LINK.sub(r"\1", markdown)
    text = text.replace("**", "").replace("`", "")
    return " ".join(text.split())


def parse(raw: str, lang: str, *, fallback: bool = False) -> Document:
    """Split front matter and ``##`` sections, render each part."""
    front: dict[str, Any] = {}
    match = _FRONT.match(raw)
    if match:
        front = tomllib.loads(match.group(1))
        raw = raw[match.end() :]
    parts = re.split(r"^## ", raw, flags=re.MULTILINE)
    intro = parts[0]
    sections = []
    for part in parts[1:]:
        heading, _, body = part.partition("\n")
        anchor_match = _ANCHOR.search(heading)
        anchor = anchor_match.group(1) if anchor_match else None
        title = _ANCHOR.sub("", heading).strip()
        sections.append(Section(title, anchor, _MD.render(body), _plain(body)))
    return Document(lang, fallback, front, _MD.render(intro), tuple(sections))


@lru_cache(maxsize=64)
def load(kind: str, slug: str, lang: str, content_dir: Path | None = None) -> Document | None:
    """The document ``content/{lang}/{kind}/{slug}.md``, falling back to English.

    ``content_dir`` defaults to the content shipped with the package.

    Returns:
        None when neither the language nor English has the file.
    """
    root = content_dir if content_dir is not None else resources.content_dir()
    for candidate in (lang, FALLBACK_LANG):
        path = root / candidate / kind / f"{slug}.md"
        if path.is_file():
            return parse(path.read_text(encoding="utf-8"), candidate, fallback=candidate != lang)
    return None


def faq_jsonld(doc: Document) -> dict[str, Any]:
    """schema.org ``FAQPage`` for a FAQ document (one question per section)."""
    return {
        "@context": "https://schema.org",
        "@type": "FAQPage",
        "inLanguage": doc.lang,
        "mainEntity": [
            {
                "@type": "Question",
                "name": s.title,
                "acceptedAnswer": {"@type": "Answer", "text": s.text},
            }
            for s in doc.sections
        ],
    }
