"""Reasons and assumptions are enums with the API's English texts."""

from __future__ import annotations

import pytest

from clusterscout.model.inputs import Precision
from clusterscout.model.planner.reasons import ASSUMPTIONS, Assumption, ExclusionReason


@pytest.mark.parametrize("precision", list(Precision))
def test_every_precision_has_a_missing_figure_reason(precision: Precision) -> None:
    # A new precision (say int4) needs its member, or plans on it would fail here first.
    reason = ExclusionReason.no_figure(precision)
    # FP16 runs at the BF16 tensor-core rate, so it needs the BF16 figure
    figure = "bf16" if precision is Precision.FP16 else precision.value
    assert reason.value == f"GPU has no {figure} figure"


def test_reason_values_are_the_api_texts() -> None:
    assert ExclusionReason.NO_PRICE == "no price"
    assert ExclusionReason.UNKNOWN_GBPS == "unknown Gbit/s per node"
    assert tuple(Assumption) == ASSUMPTIONS
