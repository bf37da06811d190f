"""Launch files for real offers: what is written, what is refused and why, and bash syntax."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from clusterscout.domain.launch import LaunchKnowledge
from clusterscout.domain.models import Offer
from clusterscout.launch.checkscript import check_script
from clusterscout.launch.generate import launch_files
from clusterscout.launch.request import (
    LaunchFormat,
    LaunchRequest,
    TrainingLayout,
    UnsupportedError,
)

LAYOUT = TrainingLayout(tp=4, pp=2, dp=4, sharding="zero1", micro_batch=1, global_batch=512)
SBATCH = re.compile(r"^#SBATCH\s+--([a-z-]+)(?:=(\S+))?\s*$")


def sbatch_options(script: str) -> dict[str, str]:
    """The #SBATCH options sbatch reads: those before the first command line."""
    options: dict[str, str] = {}
    for line in script.splitlines()[1:]:
        if not line.strip():
            continue
        if not line.startswith("#"):
            break
        if m := SBATCH.match(line):
            options[m.group(1)] = m.group(2) or ""
    return options


def bash_syntax_ok(text: str, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    bash = shutil.which("bash")
    assert bash is not None
    result = subprocess.run([bash, "-n", str(path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_every_offer_gets_a_file_or_a_reason(
    knowledge: LaunchKnowledge, multi_node_offers: list[Offer]
) -> None:
    assert len(multi_node_offers) > 50
    for fmt in LaunchFormat:
        written = 0
        for offer in multi_node_offers:
            try:
                files = launch_files(knowledge, LaunchRequest(offer, 2, LAYOUT), fmt)
            except UnsupportedError as exc:
                assert len(exc.reason) > 20, (offer.id, fmt, exc.reason)
                continue
            written += 1
            assert files
            assert all(f.content.strip() for f in files)
        assert written >= 20, fmt


def test_slurm_scripts_pass_bash_n_and_request_the_offer_shape(
    knowledge: LaunchKnowledge, multi_node_offers: list[Offer], tmp_path: Path
) -> None:
    checked = 0
    for offer in multi_node_offers:
        if offer.gpus_per_node is None:
            with pytest.raises(UnsupportedError, match="GPUs"):
                launch_files(knowledge, LaunchRequest(offer, 3), LaunchFormat.SLURM)
            continue
        (script,) = launch_files(knowledge, LaunchRequest(offer, 3, LAYOUT), LaunchFormat.SLURM)
        bash_syntax_ok(script.content, tmp_path, script.filename)
        options = sbatch_options(script.content)
        assert options["nodes"] == "3"
        assert options["gpus-per-node"] == str(offer.gpus_per_node)
        assert options["ntasks-per-node"] == "1"
        assert "srun" in script.content
        assert "--rdzv" not in script.content or "MASTER_ADDR" in script.content
        checked += 1
    assert checked > 50


def test_check_scripts_pass_bash_n_and_sweep_8_bytes_to_16_gib(
    knowledge: LaunchKnowledge, multi_node_offers: list[Offer], tmp_path: Path
) -> None:
    for offer in multi_node_offers:
        if offer.gpus_per_node is None:
            continue
        script = check_script(knowledge, LaunchRequest(offer, 2))
        bash_syntax_ok(script.content, tmp_path, script.filename)
        assert "all_reduce all_gather" in script.content
        assert "-b 8 -e 16G -f 2 -g 1" in script.content
        assert f"mpirun -np {2 * offer.gpus_per_node} " in script.content


def test_sbatch_parser_stops_at_the_first_command() -> None:
    script = "#!/bin/bash\n#SBATCH --nodes=2\n# note\necho hi\n#SBATCH --nodes=9\n"
    assert sbatch_options(script) == {"nodes": "2"}


def test_efa_offer_uses_network_tier_best_and_documents_unset_variables(
    knowledge: LaunchKnowledge, offer_by_id: dict[str, Offer]
) -> None:
    (task,) = launch_files(
        knowledge, LaunchRequest(offer_by_id["aws-p5-h100"], 4, LAYOUT), LaunchFormat.SKYPILOT
    )
    text = task.content
    assert "infra: aws" in text
    assert "accelerators: H100:8" in text
    assert "network_tier: best" in text
    assert "num_nodes: 4" in text
    assert "# FI_EFA_USE_DEVICE_RDMA not set:" in text
    assert "export FI_PROVIDER" not in text
    assert "github.com/aws/aws-ofi-nccl" in text
    assert "--tensor-model-parallel-size 4 --pipeline-model-parallel-size 2" in text
    assert "--use-distributed-optimizer" in text


def test_offer_specific_entry_wins_over_provider_and_fabric_entries(
    knowledge: LaunchKnowledge, offer_by_id: dict[str, Offer]
) -> None:
    h100 = knowledge.env_for(offer_by_id["oci-h100"])
    names = {v.name: v.value for v in h100}
    assert names["NCCL_IB_GID_INDEX"] == "3"  # OCI's value beats the fabric-wide "unset"
    assert names["NCCL_IB_HCA"] is not None
    assert names["NCCL_IB_HCA"].startswith("=mlx5_0")
    a100 = {v.name: v.value for v in knowledge.env_for(offer_by_id["oci-a100-80-v2"])}
    assert a100["NCCL_IB_HCA"] is not None
    assert a100["NCCL_IB_HCA"].startswith("mlx5_1")
    b200 = {v.name: v.value for v in knowledge.env_for(offer_by_id["oci-b200"])}
    assert b200["NCCL_IB_GID_INDEX"] is None  # no OCI source for B200: the generic note stays
    assert [n for n, _ in names.items()].count("NCCL_IB_GID_INDEX") == 1


def test_azure_topology_file_matches_the_vm_generation(
    knowledge: LaunchKnowledge, offer_by_id: dict[str, Offer]
) -> None:
    def topo(offer_id: str) -> str | None:
        env = {v.name: v.value for v in knowledge.env_for(offer_by_id[offer_id])}
        return env.get("NCCL_TOPO_FILE")

    assert topo("azure-nd-a100-v4") == "/opt/microsoft/ndv4-topo.xml"
    assert topo("azure-nd-h100-v5") == "/opt/microsoft/ndv5-topo.xml"
    assert topo("azure-nd-gb200-v6") is None


def test_gcp_tcpxo_sources_googles_profile_before_its_variables(
    knowledge: LaunchKnowledge, offer_by_id: dict[str, Offer]
) -> None:
    (task,) = launch_files(
        knowledge, LaunchRequest(offer_by_id["gcp-a3-mega"], 2), LaunchFormat.SKYPILOT
    )
    text = task.content
    assert "accelerators: H100-MEGA:8" in text
    profile = text.index("source /var/lib/tcpxo/lib64/nccl-env-profile.sh")
    assert profile < text.index("export NCCL_FASTRAK_CTRL_DEV=enp0s12")
    # The literal part is a shell word of its own; only the reference expands.
    assert 'export LD_LIBRARY_PATH=/var/lib/tcpxo/lib64:"${LD_LIBRARY_PATH:-}"' in text


def test_nebius_best_tier_only_for_8_gpu_nodes(
    knowledge: LaunchKnowledge, offer_by_id: dict[str, Offer]
) -> None:
    offer = offer_by_id["nebius-h100-ib"]
    (task,) = launch_files(knowledge, LaunchRequest(offer, 2), LaunchFormat.SKYPILOT)
    assert "\n  network_tier: best" in task.content
    four = replace(offer, gpus_per_node=4)
    (task4,) = launch_files(knowledge, LaunchRequest(four, 2), LaunchFormat.SKYPILOT)
    assert "\n  network_tier:" not in task4.content


@pytest.mark.parametrize(
    ("offer_id", "fmt", "reason"),
    [
        ("runpod-h100-instant-cluster", LaunchFormat.SKYPILOT, "multi-node"),
        ("coreweave-h100-ib", LaunchFormat.SKYPILOT, "cannot target coreweave"),
        ("azure-nd-h200-v5", LaunchFormat.SKYPILOT, "does not list H200-SXM-141GB"),
        ("lambda-h100-1cc", LaunchFormat.DSTACK, "cannot provision a lambda cluster"),
        ("together-h100-ib", LaunchFormat.DSTACK, "cannot target together"),
        ("fluidstack-h200-ib", LaunchFormat.SLURM, "GPUs a fluidstack-h200-ib node has"),
    ],
)
def test_refusals_say_why(
    knowledge: LaunchKnowledge,
    offer_by_id: dict[str, Offer],
    offer_id: str,
    fmt: LaunchFormat,
    reason: str,
) -> None:
    with pytest.raises(UnsupportedError, match=reason):
        launch_files(knowledge, LaunchRequest(offer_by_id[offer_id], 2), fmt)


def test_single_node_is_allowed_where_multi_node_is_not(
    knowledge: LaunchKnowledge, offer_by_id: dict[str, Offer]
) -> None:
    offer = offer_by_id["runpod-h100-instant-cluster"]
    (task,) = launch_files(knowledge, LaunchRequest(offer, 1), LaunchFormat.SKYPILOT)
    assert "num_nodes: 1" in task.content


def test_offer_without_fabric_is_refused(
    knowledge: LaunchKnowledge, offer_by_id: dict[str, Offer]
) -> None:
    offer = replace(offer_by_id["aws-p5-h100"], fabric=None)
    with pytest.raises(UnsupportedError, match="fabric"):
        launch_files(knowledge, LaunchRequest(offer, 2), LaunchFormat.SLURM)


def test_provider_missing_from_the_data_is_refused(offer_by_id: dict[str, Offer]) -> None:
    empty = LaunchKnowledge()
    request = LaunchRequest(offer_by_id["aws-p5-h100"], 2)
    for fmt in (LaunchFormat.SKYPILOT, LaunchFormat.DSTACK):
        with pytest.raises(UnsupportedError, match="says nothing"):
            launch_files(empty, request, fmt)
    (slurm,) = launch_files(empty, request, LaunchFormat.SLURM)
    assert "No fabric-specific NCCL settings" in slurm.content


def test_dstack_writes_a_cluster_fleet_and_a_task_on_it(
    knowledge: LaunchKnowledge, offer_by_id: dict[str, Offer]
) -> None:
    fleet, task = launch_files(
        knowledge, LaunchRequest(offer_by_id["crusoe-h100-ib"], 8), LaunchFormat.DSTACK
    )
    assert "placement: cluster" in fleet.content
    assert "backends: [crusoe]" in fleet.content
    assert "gpu: H100:80GB:8" in fleet.content
    assert "nodes: 8" in task.content
    assert "fleets: [crusoe-h100-ib-8n-fleet]" in task.content
    assert "$DSTACK_MASTER_NODE_IP" in task.content


def test_slurm_note_follows_the_catalog(
    knowledge: LaunchKnowledge, offer_by_id: dict[str, Offer]
) -> None:
    (managed,) = launch_files(
        knowledge, LaunchRequest(offer_by_id["crusoe-h100-ib"], 2), LaunchFormat.SLURM
    )
    assert "offers managed Slurm" in managed.content
    (unknown,) = launch_files(
        knowledge, LaunchRequest(offer_by_id["oci-h100"], 2), LaunchFormat.SLURM
    )
    assert "no source on managed Slurm" in unknown.content
    not_offered = replace(
        offer_by_id["oci-h100"],
        orchestration=replace(offer_by_id["oci-h100"].orchestration, managed_slurm=False),
    )
    (own,) = launch_files(knowledge, LaunchRequest(not_offered, 2), LaunchFormat.SLURM)
    assert "does not offer managed Slurm" in own.content


def test_request_rejects_zero_nodes(offer_by_id: dict[str, Offer]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LaunchRequest(offer_by_id["aws-p5-h100"], 0)


def test_names_are_tool_safe(offer_by_id: dict[str, Offer]) -> None:
    offer = replace(offer_by_id["aws-p5-h100"], id="Weird_ID.with spaces" + "x" * 60)
    name = LaunchRequest(offer, 12).name
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name)
    assert len(name) <= 50


def test_layout_from_a_plan_option() -> None:
    from clusterscout.model.inputs import Recompute, Sharding
    from clusterscout.model.planner.results import Layout

    plan = Layout(
        tp=8,
        pp=4,
        dp=2,
        vp=1,
        sharding=Sharding.FSDP,
        recompute=Recompute.NONE,
        micro_batch=1,
        global_batch=256,
    )
    assert TrainingLayout.of(plan) == TrainingLayout(8, 4, 2, "fsdp", 1, 256)
