"""Per-app state: settings, database engine, one Jinja environment per locale, build metadata."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from gettext import NullTranslations
from pathlib import Path
from typing import Any, Final

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from sqlalchemy import Connection, Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from clusterscout.app import database, offers, texts
from clusterscout.app.database import Snapshot
from clusterscout.app.plan_queue import PlanQueue, PlanRunner
from clusterscout.app.plan_workers import LocalPlanner, PlanWorkers
from clusterscout.settings import Settings
from clusterscout.version import __version__
from clusterscout.web.i18n import KNOWN_LOCALES, Formatter, formatter, load_translations
from clusterscout.web.memo import Memo, SingleFlight
from clusterscout.web.middleware import ResponseCache

WEB_DIR: Final = Path(__file__).resolve().parent
TEMPLATE_DIR: Final = WEB_DIR / "templates"
STATIC_DIR: Final = WEB_DIR / "static"
MEMO_ENTRIES: Final = 2048
ROW_ENTRIES: Final = 1024
CHECKBOX_ENTRIES: Final = 4096
"""Most facet checkboxes each language keeps rendered before it starts over."""
"""Offer rows kept rendered: every offer in each language (about 540) with room for tiers;
a row with its view model is about 15 KB, so at most about 15 MB."""
ANSWER_CACHE_BYTES: Final = 16 * 1024 * 1024
SNAPSHOT_KEY: Final = "clusterscout.snapshot"
LOCAL_PLAN_THREADS: Final = 2
"""Threads computing plans when there are no worker processes (tests, a small install)."""


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
    env.globals["kept_checkbox"] = _kept_checkbox(env)
    return env


def _kept_checkbox(env: Environment) -> Callable[[str, Any], Markup]:
    """``facet_checkbox`` of ``_macros.html``, kept by what it shows (group name and option).

    Why: the sidebar's hundred checkboxes, escaped field by field, were a fifth of an
    uncached listing's rendering; most look the same from one filter set to the next. The
    key is everything the macro reads (an option is a frozen dataclass), so a kept checkbox
    is the one the macro would render. The table starts over when full.
    """
    kept: dict[tuple[str, Any], Markup] = {}

    def render(name: str, option: Any) -> Markup:
        key = (name, option)
        found = kept.get(key)
        if found is None:
            macro = env.get_template("_macros.html").module.facet_checkbox  # type: ignore[attr-defined]
            # A macro of an autoescaping environment returns Markup: escaped once, here.
            found = macro(name, option)
            if len(kept) >= CHECKBOX_ENTRIES:
                kept.clear()
            kept[key] = found
        return found

    return render


@dataclass
class AppState:
    """Everything a request handler needs; created once per app by ``create_app``."""

    settings: Settings
    engine: Engine
    envs: dict[str, Environment] = field(default_factory=dict)
    formatters: dict[str, Formatter] = field(default_factory=dict)
    asset_version: str = ""
    inline_reads: bool = False
    """SQLite: short reads run on the event loop (see ``reads_local_db``)."""
    _providers: tuple[str, dict[str, dict[str, Any]]] | None = None
    _localized: tuple[str, dict[str, Formatter]] | None = None
    _localized_providers: dict[tuple[str, str], dict[str, dict[str, Any]]] = field(
        default_factory=dict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)
    memo: Memo = field(default_factory=lambda: Memo(MEMO_ENTRIES))
    """Model answers (plans, charts, reference estimates), keyed with the data version."""
    answers: ResponseCache = field(default_factory=lambda: ResponseCache(ANSWER_CACHE_BYTES))
    """JSON answers of POST /plan and /estimate by data version and body digest."""
    flights: SingleFlight = field(default_factory=SingleFlight)
    """Plans and estimates being computed, by key (concurrent duplicates wait for them)."""
    plan_runner: PlanWorkers | LocalPlanner | None = None
    """What computes plans: worker processes (``Settings.plan_workers``) or local threads."""
    plans: PlanQueue | None = None
    plan_version: str = ""
    """The data version the last POST /plan read (refusals look up the answer cache with it)."""
    plan_flights: dict[str, asyncio.Future[bytes]] = field(default_factory=dict)
    """POST /plan answers being computed, by key (only touched on the event loop)."""
    """The bounded queue every plan of the web surface goes through (ADR 0022)."""
    rows: Memo = field(default_factory=lambda: Memo(ROW_ENTRIES))
    """Listing rows (view model and HTML), keyed with the data version, language, tier, day."""

    @classmethod
    def create(cls, settings: Settings, engine: Engine) -> AppState:
        """Load translations and build template environments."""
        state = cls(
            settings,
            engine,
            asset_version=_asset_version(),
            inline_reads=engine.dialect.name == "sqlite",
        )
        runner: PlanWorkers | LocalPlanner
        if settings.plan_workers:
            url = engine.url.render_as_string(hide_password=False)
            runner = PlanWorkers(url, settings.plan_workers)
        else:
            runner = LocalPlanner(engine, LOCAL_PLAN_THREADS)
        state.plan_runner = runner
        state.plans = plan_queue_for(settings, runner)
        for lang in KNOWN_LOCALES:
            translations = load_translations(lang)
            state.envs[lang] = _environment(translations)
            state.formatters[lang] = formatter(lang, translations)
        return state

    def providers(self, snap: Snapshot) -> dict[str, dict[str, Any]]:
        """Provider records by slug (without offers), cached per data version."""
        cached = self._providers
        if cached is None or cached[0] != snap.data_version:
            records = offers.list_providers(snap.conn).records
            cached = (snap.data_version, {r["slug"]: r for r in records})
            with self._lock:
                self._providers = cached
        return cached[1]

    def providers_in(self, snap: Snapshot, lang: str) -> dict[str, dict[str, Any]]:
        """Provider records by slug with the catalog's text in ``lang``, per data version."""
        version = snap.data_version
        key = (version, lang)
        found = self._localized_providers.get(key)
        if found is None:
            found = self.formatter(snap, lang).catalog.localize(self.providers(snap))
            with self._lock:
                # Only the current version's entries are kept.
                self._localized_providers = {
                    k: v for k, v in self._localized_providers.items() if k[0] == version
                }
                self._localized_providers[key] = found
        return found

    def formatter(self, snap: Snapshot, lang: str) -> Formatter:
        """The formatter of ``lang`` with the catalog's text in ``lang``, per data version."""
        version = snap.data_version
        cached = self._localized
        if cached is None or cached[0] != version:
            catalog = texts.translations(snap.conn)
            cached = (
                version,
                {k: replace(f, catalog=catalog[k]) for k, f in self.formatters.items()},
            )
            self._localized = cached
        return cached[1][lang]

    def open_view(self, scope: Scope) -> str:
        """Open the request's snapshot (kept in its scope); the ETag's version string."""
        snap = _open(scope, self.engine)
        return f"{snap.data_version}:{self.asset_version}"

    def render(self, lang: str, template: str, context: dict[str, Any]) -> str:
        """Render ``template`` in ``lang``."""
        return self.envs[lang].get_template(template).render(context)


def plan_queue_for(settings: Settings, runner: PlanRunner) -> PlanQueue:
    """The plan queue the settings describe over ``runner``."""
    return PlanQueue(
        runner,
        capacity=runner.slots + settings.plan_queue,
        per_client=settings.plan_per_client,
        deadline_s=settings.plan_deadline_s,
    )


def plan_queue_of(request: Request) -> PlanQueue:
    """The app's plan queue."""
    queue = state_of(request).plans
    if queue is None:  # pragma: no cover - AppState.create always sets it
        msg = "the app has no plan queue"
        raise RuntimeError(msg)
    return queue


def client_of(request: Request) -> str:
    """Who a per-client bound counts against: the peer address (behind a reverse proxy,
    uvicorn's ``--proxy-headers`` with ``--forwarded-allow-ips`` makes it the real client)."""
    return request.client.host if request.client is not None else "unknown"


def reads_local_db(endpoint: Callable[..., Response]) -> Callable[..., Awaitable[Response]]:
    """Run a short, read-only sync endpoint on the event loop when the database is SQLite.

    A SQLite read is local and takes about a millisecond; the hop to a worker thread and back
    cost about a sixth of an API answer's CPU. Pages that render for several milliseconds gain
    more: in worker threads, sixteen at once spent a fifth (a listing) to twice (a provider)
    more CPU each contending with the loop for the interpreter lock, and served fewer requests,
    with a longer tail, than one at a time on the loop. With a database over the network the
    endpoint still runs in a worker thread, so a slow server never blocks the loop. Not for
    endpoints that wait on the plan worker.
    """
    # FastAPI reads the parameters from the signature: give it the endpoint's, resolved.
    signature = inspect.signature(endpoint, eval_str=True)

    @functools.wraps(endpoint)
    async def run(*args: Any, **kwargs: Any) -> Response:
        request = kwargs.get("request", args[0] if args else None)
        if isinstance(request, Request) and state_of(request).inline_reads:
            return endpoint(*args, **kwargs)
        return await run_in_threadpool(endpoint, *args, **kwargs)

    run.__signature__ = signature  # type: ignore[attr-defined]
    return run


def state_of(request: Request) -> AppState:
    """The AppState of the app serving ``request``."""
    state: AppState = request.app.state.cs
    return state


def _open(scope: Scope, engine: Engine) -> Snapshot:
    store: dict[str, Any] = scope.setdefault("state", {})
    snap: Snapshot | None = store.get(SNAPSHOT_KEY)
    if snap is None:
        snap = database.open_snapshot(engine)
        store[SNAPSHOT_KEY] = snap
    return snap


def open_snapshot_of(request: Request) -> Snapshot | None:
    """The request's snapshot if one is open, without opening one (for error pages: they may
    be rendered outside the middleware that closes it, or with the database down)."""
    snap: Snapshot | None = (request.scope.get("state") or {}).get(SNAPSHOT_KEY)
    return snap


def snapshot_of(request: Request) -> Snapshot:
    """The request's one consistent read of the database (opened on first use).

    Every handler reads through it, so its answer and the data version it reports (and the
    ETag) always belong together, even while a refresh or a rebuild commits.
    """
    return _open(request.scope, state_of(request).engine)


@contextmanager
def reading(request: Request) -> Iterator[Connection]:
    """The connection of the request's snapshot (left open: the request ends it)."""
    yield snapshot_of(request).conn


def close_view(scope: Scope) -> None:
    """End the request's snapshot, if it opened one."""
    snap: Snapshot | None = (scope.get("state") or {}).pop(SNAPSHOT_KEY, None)
    if snap is not None:
        snap.close()
