"""The site's languages: English is the reference, the others are translations of it."""

from __future__ import annotations

from typing import Final

SOURCE_LANGUAGE: Final = "en"
# URL prefixes and translation file names (ADR 0004); Portuguese follows Brazilian usage.
TRANSLATED_LANGUAGES: Final = ("pt", "es", "fr", "de")
LANGUAGES: Final = (SOURCE_LANGUAGE, *TRANSLATED_LANGUAGES)
