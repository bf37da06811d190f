"""Launch files and the fabric check script for an offer (or a plan option), from the catalog.

The generators (``clusterscout.launch``) need the catalog's own offers and ``launch.toml``,
which the database does not hold, so this service reads them from the data directory the
database is built from, once per content version of that directory.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Connection

from clusterscout.app.database import CatalogInvalidError
from clusterscout.app.plans import run_plan
from clusterscout.catalog.launch_data import load_launch
from clusterscout.catalog.load import load_catalog
from clusterscout.catalog.problems import has_errors
from clusterscout.domain.errors import InputError
from clusterscout.domain.launch import LaunchKnowledge
from clusterscout.domain.models import GpuSpec, Offer
from clusterscout.launch.checkscript import check_script
from clusterscout.launch.generate import launch_files
from clusterscout.launch.request import (
    FormatResult,
    LaunchAnswer,
    LaunchFile,
    LaunchFormat,
    LaunchRequest,
    TrainingLayout,
    UnsupportedError,
)
from clusterscout.model.inputs import Sharding
from clusterscout.model.planner.results import PlanOption, PlanResult
from clusterscout.store.build import data_version

MAX_NODES: Final = 4096
"""Above any cluster the catalog lists; a larger count is a typo, not a plan."""
CHECK: Final = "check"
"""The fabric check script, offered next to the three launch formats."""
FILE_KINDS: Final = ("skypilot", "dstack-fleet", "dstack-task", "slurm", CHECK)
"""What ``GET /api/v1/launch/{offer_id}/{kind}`` serves: one file each."""
_LAYOUT_KEYS: Final = ("tp", "pp", "dp", "micro_batch", "global_batch")


class UnknownOfferError(InputError):
    """No offer of the catalog has this id (the web answers 404)."""

    def __init__(self, offer_id: str) -> None:
        super().__init__("offer_id", f"no offer {offer_id!r} in the catalog")


@dataclass(frozen=True, slots=True)
class LaunchData:
    """The catalog's offers, the launch knowledge, GPU figures and published measurements."""

    offers: Mapping[str, Offer]
    knowledge: LaunchKnowledge
    gpus: tuple[GpuSpec, ...]
    measurements: tuple[Mapping[str, Any], ...]

    def offer(self, offer_id: str) -> Offer:
        """The offer with this id.

        Raises:
            UnknownOfferError: when the catalog has none.
        """
        found = self.offers.get(offer_id)
        if found is None:
            raise UnknownOfferError(offer_id)
        return found


def launch_data(data_dir: Path) -> LaunchData:
    """The launch data of ``data_dir``, read again only when a file there changes.

    Raises:
        CatalogInvalidError: when the catalog or ``launch.toml`` has errors.
    """
    return _load(data_dir.resolve(), data_version(data_dir))


@functools.lru_cache(maxsize=4)
def _load(data_dir: Path, version: str) -> LaunchData:
    del version  # only part of the cache key
    result = load_catalog(data_dir)
    problems = list(result.problems)
    if result.catalog is None or has_errors(problems):
        raise CatalogInvalidError(problems)
    knowledge = load_launch(data_dir, problems, result.catalog)
    if has_errors(problems):
        raise CatalogInvalidError(problems)
    return LaunchData(
        offers={o.id: o for o in result.catalog.offers},
        knowledge=knowledge,
        gpus=result.catalog.gpus,
        measurements=_measurements(data_dir / "measurements.json"),
    )


def _measurements(path: Path) -> tuple[Mapping[str, Any], ...]:
    """The points of ``measurements.json``: a list, or an object with ``points`` (both shapes)."""
    if not path.is_file():
        return ()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()  # check-model reports a broken file; pages simply show no measurement
    points = raw.get("points") if isinstance(raw, dict) else raw
    if not isinstance(points, list):
        return ()
    return tuple(p for p in points if isinstance(p, Mapping))


COUNT_LIMIT: Final = 1_000_000
"""The bound of a count no other rule bounds (a layout degree, a plan option's rank)."""


def _positive_int(value: Any, field: str, maximum: int = COUNT_LIMIT) -> int:
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 20:
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(field, f"expected a positive whole number (got {str(value)[:40]})")
    if value > maximum:
        raise InputError(field, f"must be at most {maximum} (got {str(value)[:40]})")
    return value


def parse_nodes(offer: Offer, value: Any) -> int:
    """The node count for ``offer``: at least 1 and no more than the offer sells.

    Raises:
        InputError: naming ``nodes``.
    """
    nodes = _positive_int(value, "nodes", MAX_NODES)
    reach = max((n for n in (offer.max_nodes, offer.max_nodes_by_quote) if n), default=None)
    if reach is not None and nodes > reach:
        raise InputError("nodes", f"{offer.id} sells at most {reach} nodes (got {nodes})")
    return nodes


def parse_formats(value: Any) -> tuple[LaunchFormat, ...]:
    """One format, or every format when ``value`` is None.

    Raises:
        InputError: naming ``format``.
    """
    if value is None:
        return tuple(LaunchFormat)
    try:
        return (LaunchFormat(str(value).strip().lower()),)
    except ValueError:
        allowed = ", ".join(f.value for f in LaunchFormat)
        raise InputError("format", f"{value!r:.40} is not one of: {allowed}") from None


def parse_layout(value: Any, gpus: int) -> TrainingLayout:
    """A layout object (``tp``, ``pp``, ``dp``, ``sharding``, ``micro_batch``, ``global_batch``).

    Raises:
        InputError: naming ``layout.<key>``, or ``layout`` when tp*pp*dp is not the GPU count.
    """
    if not isinstance(value, Mapping):
        raise InputError("layout", "expected an object with tp, pp, dp, micro_batch, global_batch")
    unknown = sorted(set(value) - {*_LAYOUT_KEYS, "sharding"})
    if unknown:
        raise InputError(f"layout.{unknown[0]}", "unknown key")
    ints = {k: _positive_int(value.get(k), f"layout.{k}") for k in _LAYOUT_KEYS}
    sharding = value.get("sharding", Sharding.NONE.value)
    if sharding not in {s.value for s in Sharding}:
        allowed = ", ".join(s.value for s in Sharding)
        raise InputError("layout.sharding", f"{sharding!r:.40} is not one of: {allowed}")
    if ints["tp"] * ints["pp"] * ints["dp"] != gpus:
        product = ints["tp"] * ints["pp"] * ints["dp"]
        raise InputError("layout", f"tp*pp*dp is {product}, but the cluster has {gpus} GPUs")
    return TrainingLayout(sharding=str(sharding), **ints)


def plan_option(conn: Connection, plan_body: Any, k: Any) -> PlanOption:
    """Option ``k`` of the plan for ``plan_body``: its rank by cost, the "#" of ``plan``.

    Raises:
        InputError: naming the plan field at fault or ``plan_option``.
    """
    return option_by_rank(lambda body: run_plan(conn, body), plan_body, k)


def option_by_rank(planner: Callable[[Any], PlanResult], plan_body: Any, k: Any) -> PlanOption:
    """Option ``k`` (its rank by cost) of the plan ``planner`` makes for ``plan_body``.

    Raises:
        InputError: naming the plan field at fault or ``plan_option``.
    """
    rank = _positive_int(k, "plan_option")
    options = planner(plan_body).options
    found = next((o for o in options if o.rank_by_cost == rank), None)
    if found is None:
        raise InputError("plan_option", f"the plan has {len(options)} options (got {rank})")
    return found


_BODY_KEYS: Final = frozenset({"offer_id", "nodes", "format", "layout", "plan", "plan_option"})
OptionOf = Callable[[Any, Any], PlanOption]
"""``(plan body, k) -> option k``: runs the planner (``plan_option`` over a connection)."""


def run_launch(data: LaunchData, body: Any, option_of: OptionOf) -> LaunchAnswer:
    """The answer to a launch body: ``offer_id``, ``nodes``, ``format`` (all when absent), and
    a ``layout`` object or a ``plan`` body with ``plan_option`` K (whose offer and nodes it is).

    Raises:
        InputError: naming the key at fault; UnknownOfferError for an unknown offer.
    """
    if not isinstance(body, Mapping):
        raise InputError("body", "expected a JSON object")
    unknown = sorted(set(body) - _BODY_KEYS)
    if unknown:
        raise InputError(str(unknown[0])[:80], "unknown key")
    offer_id = body.get("offer_id")
    if not isinstance(offer_id, str) or not offer_id:
        raise InputError("offer_id", "required: the id of an offer, e.g. 'aws-p5-h100'")
    offer = data.offer(offer_id)
    formats = parse_formats(body.get("format"))
    given = body.get("nodes")
    nodes = None if given is None else parse_nodes(offer, given)
    layout = None
    if body.get("plan_option") is not None:
        if body.get("layout") is not None:
            raise InputError("layout", "give a layout or a plan option, not both")
        k = body["plan_option"]
        option = option_of(body.get("plan") or {}, k)
        if option.offer.offer_id != offer.id:
            raise InputError(
                "plan_option", f"option {k} is {option.offer.offer_id}, not {offer.id}"
            )
        if nodes is not None and nodes != option.nodes:
            raise InputError("nodes", f"option {k} runs on {option.nodes} nodes (got {nodes})")
        nodes, layout = option.nodes, TrainingLayout.of(option.layout)
    elif body.get("plan") is not None:
        raise InputError("plan_option", "required with a plan: which option (its rank by cost)")
    if nodes is None:
        raise InputError("nodes", "required (or give a plan option)")
    if layout is None and body.get("layout") is not None:
        if offer.gpus_per_node is None:
            raise InputError("layout", f"the catalog does not state GPUs per node of {offer.id}")
        layout = parse_layout(body["layout"], nodes * offer.gpus_per_node)
    return launch(data, offer, nodes, formats, layout)


def _result(fmt: str, make: Callable[[], Iterable[LaunchFile]]) -> FormatResult:
    try:
        return FormatResult(fmt, tuple(make()))
    except UnsupportedError as exc:
        return FormatResult(fmt, reason=exc.reason, why=exc.why)


def launch(
    data: LaunchData,
    offer: Offer,
    nodes: int,
    formats: Sequence[LaunchFormat] = tuple(LaunchFormat),
    layout: TrainingLayout | None = None,
) -> LaunchAnswer:
    """Files for ``nodes`` nodes of ``offer`` in each format (or the reason there are none)."""
    request = LaunchRequest(offer, nodes, layout)
    results = tuple(
        _result(f.value, functools.partial(launch_files, data.knowledge, request, f))
        for f in formats
    )
    check = _result(CHECK, lambda: (check_script(data.knowledge, request),))
    return LaunchAnswer(request, results, check)


def file_of(answer: LaunchAnswer, kind: str) -> LaunchFile:
    """The one file ``kind`` (see ``FILE_KINDS``) of an answer.

    Raises:
        UnsupportedError: with the tool's reason when it cannot target the offer.
        InputError: naming ``kind`` when it is not one of ``FILE_KINDS``.
    """
    if kind not in FILE_KINDS:
        raise InputError("kind", f"{kind!r:.40} is not one of: {', '.join(FILE_KINDS)}")
    fmt, _, part = kind.partition("-")
    result = answer.check if kind == CHECK else next(r for r in answer.formats if r.format == fmt)
    if result.why is not None:
        raise UnsupportedError(result.why)
    if not part:
        return result.files[0]
    return next(f for f in result.files if f.filename.endswith(f".{part}.dstack.yml"))
