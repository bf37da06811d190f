"""Helpers shared by the web tests: languages, the test client class, visible page text."""

from __future__ import annotations

import warnings
from html.parser import HTMLParser

with warnings.catch_warnings():
    # Starlette deprecates its httpx-based TestClient at import time; the client still works.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

__all__ = ["LANGS", "TRANSLATED", "TestClient", "visible_text"]

LANGS = ("en", "pt", "es", "fr", "de")
TRANSLATED = ("pt", "es", "fr", "de")


class _Text(HTMLParser):
    """Visible interface text: skips scripts, styles and elements marked ``lang="en"``
    (catalog notes are English data, not interface strings)."""

    VOID = frozenset({"br", "img", "input", "link", "meta", "hr", "source", "wbr", "area", "col"})

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.stack: list[bool] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            for name, value in attrs:
                if name in {"placeholder", "aria-label", "title"} and value:
                    self.parts.append(value)
            return
        skip = tag in {"script", "style"} or (tag != "html" and dict(attrs).get("lang") == "en")
        self.stack.append(skip or (bool(self.stack) and self.stack[-1]))
        if not self.stack[-1]:
            for name, value in attrs:
                if name in {"aria-label", "title", "placeholder"} and value:
                    self.parts.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if not (self.stack and self.stack[-1]):
            self.parts.append(data)


def visible_text(html: str) -> str:
    """Interface text of a page, whitespace-normalised."""
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())
