"""The one GPU index: names and aliases in any spelling, the first claim wins, names the field."""

from __future__ import annotations

import pytest

from clusterscout.domain.errors import InputError
from clusterscout.domain.gpus import GpuIndex
from clusterscout.domain.models import GpuSpec
from tests.model.conftest import GPUS


def test_canonical_names_and_aliases_in_any_case_and_spacing() -> None:
    index = GpuIndex.of(GPUS)
    assert index.require("h100", "cluster.gpu").name == "H100-SXM-80GB"
    assert index.require("H100 80gb", "cluster.gpu").name == "H100-SXM-80GB"
    assert index.require("a100_sxm_40gb", "cluster.gpu").name == "A100-SXM-40GB"


def test_unknown_gpu_names_the_callers_field_and_lists_the_known() -> None:
    with pytest.raises(InputError) as info:
        GpuIndex.of(GPUS).require("V100", "gpu")
    assert info.value.field == "gpu"
    assert "unknown GPU 'V100'" in info.value.message
    assert "H100-SXM-80GB" in info.value.message


def test_extra_names_resolve_without_figures() -> None:
    index = GpuIndex.of(GPUS, extra_names=["V100-SXM-32GB", "H100-SXM-80GB"])
    assert index.canonical("v100 sxm 32gb") == "V100-SXM-32GB"
    assert index.spec("V100-SXM-32GB") is None
    # A name with figures keeps its spec; the extra name does not displace it.
    assert index.spec("h100") is not None
    assert index.canonical("TPU") is None


def test_the_first_gpu_claiming_an_alias_wins() -> None:
    first = GpuSpec("X-1", "x", 10.0, aliases=("shared",))
    second = GpuSpec("X-2", "x", 20.0, aliases=("shared",))
    assert GpuIndex.of([first, second]).require("SHARED", "gpu") is first
