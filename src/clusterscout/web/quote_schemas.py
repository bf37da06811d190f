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
    basis: str = Field(
        description="what the total rests on: list_price (the on-demand list price times the "
        "run, no commitment priced), reserved_term, capacity_block or commitment_discount"
    )
    term_days: int | None = Field(description="minimum commitment the price implies, in days")
    prepay: bool | None = Field(description="whether the term is paid up front (null: unknown)")
    usd_per_gpu_hour: float = Field(description="the price the (low) total uses")
    as_of: str | None = Field(description="ISO date of that price")
    age_days: int | None = Field(description="days from as_of to today")
    stale: bool | None = Field(description="older than meta.stale_after_days")
    source: str | None = Field(description="URL of the price's source")
    billed_hours: float = Field(description="hours paid: the run, else the minimum or whole terms")
    billed_beyond_run: bool = Field(description="true when a minimum or whole terms cost more")
    is_range: bool = Field(description="only an 'up to X% off' discount is published")
    capacity_known: bool = Field(description="false when the largest cluster is unknown")
    total: TotalsOut


class ReferenceOut(_Out):
    """The market's prices for the GPU model: median and range, NOT the provider's price."""

    gpu: str
    tier: str = Field(description="the tier the published prices are of")
    median_usd_per_gpu_hour: float
    low_usd_per_gpu_hour: float
    high_usd_per_gpu_hour: float
    prices: int = Field(description="how many offers' prices the figures rest on")
    providers: int = Field(description="how many providers publish them")
    label: str
    offer_id: str = Field(description="the provider's unpriced offer the figures stand in for")
    basis: str = Field(description="always market_reference")
    billed_hours: float
    median_total: TotalsOut
    total: TotalsOut = Field(description="the run at the lowest and the highest of the prices")


class ListPriceOut(_Out):
    """An on-demand list price of clusters the provider does not rent on demand."""

    offer_id: str
    gpu: str
    usd_per_gpu_hour: float
    as_of: str
    source: str | None


class ProviderQuoteOut(_Out):
    """One provider: its cheapest option and every other, or why it has no total."""

    provider: str
    name: str
    rank: int | None = Field(description="1 for the cheapest total; null without a total")
    cheapest: bool
    best: QuoteOptionOut | None
    options: list[QuoteOptionOut]
    reference: ReferenceOut | None = Field(
        description="for a provider without a price it can be bought at: the market reference"
    )
    list_prices_not_bookable: list[ListPriceOut] = Field(
        description="without a total: on-demand list prices it publishes although its "
        "clusters are not rented on demand (never totalled)"
    )
    why_not: str | None = Field(description="no_offer, no_price or too_small; null with a total")
    reason: str | None
    largest_gpus: int | None = Field(description="largest cluster in GPUs, when too small")


class RatesOut(_Out):
    """The euro reference rates used, with their day and sources."""

    date: str
    age_days: int = Field(description="days from the rates' date to today")
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
    currency: str = Field(description="the currency asked for (totals carry all three)")
    today: str
    stale_after_days: int
    totals: int = Field(description="providers with a total")
    references: int = Field(description="providers with only a market reference")
    exchange_rates: RatesOut | None


class QuoteOut(_Out):
    """``GET /api/v1/quote``: providers with a total first, cheapest first; then those with a
    market reference; then the rest with why not."""

    data: list[ProviderQuoteOut]
    count: int
    meta: QuoteMeta
