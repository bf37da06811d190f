"""Reasons and assumptions are enums with the API's English texts."""

from __future__ import annotations

import pytest

from clusterscout.model.inputs import Precision
from clusterscout.model.planner.reasons import (
    ASSUMPTIONS,
    DATA_ASSUMPTIONS,
    SERVING_ASSUMPTIONS,
    Assumption,
    ExclusionReason,
    finetune_assumptions,
)


@pytest.mark.parametrize("precision", list(Precision))
def test_every_precision_has_a_missing_figure_reason(precision: Precision) -> None:
    # A new precision (say int4) needs its member, or plans on it would fail here first.
    reason = ExclusionReason.no_figure(precision)
    # FP16 runs at the BF16 tensor-core rate and INT4 weights are dequantised to BF16, so
    # both need the BF16 figure
    figure = "bf16" if precision in {Precision.FP16, Precision.INT4} else precision.value
    assert reason.value == f"GPU has no {figure} figure"


def test_reason_values_are_the_api_texts() -> None:
    assert ExclusionReason.NO_PRICE == "no price"
    assert ExclusionReason.UNKNOWN_GBPS == "unknown Gbit/s per node"
    # every member belongs to the training list or to a job's extra list
    # every member belongs to the training list, a job's extra list or the data assumptions
    extra = set(SERVING_ASSUMPTIONS) | set(finetune_assumptions(lora=True, qlora=True))
    extra |= set(DATA_ASSUMPTIONS)
    assert set(Assumption) == set(ASSUMPTIONS) | extra
    assert Assumption.SERVING_SPEED not in ASSUMPTIONS
    assert Assumption.QLORA not in finetune_assumptions(lora=True, qlora=False)
