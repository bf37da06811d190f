"""Paper-anchored checks: every reference within its tolerance."""

from __future__ import annotations

import pytest

from clusterscout.catalog.load import load_gpus
from clusterscout.domain.gpus import GpuIndex
from clusterscout.model.calibration import Calibration
from clusterscout.model.estimate import estimate
from clusterscout.model.scenario import parse_scenario
from tests.model.conftest import DATA_DIR
from tests.model.examples import output
from tests.model.references import REFERENCES, Reference


@pytest.mark.parametrize("ref", REFERENCES, ids=[r.id for r in REFERENCES])
def test_reference(ref: Reference, cal: Calibration) -> None:
    # the catalog's GPUs, with the memory bandwidth the roofline and unfused attention read
    gpus = GpuIndex.of(load_gpus(DATA_DIR))
    scenario = parse_scenario(ref.scenario)
    out = output(estimate(scenario, gpus.require(scenario.cluster.gpu, "cluster.gpu"), cal))
    assert out[ref.output] == pytest.approx(ref.value, rel=ref.tolerance), ref.url
