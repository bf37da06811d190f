"""Paper-anchored checks: every reference within its tolerance."""

from __future__ import annotations

import pytest

from clusterscout.model.calibration import Calibration
from clusterscout.model.estimate import estimate
from clusterscout.model.scenario import parse_scenario, resolve_gpu
from tests.model.conftest import GPUS
from tests.model.references import REFERENCES, Reference


@pytest.mark.parametrize("ref", REFERENCES, ids=[r.id for r in REFERENCES])
def test_reference(ref: Reference, cal: Calibration) -> None:
    scenario = parse_scenario(ref.scenario)
    out = estimate(scenario, resolve_gpu(scenario.cluster.gpu, GPUS), cal).to_dict()
    assert out[ref.output] == pytest.approx(ref.value, rel=ref.tolerance), ref.url
