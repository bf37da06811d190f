"""Published JSON shape of ``GET /api/v1/quote`` (and ``clusterscout quote --format json``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AmountOut(_Out):
    """A total; ``low`` < ``high`` only where just "up to X% off" is published."""

    low: float
    high: float


class TotalsOut(_Out):
    """The same total in USD and, from the dated ECB reference rates, EUR and BRL."""

    USD: AmountOut
    EUR: AmountOut | None = None
    BRL: AmountOut | None = None


class QuoteOptionOut(_Out):
    """One way to buy the run: a tier (and term) of one offer, and what it totals."""

    offer_id: str
    gpu: str
    tier: str = Field(description="on_demand, reserved, capacity_block or discount")
    term_days: int | None = Field(description="minimum commitment the price implies, in days")
    prepay: bool | None = Field(description="whether the term is paid up front (null: unknown)")
    billed_hours: float = Field(description="hours paid: the run, else the minimum or whole terms")
    billed_beyond_run: bool = Field(description="true when a minimum or whole terms cost more")
    is_range: bool = Field(description="only an 'up to X% off' discount is published")
    capacity_known: bool = Field(description="false when the largest cluster is unknown")
    total: TotalsOut


class ProviderQuoteOut(_Out):
    """One provider: its cheapest option and every other, or why it has no total."""

    provider: str
    name: str
    best: QuoteOptionOut | None
    options: list[QuoteOptionOut]
    why_not: str | None = Field(description="no_offer, no_price or too_small; null with a total")
    reason: str | None
    largest_gpus: int | None = Field(description="largest cluster in GPUs, when too small")


class RatesOut(_Out):
    """The euro reference rates used, with their day and sources."""

    date: str
    usd_per_eur: float
    brl_per_eur: float
    sources: list[str]


class QuoteMeta(_Out):
    """The request as read, the run's end and the exchange rates, plus build metadata."""

    data_version: str
    built_at: str | None
    gpus: int
    months: float
    start: str
    end: str
    hours: float
    gpu: str | None
    exchange_rates: RatesOut | None


class QuoteOut(_Out):
    """``GET /api/v1/quote``: providers with a total first, cheapest first."""

    data: list[ProviderQuoteOut]
    count: int
    meta: QuoteMeta
