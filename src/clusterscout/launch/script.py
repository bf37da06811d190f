"""Shell text shared by every launch file: the fabric environment block and torchrun."""

from __future__ import annotations

import shlex

from clusterscout.domain.launch import LaunchKnowledge
from clusterscout.launch.request import LaunchRequest, TrainingLayout

MASTER_PORT = 29500
"""torchrun's customary rendezvous port (its own default for --master-port)."""


def _shell_value(value: str) -> str:
    # ${VAR:-} expansions must survive (LD_LIBRARY_PATH prepends); everything else is quoted.
    if "${" in value:
        return '"' + value.replace('"', '\\"') + '"'
    return shlex.quote(value)


def environment_lines(knowledge: LaunchKnowledge, request: LaunchRequest) -> list[str]:
    """Setup commands and ``export`` lines for the offer's fabric, each with its reason + URL.

    A variable the data marks as "not set" becomes a comment, so the reader learns why a
    commonly copied setting is missing.
    """
    offer = request.offer
    fabric = offer.fabric.value if offer.fabric else "unknown"
    lines = [f"# Fabric: {fabric} ({offer.id}). Settings below come from data/launch.toml."]
    for step in knowledge.setup_for(offer):
        lines.append(f"# {step.comment} ({step.source.url})")
        lines.append(step.command)
    variables = knowledge.env_for(offer)
    for var in variables:
        if var.value is None:
            lines.append(f"# {var.name} not set: {var.comment} ({var.source.url})")
        else:
            lines.append(f"# {var.comment} ({var.source.url})")
            lines.append(f"export {var.name}={_shell_value(var.value)}")
    if not variables and not knowledge.setup_for(offer):
        lines.append("# No fabric-specific NCCL settings are recorded for this offer.")
    return lines


def layout_lines(layout: TrainingLayout | None) -> list[str]:
    """The plan option's layout as exported variables the training script can read."""
    if layout is None:
        return ["# No plan option given: set the parallel layout in your training script."]
    return [
        "# Parallel layout from the clusterscout plan option.",
        f"export TP={layout.tp} PP={layout.pp} DP={layout.dp}",
        f"export SHARDING={layout.sharding}",
        f"export MICRO_BATCH={layout.micro_batch} GLOBAL_BATCH={layout.global_batch}",
        "# Megatron-LM style arguments for that layout; set TRAIN_ARGS to use your own.",
        f'export TRAIN_ARGS="${{TRAIN_ARGS:-{train_args(layout)}}}"',
    ]


def train_args(layout: TrainingLayout | None) -> str:
    """Megatron-LM style arguments for the layout, or an empty string."""
    if layout is None:
        return ""
    args = [
        f"--tensor-model-parallel-size {layout.tp}",
        f"--pipeline-model-parallel-size {layout.pp}",
        f"--micro-batch-size {layout.micro_batch}",
        f"--global-batch-size {layout.global_batch}",
    ]
    if layout.sharding in {"zero1", "zero2"}:
        # Megatron's distributed optimizer shards optimizer state across data-parallel ranks.
        args.append("--use-distributed-optimizer")
    return " ".join(args)


def torchrun_command(*, nnodes: str, nproc_per_node: str, node_rank: str, master_addr: str) -> str:
    """One torchrun invocation; the arguments are shell expressions supplied by each tool.

    ``TRAIN_SCRIPT`` (default ``train.py``) and ``TRAIN_ARGS`` are left to the user; the
    layout block sets a default ``TRAIN_ARGS`` when a plan option was given.
    """
    return (
        f"torchrun --nnodes={nnodes} --nproc-per-node={nproc_per_node} "
        f"--node-rank={node_rank} --master-addr={master_addr} --master-port={MASTER_PORT} "
        '"${TRAIN_SCRIPT:-train.py}" ${TRAIN_ARGS:-}'
    )
