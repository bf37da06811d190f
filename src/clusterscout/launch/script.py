"""Shell text shared by every launch file: the fabric environment block and torchrun."""

from __future__ import annotations

import json
import re
import shlex
from typing import Final

from clusterscout.domain.launch import CONTROL_CHARACTERS, ENV_REFERENCE, LaunchKnowledge
from clusterscout.launch.request import LaunchRequest, TrainingLayout

MASTER_PORT = 29500
"""torchrun's customary rendezvous port (its own default for --master-port)."""


def shell_value(value: str) -> str:
    """``value`` as one shell word that expands nothing but its ``${NAME}``/``${NAME:-}``
    references (LD_LIBRARY_PATH prepends need them): every other part is single-quoted, so
    ``$(...)``, backticks and any other ``$`` stay literal text."""
    parts: list[str] = []
    at = 0
    for ref in ENV_REFERENCE.finditer(value):
        if ref.start() > at:
            parts.append(shlex.quote(value[at : ref.start()]))
        parts.append(f'"{ref.group()}"')
        at = ref.end()
    if at < len(value) or not parts:
        parts.append(shlex.quote(value[at:]))
    return "".join(parts)


def one_line(text: str) -> str:
    """Catalog text for a comment line: control characters (a newline would end the comment
    and start a command, or leave a YAML block) become spaces. ``validate`` refuses them
    anyway; this holds even for a database built without it."""
    return CONTROL_CHARACTERS.sub(" ", text)


_PLAIN_YAML: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]*$")


def yaml_scalar(value: str) -> str:
    """``value`` as a YAML scalar: as it is when it is plain (names like ``H100:8``), else
    double-quoted (JSON's quoting is valid YAML), so no catalog text can end the value."""
    if _PLAIN_YAML.match(value) and value.lower() not in _YAML_WORDS:
        return value
    return json.dumps(value)


_YAML_WORDS: Final = frozenset({"true", "false", "yes", "no", "on", "off", "null", "~"})


def environment_lines(knowledge: LaunchKnowledge, request: LaunchRequest) -> list[str]:
    """Setup commands and ``export`` lines for the offer's fabric, each with its reason + URL.

    A variable the data marks as "not set" becomes a comment, so the reader learns why a
    commonly copied setting is missing.
    """
    offer = request.offer
    fabric = offer.fabric.value if offer.fabric else "unknown"
    lines = [f"# Fabric: {fabric} ({offer.id}). Settings below come from data/launch.toml."]
    for step in knowledge.setup_for(offer):
        lines.append(one_line(f"# {step.comment} ({step.source.url})"))
        # A setup command is shell on purpose (curated in launch.toml); still one line.
        lines.append(one_line(step.command))
    variables = knowledge.env_for(offer)
    for var in variables:
        if var.value is None:
            lines.append(one_line(f"# {var.name} not set: {var.comment} ({var.source.url})"))
        elif CONTROL_CHARACTERS.search(var.value):
            # Quoted, a newline would still break the line of a YAML block; validate
            # refuses such a value, so only a database built without validate has one.
            lines.append(f"# {var.name} left out: its value in launch.toml spans lines")
        else:
            lines.append(one_line(f"# {var.comment} ({var.source.url})"))
            lines.append(f"export {var.name}={shell_value(var.value)}")
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
