"""Read and check ``data/launch.toml`` (fabric environments, SkyPilot and dstack targets).

The schema is strict like every data file: unknown keys, wrong types and source ids that do
not resolve are errors. Cross-file checks need the catalog: providers, offers and GPUs named
here must exist, and every provider with a multi-node offer on a known fabric needs a SkyPilot
and a dstack entry (saying what works or why not).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from clusterscout.catalog.load import _Resolver, _sources_by_id
from clusterscout.catalog.problems import Problem, Severity
from clusterscout.catalog.reading import _read_toml, _rel, _validate
from clusterscout.catalog.schema import Lax, ShortText, Slug, SourceIds, SourceIn, Text, _Strict
from clusterscout.domain.launch import (
    CONTROL_CHARACTERS,
    ENV_REFERENCE,
    Command,
    DstackGpu,
    DstackTarget,
    EnvVar,
    LaunchKnowledge,
    Scope,
    SkyPilotAccelerator,
    SkyPilotTarget,
)
from clusterscout.domain.models import CatalogData, FabricKind, MultiNode

LAUNCH_FILE = "launch.toml"
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]*$", max_length=80)]
ToolName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=40)]


def _shell_line(value: str) -> str:
    if CONTROL_CHARACTERS.search(value) or "'" in value:
        msg = "must be one line with no control characters and no single quote"
        raise ValueError(msg)
    return value


ShellLine = Annotated[
    str, StringConstraints(min_length=1, max_length=400), AfterValidator(_shell_line)
]
"""A setup or preflight command: shell on purpose, but one line and no single quote (the
generators wrap some commands in single quotes)."""


def _env_value(value: str) -> str:
    rest = ENV_REFERENCE.sub("", value)
    for bad, what in (("$", "a $ other than ${NAME} or ${NAME:-}"), ("`", "a backtick")):
        if bad in rest:
            msg = f"must not contain {what}: values are data, not shell commands"
            raise ValueError(msg)
    return value


EnvValue = Annotated[ShellLine, AfterValidator(_env_value)]


class _ScopeIn(_Strict):
    fabric: Lax[FabricKind]
    provider: Slug | None = None
    offers: list[Slug] = Field(default_factory=list)

    @model_validator(mode="after")
    def _offers_need_provider(self) -> _ScopeIn:
        if self.offers and self.provider is None:
            msg = "offers can only narrow a provider entry; add provider"
            raise ValueError(msg)
        return self


class EnvIn(_ScopeIn):
    """An `[[env]]` entry: a variable (or, without value, a documented "leave unset")."""

    name: EnvName
    value: EnvValue | None = None
    comment: ShortText
    source: Slug


class CommandIn(_ScopeIn):
    """A `[[setup]]` or `[[preflight]]` shell command."""

    command: ShellLine
    comment: ShortText
    source: Slug


class SkyPilotIn(_Strict):
    """A `[[skypilot]]` entry: SkyPilot's infra name for a provider, or a note why none."""

    provider: Slug
    cloud: ToolName | None = None
    multi_node: bool | None = None
    network_tier_best: bool | None = None
    network_tier_gpus: list[ShortText] = Field(default_factory=list)
    note: Text | None = None
    sources: SourceIds

    @model_validator(mode="after")
    def _complete(self) -> SkyPilotIn:
        if self.cloud is not None and (self.multi_node is None or self.network_tier_best is None):
            msg = "a provider SkyPilot targets needs multi_node and network_tier_best"
            raise ValueError(msg)
        if self.cloud is None and self.note is None:
            msg = "say in note why SkyPilot cannot target the provider"
            raise ValueError(msg)
        return self


class AcceleratorIn(_Strict):
    """A `[[skypilot_accelerators]]` entry."""

    gpu: ShortText
    name: ShortText
    clouds: list[ToolName] = Field(min_length=1)
    offers: list[Slug] = Field(default_factory=list)
    sources: SourceIds


class DstackIn(_Strict):
    """A `[[dstack]]` entry: dstack's backend for a provider, or a note why none."""

    provider: Slug
    backend: ToolName | None = None
    multi_node: bool | None = None
    note: Text | None = None
    sources: SourceIds

    @model_validator(mode="after")
    def _complete(self) -> DstackIn:
        if self.backend is not None and self.multi_node is None:
            raise ValueError("a provider dstack targets needs multi_node")
        if (self.backend is None or self.multi_node is False) and self.note is None:
            raise ValueError("say in note why dstack cannot provision clusters there")
        return self


class DstackGpuIn(_Strict):
    """A `[[dstack_gpus]]` entry."""

    gpu: ShortText
    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9]+(:\d+GB)?$")]
    sources: SourceIds


class LaunchFileIn(_Strict):
    """The whole of data/launch.toml."""

    sources: list[SourceIn] = Field(min_length=1)
    env: list[EnvIn] = Field(default_factory=list)
    setup: list[CommandIn] = Field(default_factory=list)
    preflight: list[CommandIn] = Field(default_factory=list)
    skypilot: list[SkyPilotIn] = Field(default_factory=list)
    skypilot_accelerators: list[AcceleratorIn] = Field(default_factory=list)
    dstack: list[DstackIn] = Field(default_factory=list)
    dstack_gpus: list[DstackGpuIn] = Field(default_factory=list)


def _scope(entry: _ScopeIn) -> Scope:
    return Scope(FabricKind(entry.fabric), entry.provider, tuple(entry.offers))


def load_launch(
    data_dir: Path, problems: list[Problem], catalog: CatalogData | None = None
) -> LaunchKnowledge:
    """Read ``launch.toml`` (optional: absent means no launch knowledge).

    Problems go to ``problems``; with ``catalog`` the cross-file checks run too.
    """
    path = data_dir / LAUNCH_FILE
    if not path.exists():
        return LaunchKnowledge()
    label = _rel(path, data_dir)
    raw = _read_toml(path, label, problems)
    parsed = _validate(LaunchFileIn, raw, label, problems) if raw is not None else None
    if parsed is None:
        return LaunchKnowledge()
    res = _Resolver(_sources_by_id(parsed.sources, label, problems), label, problems)
    knowledge = LaunchKnowledge(
        env=tuple(
            EnvVar(_scope(e), e.name, e.value, e.comment, src)
            for i, e in enumerate(parsed.env)
            # An unresolved id is reported by the resolver; the entry is left out.
            if (src := res.one(e.source, f"env[{i}].source")) is not None
        ),
        setup=_commands(parsed.setup, "setup", res),
        preflight=_commands(parsed.preflight, "preflight", res),
        skypilot=tuple(
            SkyPilotTarget(
                provider=s.provider,
                note=s.note,
                sources=res.many(s.sources, f"skypilot[{i}].sources"),
                cloud=s.cloud,
                multi_node=bool(s.multi_node),
                network_tier_best=bool(s.network_tier_best),
                network_tier_gpus=tuple(s.network_tier_gpus),
            )
            for i, s in enumerate(parsed.skypilot)
        ),
        skypilot_accelerators=tuple(
            SkyPilotAccelerator(
                gpu=a.gpu,
                name=a.name,
                clouds=tuple(a.clouds),
                sources=res.many(a.sources, f"skypilot_accelerators[{i}].sources"),
                offers=tuple(a.offers),
            )
            for i, a in enumerate(parsed.skypilot_accelerators)
        ),
        dstack=tuple(
            DstackTarget(
                provider=d.provider,
                note=d.note,
                sources=res.many(d.sources, f"dstack[{i}].sources"),
                backend=d.backend,
                multi_node=bool(d.multi_node),
            )
            for i, d in enumerate(parsed.dstack)
        ),
        dstack_gpus=tuple(
            DstackGpu(g.gpu, g.name, res.many(g.sources, f"dstack_gpus[{i}].sources"))
            for i, g in enumerate(parsed.dstack_gpus)
        ),
    )
    for sid in sorted(set(res.by_id) - res.used):
        problems.append(
            Problem(
                label, f"sources[{sid}]", "source is never cited", Severity.WARNING, "unused-source"
            )
        )
    if catalog is not None:
        problems.extend(check_launch(knowledge, catalog, label))
    return knowledge


def _commands(items: list[CommandIn], key: str, res: _Resolver) -> tuple[Command, ...]:
    return tuple(
        Command(_scope(c), c.command, c.comment, src)
        for i, c in enumerate(items)
        if (src := res.one(c.source, f"{key}[{i}].source")) is not None
    )


def _duplicates(label: str, key: str, names: Iterable[str]) -> list[Problem]:
    seen: set[str] = set()
    out: list[Problem] = []
    for i, name in enumerate(names):
        if name in seen:
            out.append(Problem(label, f"{key}[{i}]", f"second entry for {name!r}"))
        seen.add(name)
    return out


def check_launch(knowledge: LaunchKnowledge, catalog: CatalogData, label: str) -> list[Problem]:
    """Names in launch.toml exist in the catalog; every multi-node provider has tool entries."""
    problems: list[Problem] = []
    providers = {p.slug for p in catalog.providers}
    offers = {o.id for o in catalog.offers}
    gpus = {g.name for g in catalog.gpus}
    scoped = [("env", e.scope) for e in knowledge.env] + [
        (key, c.scope)
        for key, group in (("setup", knowledge.setup), ("preflight", knowledge.preflight))
        for c in group
    ]
    counters: dict[str, int] = {}
    for key, scope in scoped:
        i = counters[key] = counters.get(key, -1) + 1
        if scope.provider is not None and scope.provider not in providers:
            problems.append(
                Problem(label, f"{key}[{i}].provider", f"unknown provider {scope.provider!r}")
            )
        for offer in scope.offers:
            if offer not in offers:
                problems.append(Problem(label, f"{key}[{i}].offers", f"unknown offer {offer!r}"))
    for key, targets in (("skypilot", knowledge.skypilot), ("dstack", knowledge.dstack)):
        names = [t.provider for t in targets]
        problems.extend(_duplicates(label, key, names))
        for i, name in enumerate(names):
            if name not in providers:
                problems.append(
                    Problem(label, f"{key}[{i}].provider", f"unknown provider {name!r}")
                )
    for key, gpu_names in (
        ("skypilot_accelerators", [a.gpu for a in knowledge.skypilot_accelerators]),
        ("dstack_gpus", [g.gpu for g in knowledge.dstack_gpus]),
    ):
        for i, gpu in enumerate(gpu_names):
            if gpu not in gpus:
                problems.append(Problem(label, f"{key}[{i}].gpu", f"unknown GPU {gpu!r}"))
    for i, target in enumerate(knowledge.skypilot):
        for gpu in target.network_tier_gpus:
            if gpu not in gpus:
                problems.append(
                    Problem(label, f"skypilot[{i}].network_tier_gpus", f"unknown GPU {gpu!r}")
                )
    problems.extend(_dstack_gpu_duplicates(knowledge, label))
    needed = {
        o.provider
        for p in catalog.providers
        if p.multi_node is MultiNode.YES
        for o in p.offers
        if o.fabric is not None
    }
    for key, targets in (("skypilot", knowledge.skypilot), ("dstack", knowledge.dstack)):
        have = {t.provider for t in targets}
        for slug in sorted(needed - have):
            what = f"no [[{key}]] entry for {slug!r}, which sells multi-node clusters"
            problems.append(Problem(label, key, what, Severity.WARNING, "launch-target"))
    return problems


def _dstack_gpu_duplicates(knowledge: LaunchKnowledge, label: str) -> list[Problem]:
    return _duplicates(label, "dstack_gpus", [g.gpu for g in knowledge.dstack_gpus])
