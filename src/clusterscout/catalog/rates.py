"""The dated exchange-rate table in data/: euro reference rates to show quotes in EUR and BRL."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, HttpUrl, PositiveFloat, ValidationError

from clusterscout.domain.errors import InputError

RATES_FILE = "exchange_rates.toml"


class _SourceIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    url: HttpUrl
    checked_on: date


class _RatesIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    date: date
    usd_per_eur: PositiveFloat
    brl_per_eur: PositiveFloat
    note: str
    sources: list[_SourceIn]


@dataclass(frozen=True, slots=True)
class ExchangeRates:
    """Euro reference rates of one day, with where they come from."""

    on: date
    usd_per_eur: float
    brl_per_eur: float
    source_urls: tuple[str, ...]

    def convert(self, usd: float, currency: str) -> float:
        """``usd`` in USD, EUR or BRL.

        >>> r = ExchangeRates(date(2025, 10, 21), 1.25, 6.0, ())
        >>> r.convert(100, "USD"), r.convert(100, "EUR"), r.convert(100, "BRL")
        (100, 80.0, 480.0)
        """
        if currency == "USD":
            return usd
        eur = usd / self.usd_per_eur
        return eur if currency == "EUR" else eur * self.brl_per_eur


def load_rates(data_dir: Path) -> ExchangeRates | None:
    """The table in ``data_dir``, or None when the catalog has none.

    Raises:
        InputError: (field ``exchange_rates``) when the file does not follow the format.
    """
    path = data_dir / RATES_FILE
    if not path.is_file():
        return None
    try:
        raw = _RatesIn.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise InputError("exchange_rates", f"{path}: {exc}") from None
    return ExchangeRates(
        raw.date, raw.usd_per_eur, raw.brl_per_eur, tuple(str(s.url) for s in raw.sources)
    )
