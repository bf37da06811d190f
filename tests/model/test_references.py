"""Paper-anchored checks: every reference within its tolerance."""

from __future__ import annotations

import pytest

from clusterscout.domain.gpus import GpuIndex
from clusterscout.model.calibration import Calibration
from clusterscout.model.estimate import estimate
from clusterscout.model.scenario import parse_scenario
from tests.model.conftest import GPUS
from tests.model.examples import output
from tests.model.references import REFERENCES, Reference


@pytest.mark.parametrize("ref", REFERENCES, ids=[r.id for r in REFERENCES])
def test_reference(ref: Reference, cal: Calibration) -> None:
    scenario = parse_scenario(ref.scenario)
    out = output(
        estimate(scenario, GpuIndex.of(GPUS).require(scenario.cluster.gpu, "cluster.gpu"), cal)
    )
    assert out[ref.output] == pytest.approx(ref.value, rel=ref.tolerance), ref.url
