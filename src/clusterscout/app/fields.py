"""The one table of fields people can set: offer filters and plan inputs, on every surface.

Each row says what a field is (kind, allowed values, bounds), its help and label (message ids,
translated by the web layer) and where it is used. Everything else is derived from it:

- offer-filter parsing for the API, the pages and the CLI (``app.inputs.parse_offer_filter``);
- plan-input parsing for ``POST /api/v1/plan``, the plan page and ``clusterscout plan``;
- the CLI options of ``offers`` and ``plan`` (``cli.options``);
- the OpenAPI parameters of ``/api/v1/offers`` and the body schema of ``/api/v1/plan``;
- the filter sidebar's groups (``web.facets``) and the plan form (``web.plan_form``).

Adding a field is adding a row (see docs/adr/0009-one-house-plan.md for the rest of the path).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from clusterscout.catalog.filters import ClusterMaxChoice, TopologyClaim, Unknowable
from clusterscout.domain.messages import N_
from clusterscout.domain.models import (
    BillingGranularity,
    FabricKind,
    OrchestrationKind,
    PriceTier,
    ProvisioningMode,
)
from clusterscout.model.goodput import MAX_FAILURE_RATE, MAX_MINUTES
from clusterscout.model.inputs import JobKind, Precision, Stack
from clusterscout.model.planner.request import (
    DEFAULT_MAX_NODES,
    MAX_BATCH_TOKENS,
    MAX_CONCURRENCY,
    MAX_LORA_RANK,
    MAX_PARAMS,
    MAX_PLAN_NODES,
    MAX_SEQ_LEN,
    MAX_STEPS,
    MAX_TARGET_TOKENS_PER_S,
    MAX_TOKENS,
    MIN_PARAMS,
)
from clusterscout.model.presets import PRESETS

MAX_BUDGET_USD: Final = 1e12
"""A budget past a trillion dollars is a typo, not a constraint."""
MAX_DEADLINE_HOURS: Final = 1e6
"""About 114 years: a deadline past it constrains nothing."""


class Kind(StrEnum):
    """How a field's text is read."""

    BOOL = "bool"
    """``true`` or ``false`` (also yes/no, 1/0, on/off); a bare CLI flag means true."""
    CHOICE = "choice"
    """One of ``choices`` (case-insensitive, dashes read as underscores)."""
    NUMBER = "number"
    """A finite decimal number within the bounds."""
    INTEGER = "integer"
    """A whole number within the bounds."""
    TEXT = "text"
    """Free text, matched case-insensitively."""
    GPU = "gpu"
    """A GPU model: canonical name or alias, resolved against the catalog."""
    PROVIDER = "provider"
    """A provider slug that exists in the catalog."""
    REGION = "region"
    """A continent or sub-region, a country (code or name) or a provider region or alias
    (data/regions.toml), else a substring of a region name; anything else is refused."""
    PRESET = "preset"
    """A model preset name (the planner checks it)."""


class Use(StrEnum):
    """Where a field is accepted."""

    OFFER_FILTER = "offer_filter"
    """Narrows offer lists: API query parameter, page facet, ``clusterscout offers`` option."""
    PLAN_INPUT = "plan_input"
    """Describes the job or its limits: a field of the planner's request."""
    PLAN_FILTER = "plan_filter"
    """Narrows the offers a plan considers, parsed exactly as the offer filter."""


class Widget(StrEnum):
    """How a page shows a field."""

    SELECT = "select"
    CHECKBOXES = "checkboxes"
    CHECKBOX = "checkbox"
    NUMBER = "number"
    TEXT = "text"


class FormSection(StrEnum):
    """The plan form's fieldsets, in page order."""

    JOB = "job"
    LIMITS = "limits"
    NARROW = "narrow"


@dataclass(frozen=True, slots=True)
class Facet:
    """How the offer pages' filter sidebar shows a field.

    Attributes:
        widget: the control.
        hint: a message id shown under the group.
        empty: a message id for a select's "no filter" option.
        option_label: a message id for a single checkbox, or for suggested numbers
            (``%(num)s`` is the number).
        placeholder: a message id for a text input.
        step: the ``step`` of a number input.
        suggestions: values offered by a select, besides "any".
        all_offers_only: shown on ``/offers/`` but not on ``/multi-node/`` (where it is fixed).
    """

    widget: Widget
    hint: str = ""
    empty: str = N_("any")
    option_label: str = ""
    placeholder: str = ""
    step: str = "any"
    suggestions: tuple[float, ...] = ()
    all_offers_only: bool = False


@dataclass(frozen=True, slots=True)
class FormField:
    """How the plan page's form shows a field.

    Attributes:
        section: the fieldset it belongs to.
        widget: the control.
        label: a message id; the field's label when empty.
        placeholder: a message id for a text input.
        empty: a message id for the select option that leaves the field unset (None: no such
            option).
        empty_last: list that option after the values (an alternative, not a default).
        default: the value on a fresh form.
        advice: a message id shown when the planner rejects the value.
    """

    section: FormSection
    widget: Widget
    label: str = ""
    placeholder: str = ""
    empty: str | None = None
    empty_last: bool = False
    default: str = ""
    advice: str = ""


@dataclass(frozen=True, slots=True)
class Field:
    """One field people can set.

    Attributes:
        name: the API/query name; the CLI flag is ``--`` plus the name with dashes.
        kind: how its text is read.
        help: one English sentence for the CLI help and the API docs (a message id too).
        label: a message id for pages.
        uses: where it is accepted.
        enum: the allowed values of a CHOICE field, parsed to its members.
        choices: allowed values of a PRESET field (checked by the planner).
        minimum: smallest number accepted (documented; numbers are never negative).
        maximum: largest number accepted (or longest text, for TEXT).
        repeatable: several values, any (or, for ``all_of``, every) of which must match.
        all_of: repeated values must all hold (else any one of them).
        facet: the sidebar control, when the offer pages show the field.
        form: the plan form control, when the plan page shows the field.
    """

    name: str
    kind: Kind
    help: str
    label: str
    uses: frozenset[Use]
    enum: type[StrEnum] | None = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    repeatable: bool = False
    all_of: bool = False
    facet: Facet | None = None
    form: FormField | None = None

    @property
    def values(self) -> tuple[str, ...]:
        """The allowed values, in order (empty when any value of the kind goes)."""
        return tuple(m.value for m in self.enum) if self.enum else self.choices

    @property
    def flag(self) -> str:
        """The CLI option, e.g. ``--min-gbps``."""
        return "--" + self.name.replace("_", "-")

    def used_as(self, use: Use) -> bool:
        """True when the field is accepted as ``use``."""
        return use in self.uses


_OFFERS: Final = frozenset({Use.OFFER_FILTER})
MAX_DEADLINE_DAYS: Final = 3650.0
"""Ten years: a longer deadline is a typing slip, not a plan."""
_BOTH: Final = frozenset({Use.OFFER_FILTER, Use.PLAN_FILTER})
_PLAN: Final = frozenset({Use.PLAN_INPUT})

FIELDS: Final[tuple[Field, ...]] = (
    # --- the job (plan inputs) -----------------------------------------------------------------
    Field(
        "model",
        Kind.PRESET,
        N_("Model preset, e.g. 70B (instead of params)."),
        N_("Model size"),
        _PLAN,
        choices=tuple(PRESETS),
        form=FormField(
            FormSection.JOB,
            Widget.SELECT,
            empty=N_("custom size"),
            empty_last=True,
            default="70B",
            advice=N_("Choose a model size, or choose “custom size” and enter a parameter count."),
        ),
    ),
    Field(
        "params",
        Kind.NUMBER,
        N_("Parameter count of a custom model, e.g. 7e9 (instead of model)."),
        N_("Parameters (custom size)"),
        _PLAN,
        minimum=MIN_PARAMS,
        maximum=MAX_PARAMS,
        form=FormField(
            FormSection.JOB,
            Widget.TEXT,
            placeholder=N_("e.g. 3e10"),
            advice=N_("Enter a parameter count between 1e6 and 1e14, for example 3e10 for 30B."),
        ),
    ),
    Field(
        "job",
        Kind.CHOICE,
        N_(
            "What to run: pretrain (the default), full_finetune, lora, qlora or inference "
            "(serving; uses context, concurrency and target_tokens_per_s)."
        ),
        N_("Job"),
        _PLAN,
        enum=JobKind,
        form=FormField(
            FormSection.JOB,
            Widget.SELECT,
            default="pretrain",
            advice=N_("Choose pretrain, full_finetune, lora, qlora or inference."),
        ),
    ),
    Field(
        "tokens",
        Kind.NUMBER,
        N_("Tokens to train, e.g. 1e12."),
        N_("Tokens to train"),
        _PLAN,
        minimum=1,
        maximum=MAX_TOKENS,
        form=FormField(
            FormSection.JOB,
            Widget.TEXT,
            placeholder=N_("e.g. 1e12"),
            default="1e12",
            advice=N_("Enter the tokens to train, between 1 and 1e16, for example 1e12."),
        ),
    ),
    Field(
        "steps",
        Kind.INTEGER,
        N_("Optimizer steps (instead of tokens)."),
        N_("Optimizer steps"),
        _PLAN,
        minimum=1,
        maximum=MAX_STEPS,
    ),
    Field(
        "precision",
        Kind.CHOICE,
        N_(
            "Number format of the matrix multiplications: bf16, fp16 (as bf16) or fp8; "
            "int4 (4-bit weights) for inference only."
        ),
        N_("Precision"),
        _PLAN,
        enum=Precision,
        form=FormField(
            FormSection.JOB,
            Widget.SELECT,
            default="bf16",
            advice=N_("Choose bf16, or fp8 with a GPU that has an fp8 figure."),
        ),
    ),
    Field(
        "stack",
        Kind.CHOICE,
        N_(
            "Training software: megatron (Megatron-LM/NeMo, the default), pytorch "
            "(FSDP/torchtitan class) or deepspeed."
        ),
        N_("Software stack"),
        _PLAN,
        enum=Stack,
        form=FormField(
            FormSection.JOB,
            Widget.SELECT,
            default="megatron",
            advice=N_("Choose megatron, pytorch or deepspeed."),
        ),
    ),
    Field(
        "seq_len",
        Kind.INTEGER,
        N_("Sequence length in tokens (default: the preset's, else 4096)."),
        N_("Sequence length"),
        _PLAN,
        minimum=1,
        maximum=MAX_SEQ_LEN,
    ),
    Field(
        "batch_tokens",
        Kind.INTEGER,
        N_("Tokens per optimizer step (default: the preset's, else 4M or 16M)."),
        N_("Batch size in tokens"),
        _PLAN,
        minimum=1,
        maximum=MAX_BATCH_TOKENS,
    ),
    Field(
        "lora_rank",
        Kind.INTEGER,
        N_("Adapter rank of a lora or qlora job (default 16)."),
        N_("LoRA rank"),
        _PLAN,
        minimum=1,
        maximum=MAX_LORA_RANK,
        form=FormField(
            FormSection.JOB,
            Widget.NUMBER,
            advice=N_("Enter a whole-number rank between 1 and 4096, for a lora or qlora job."),
        ),
    ),
    Field(
        "context",
        Kind.INTEGER,
        N_(
            "Inference: tokens of context each sequence keeps in the KV cache (default: the "
            "preset's sequence length)."
        ),
        N_("Context length (tokens)"),
        _PLAN,
        minimum=1,
        maximum=MAX_SEQ_LEN,
        form=FormField(
            FormSection.JOB,
            Widget.NUMBER,
            advice=N_("Enter a context length in tokens, for the inference job."),
        ),
    ),
    Field(
        "concurrency",
        Kind.INTEGER,
        N_("Inference: sequences decoded at the same time by one replica (default 1)."),
        N_("Concurrent sequences"),
        _PLAN,
        minimum=1,
        maximum=MAX_CONCURRENCY,
        form=FormField(
            FormSection.JOB,
            Widget.NUMBER,
            advice=N_("Enter a whole number of concurrent sequences, for the inference job."),
        ),
    ),
    Field(
        "target_tokens_per_s",
        Kind.NUMBER,
        N_(
            "Inference: output tokens per second to serve in total; replicas are added to reach it."
        ),
        N_("Target tokens/s"),
        _PLAN,
        minimum=0,
        maximum=MAX_TARGET_TOKENS_PER_S,
        form=FormField(
            FormSection.JOB,
            Widget.NUMBER,
            advice=N_("Enter a target in output tokens per second greater than 0."),
        ),
    ),
    Field(
        "allow_spot",
        Kind.BOOL,
        N_(
            "Use spot prices across nodes too (default: no; one pre-empted node stalls a "
            "synchronous multi-node job)."
        ),
        N_("Allow spot prices for multi-node runs"),
        _PLAN,
        form=FormField(
            FormSection.LIMITS,
            Widget.CHECKBOX,
            advice=N_("Tick the box to allow spot prices, or leave it empty."),
        ),
    ),
    Field(
        "failures_per_million_gpu_hours",
        Kind.NUMBER,
        N_(
            "Goodput: unplanned job interruptions per million GPU-hours (default 19.7, from "
            "the Llama 3 report)."
        ),
        N_("Interruptions per million GPU-hours"),
        _PLAN,
        minimum=0,
        maximum=MAX_FAILURE_RATE,
        form=FormField(
            FormSection.LIMITS,
            Widget.NUMBER,
            advice=N_("Enter a rate of 0 or more interruptions per million GPU-hours."),
        ),
    ),
    Field(
        "checkpoint_minutes",
        Kind.NUMBER,
        N_("Goodput: minutes between checkpoints (default 60); half is lost per interruption."),
        N_("Checkpoint interval (minutes)"),
        _PLAN,
        minimum=0,
        maximum=MAX_MINUTES,
        form=FormField(
            FormSection.LIMITS,
            Widget.NUMBER,
            advice=N_("Enter the minutes between checkpoints, 0 or more."),
        ),
    ),
    Field(
        "restart_minutes",
        Kind.NUMBER,
        N_("Goodput: minutes from an interruption until training runs again (default 15)."),
        N_("Restart time (minutes)"),
        _PLAN,
        minimum=0,
        maximum=MAX_MINUTES,
        form=FormField(
            FormSection.LIMITS,
            Widget.NUMBER,
            advice=N_("Enter the minutes a restart takes, 0 or more."),
        ),
    ),
    # --- offer filters and the plan's limits, in the order the pages show them -------------
    Field(
        "multi_node",
        Kind.BOOL,
        N_("Only offers of providers with (true) or without (false) multi-node clusters."),
        N_("Multi-node"),
        _OFFERS,
        facet=Facet(Widget.SELECT, all_offers_only=True),
    ),
    Field(
        "gpu",
        Kind.GPU,
        N_("GPU model: canonical name or alias, e.g. H100-SXM-80GB or H100."),
        N_("GPU model"),
        frozenset({Use.OFFER_FILTER, Use.PLAN_INPUT}),
        repeatable=True,
        facet=Facet(Widget.CHECKBOXES),
        form=FormField(
            FormSection.LIMITS,
            Widget.SELECT,
            label=N_("GPU"),
            empty=N_("any"),
            advice=N_("Choose a GPU from the list."),
        ),
    ),
    Field(
        "max_nodes",
        Kind.INTEGER,
        N_("Largest cluster to consider, in nodes (default 64)."),
        N_("Maximum nodes"),
        _PLAN,
        minimum=1,
        maximum=MAX_PLAN_NODES,
        form=FormField(
            FormSection.LIMITS,
            Widget.NUMBER,
            default=str(DEFAULT_MAX_NODES),
            advice=N_("Enter a whole number of nodes, at least 1."),
        ),
    ),
    Field(
        "budget_usd",
        Kind.NUMBER,
        N_("Leave out options that cost more than this, in US dollars."),
        N_("Budget (USD)"),
        _PLAN,
        minimum=0,
        maximum=MAX_BUDGET_USD,
        form=FormField(
            FormSection.LIMITS,
            Widget.NUMBER,
            advice=N_("Enter a budget in US dollars greater than 0."),
        ),
    ),
    Field(
        "deadline_hours",
        Kind.NUMBER,
        N_("Leave out options slower than this, in hours (default 2160: 90 days)."),
        N_("Deadline (hours)"),
        _PLAN,
        minimum=0,
        maximum=MAX_DEADLINE_HOURS,
        form=FormField(
            FormSection.LIMITS,
            Widget.NUMBER,
            advice=N_("Enter a deadline in hours greater than 0."),
        ),
    ),
    Field(
        "deadline_days",
        Kind.NUMBER,
        N_("The deadline in days instead of hours (a week is 7); give one of the two."),
        N_("Deadline (days)"),
        _PLAN,
        minimum=0,
        maximum=MAX_DEADLINE_DAYS,
        form=FormField(
            FormSection.LIMITS,
            Widget.NUMBER,
            advice=N_("Enter a deadline in days greater than 0 (for weeks, multiply by 7)."),
        ),
    ),
    Field(
        "fabric",
        Kind.CHOICE,
        N_("Inter-node fabric (repeatable; any of them matches)."),
        N_("Fabric"),
        _BOTH,
        enum=FabricKind,
        repeatable=True,
        facet=Facet(Widget.CHECKBOXES),
        form=FormField(
            FormSection.NARROW,
            Widget.CHECKBOXES,
            advice=N_("Choose fabrics from the list."),
        ),
    ),
    Field(
        "rdma",
        Kind.BOOL,
        N_(
            "GPUDirect RDMA supported (true) or not (false); true_or_unknown also keeps "
            "offers where it is unknown."
        ),
        N_("GPUDirect RDMA"),
        _BOTH,
        facet=Facet(Widget.CHECKBOX, option_label=N_("required")),
    ),
    Field(
        "min_gbps",
        Kind.NUMBER,
        N_("Minimum inter-node bandwidth, Gbit/s per node."),
        N_("Bandwidth per node"),
        _BOTH,
        minimum=0,
        maximum=1e6,
        facet=Facet(
            Widget.SELECT,
            option_label=N_("at least %(num)s Gbit/s"),
            suggestions=(400, 800, 1600, 3200),
        ),
    ),
    Field(
        "orchestration",
        Kind.CHOICE,
        N_("Managed scheduler (repeatable; all must hold)."),
        N_("Managed orchestration"),
        _BOTH,
        enum=OrchestrationKind,
        repeatable=True,
        all_of=True,
        facet=Facet(Widget.CHECKBOXES),
    ),
    Field(
        "provisioning",
        Kind.CHOICE,
        N_("How the cluster can be obtained (repeatable; any of them matches)."),
        N_("Provisioning"),
        _BOTH,
        enum=ProvisioningMode,
        repeatable=True,
        facet=Facet(Widget.CHECKBOXES),
    ),
    Field(
        "price_tier",
        Kind.CHOICE,
        N_(
            "Only offers priced in this tier; max_price and the price sort then use that "
            "tier's lowest price, and a plan pays it."
        ),
        N_("Price tier"),
        _BOTH,
        enum=PriceTier,
        facet=Facet(
            Widget.SELECT,
            hint=N_("Shows, filters and sorts on this tier's price; offers without one drop out."),
            empty=N_("headline (on-demand where offered, else reserved or capacity block)"),
        ),
        form=FormField(
            FormSection.LIMITS,
            Widget.SELECT,
            label=N_("Price to pay"),
            empty=N_("on-demand where listed, else reserved, capacity block, spot"),
            advice=N_("Choose a price tier from the list."),
        ),
    ),
    Field(
        "max_price",
        Kind.NUMBER,
        N_(
            "Maximum price, USD per GPU-hour (of price_tier when given, else the headline "
            "price: on-demand, else reserved, else capacity block)."
        ),
        N_("Max price (USD per GPU-hour)"),
        _OFFERS,
        minimum=0,
        maximum=1e6,
        facet=Facet(Widget.NUMBER, step="0.01"),
    ),
    Field(
        "min_nodes",
        Kind.INTEGER,
        N_("Cluster size (nodes) the offer can reach."),
        N_("Minimum cluster size (nodes)"),
        _OFFERS,
        minimum=0,
        maximum=100_000,
        facet=Facet(Widget.NUMBER, step="1"),
    ),
    Field(
        "region",
        Kind.REGION,
        N_(
            "Where the offer is: a continent or sub-region (europe, latin-america), a country "
            "code or name (BR, brazil), a provider region or a city (us-east-3, frankfurt, "
            "sao paulo), else part of a region name. Case and accents are ignored; an unknown "
            "value is refused."
        ),
        N_("Region"),
        _BOTH,
        maximum=200,
        facet=Facet(Widget.SELECT, empty=N_("anywhere")),
    ),
    Field(
        "clustermax",
        Kind.CHOICE,
        N_(
            "The provider's tier in the newest ClusterMAX edition (repeatable; any of them "
            "matches), e.g. clustermax=platinum,gold; not_rated: absent from that edition."
        ),
        N_("ClusterMAX rating"),
        _OFFERS,
        enum=ClusterMaxChoice,
        repeatable=True,
        facet=Facet(
            Widget.CHECKBOXES,
            hint=N_("The provider's tier in the newest edition of SemiAnalysis' ClusterMAX."),
        ),
    ),
    Field(
        "nccl",
        Kind.BOOL,
        N_(
            "NCCL comes configured for the fabric (true) or is left to you (false); "
            "true_or_unknown also keeps offers where it is unknown."
        ),
        N_("NCCL preconfigured"),
        _OFFERS,
        facet=Facet(Widget.CHECKBOX, option_label=N_("required")),
    ),
    Field(
        "billing",
        Kind.CHOICE,
        N_("Smallest billed unit of time (repeatable; any of them matches), e.g. per_second."),
        N_("Billing granularity"),
        _OFFERS,
        enum=BillingGranularity,
        repeatable=True,
        facet=Facet(Widget.CHECKBOXES),
    ),
    Field(
        "shared_storage",
        Kind.BOOL,
        N_(
            "The provider sells a shared file system the nodes can mount (true) or not "
            "(false); true_or_unknown also keeps providers where it is unknown."
        ),
        N_("Shared storage"),
        _OFFERS,
        facet=Facet(Widget.CHECKBOX, option_label=N_("required")),
    ),
    Field(
        "topology",
        Kind.CHOICE,
        N_(
            "What the provider says about the network's topology (repeatable; all must "
            "hold): non_blocking, rail_optimized, locality (where the nodes sit is stated)."
        ),
        N_("Topology and locality"),
        _OFFERS,
        enum=TopologyClaim,
        repeatable=True,
        all_of=True,
        facet=Facet(Widget.CHECKBOXES),
    ),
    Field(
        "provider",
        Kind.PROVIDER,
        N_("Provider slug (repeatable)."),
        N_("Provider"),
        _BOTH,
        repeatable=True,
        facet=Facet(Widget.CHECKBOXES, all_offers_only=True),
        form=FormField(
            FormSection.NARROW,
            Widget.CHECKBOXES,
            advice=N_("Choose providers from the list."),
        ),
    ),
    Field(
        "include_unknown",
        Kind.CHOICE,
        N_(
            "Also keep offers whose fact is unknown for these filters (repeatable), e.g. "
            "include_unknown=min_gbps; a boolean filter can say rdma=true_or_unknown instead."
        ),
        N_("Include unknown"),
        _BOTH,
        enum=Unknowable,
        repeatable=True,
    ),
)

FIELDS_BY_NAME: Final = {f.name: f for f in FIELDS}
UNKNOWABLE_NAMES: Final = frozenset(u.value for u in Unknowable)
"""Filters whose unknowns ``include_unknown`` (or a boolean's ``true_or_unknown``) lets in."""
OFFER_FILTERS: Final = tuple(f for f in FIELDS if f.used_as(Use.OFFER_FILTER))
OFFER_FILTER_NAMES: Final = tuple(f.name for f in OFFER_FILTERS)
PLAN_FIELDS: Final = tuple(
    f for f in FIELDS if f.used_as(Use.PLAN_INPUT) or f.used_as(Use.PLAN_FILTER)
)
PLAN_FIELD_NAMES: Final = tuple(f.name for f in PLAN_FIELDS)
FORM_FIELDS: Final = tuple(f for f in PLAN_FIELDS if f.form is not None)
