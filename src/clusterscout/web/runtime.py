"""Per-app state: settings, database engine, one Jinja environment per locale, build metadata."""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field, replace
from gettext import NullTranslations
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, FileSystemLoader, select_autoescape
from sqlalchemy import Engine
from starlette.requests import Request

from clusterscout.app import database, offers, texts
from clusterscout.settings import Settings
from clusterscout.version import __version__
from clusterscout.web.i18n import KNOWN_LOCALES, Formatter, formatter, load_translations
from clusterscout.web.memo import Memo

WEB_DIR: Final = Path(__file__).resolve().parent
TEMPLATE_DIR: Final = WEB_DIR / "templates"
STATIC_DIR: Final = WEB_DIR / "static"
META_TTL_S: Final = 5.0
MEMO_ENTRIES: Final = 2048


def _asset_version() -> str:
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(STATIC_DIR.rglob("*")):
        if path.is_file():
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


def _environment(translations: NullTranslations) -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATE_DIR),
        autoescape=select_autoescape(["html", "xml"]),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.install_gettext_translations(translations, newstyle=True)  # type: ignore[attr-defined]
    return env


@dataclass
class AppState:
    """Everything a request handler needs; created once per app by ``create_app``."""

    settings: Settings
    engine: Engine
    envs: dict[str, Environment] = field(default_factory=dict)
    formatters: dict[str, Formatter] = field(default_factory=dict)
    asset_version: str = ""
    _meta: dict[str, str] = field(default_factory=dict)
    _providers: tuple[str, dict[str, dict[str, Any]]] | None = None
    _localized: tuple[str, dict[str, Formatter]] | None = None
    _localized_providers: dict[tuple[str, str], dict[str, dict[str, Any]]] = field(
        default_factory=dict
    )
    _meta_read_at: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    memo: Memo = field(default_factory=lambda: Memo(MEMO_ENTRIES))
    """Model answers (plans, charts, reference estimates), keyed with the data version."""

    @classmethod
    def create(cls, settings: Settings, engine: Engine) -> AppState:
        """Load translations, build template environments and read the build metadata."""
        state = cls(settings, engine, asset_version=_asset_version())
        for lang in KNOWN_LOCALES:
            translations = load_translations(lang)
            state.envs[lang] = _environment(translations)
            state.formatters[lang] = formatter(lang, translations)
        state.meta()
        return state

    def meta(self) -> dict[str, str]:
        """Build metadata (data_version, built_at), re-read at most every few seconds."""
        now = time.monotonic()
        if self._meta and now - self._meta_read_at < META_TTL_S:
            return self._meta
        with self._lock:
            with self.engine.connect() as conn:
                self._meta = database.build_meta(conn)
            self._meta_read_at = now
        return self._meta

    @property
    def data_version(self) -> str:
        """The catalog build id; ETags and caches key on it."""
        return self.meta()["data_version"]

    def providers(self) -> dict[str, dict[str, Any]]:
        """Provider records by slug (without offers), cached per data version."""
        version = self.data_version
        cached = self._providers
        if cached is None or cached[0] != version:
            with self.engine.connect() as conn:
                records = offers.list_providers(conn).records
            cached = (version, {r["slug"]: r for r in records})
            self._providers = cached
        return cached[1]

    def providers_in(self, lang: str) -> dict[str, dict[str, Any]]:
        """Provider records by slug with the catalog's text in ``lang``, per data version."""
        version = self.data_version
        key = (version, lang)
        found = self._localized_providers.get(key)
        if found is None:
            found = self.formatter(lang).catalog.localize(self.providers())
            # Only the current version's entries are kept.
            self._localized_providers = {
                k: v for k, v in self._localized_providers.items() if k[0] == version
            }
            self._localized_providers[key] = found
        return found

    def formatter(self, lang: str) -> Formatter:
        """The formatter of ``lang`` with the catalog's text in ``lang``, per data version."""
        version = self.data_version
        cached = self._localized
        if cached is None or cached[0] != version:
            with self.engine.connect() as conn:
                catalog = texts.translations(conn)
            cached = (
                version,
                {k: replace(f, catalog=catalog[k]) for k, f in self.formatters.items()},
            )
            self._localized = cached
        return cached[1][lang]

    def render(self, lang: str, template: str, context: dict[str, Any]) -> str:
        """Render ``template`` in ``lang``."""
        return self.envs[lang].get_template(template).render(context)


def state_of(request: Request) -> AppState:
    """The AppState of the app serving ``request``."""
    state: AppState = request.app.state.cs
    return state
