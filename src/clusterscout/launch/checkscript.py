"""The fabric check kit: a script that runs nccl-tests across the nodes with the offer's env."""

from __future__ import annotations

import shlex

from clusterscout.domain.launch import LaunchKnowledge
from clusterscout.launch.request import LaunchFile, LaunchRequest
from clusterscout.launch.script import environment_lines, one_line

NCCL_TESTS_REPO = "https://github.com/NVIDIA/nccl-tests.git"
COLLECTIVES = ("all_reduce", "all_gather")
MIN_BYTES = "8"
MAX_BYTES = "16G"
STEP_FACTOR = "2"


def check_script(knowledge: LaunchKnowledge, request: LaunchRequest) -> LaunchFile:
    """A bash script that builds (or reuses) nccl-tests and runs the sweep over every node.

    It runs all_reduce_perf and all_gather_perf from 8 B to 16 GiB, doubling each step, with
    one MPI rank per GPU, and writes one log per collective for ``ingest-nccl-tests``.

    Raises:
        UnsupportedError: when the catalog does not know the GPUs per node.
    """
    offer = request.offer
    gpus = request.gpus_per_node
    ranks = gpus * request.nodes
    preflight: list[str] = []
    for check in knowledge.preflight_for(offer):
        preflight.append(one_line(f"# {check.comment} ({check.source.url})"))
        preflight.append(
            f"{one_line(check.command)} >/dev/null || "
            f"echo {shlex.quote(f'preflight failed: {check.command}')} >&2"
        )
    ingest = f"clusterscout ingest-nccl-tests nccl-*.log --offer {offer.id}"
    lines = [
        "#!/bin/bash",
        one_line(
            f"# Fabric check for {offer.id} ({offer.gpu}): {request.nodes} nodes x {gpus} GPUs."
        ),
        "# Runs NVIDIA nccl-tests (all_reduce_perf, all_gather_perf; 8 B to 16 GiB, factor 2)",
        "# with Open MPI's mpirun, one rank per GPU, and the same NCCL settings as the launch",
        f"# files. Usage: bash check-{request.name}.sh HOSTFILE (Open MPI hostfile, one",
        f"# 'host slots={gpus}' per line; in a Slurm allocation it is written for you).",
        "set -euo pipefail",
        f"NODES={request.nodes}",
        f"GPUS_PER_NODE={gpus}",
        'HOSTFILE="${1:-}"',
        'if [ -z "$HOSTFILE" ] && [ -n "${SLURM_JOB_NODELIST:-}" ]; then',
        '  HOSTFILE="$(mktemp)"',
        '  scontrol show hostnames "$SLURM_JOB_NODELIST" | sed "s/$/ slots=$GPUS_PER_NODE/" \\',
        '    > "$HOSTFILE"',
        "fi",
        'if [ -z "$HOSTFILE" ] || [ ! -r "$HOSTFILE" ]; then',
        '  echo "usage: $0 HOSTFILE (lines: host slots=$GPUS_PER_NODE)" >&2',
        "  exit 2",
        "fi",
        'if [ "$(grep -c . "$HOSTFILE")" -lt "$NODES" ]; then',
        '  echo "$HOSTFILE lists fewer than $NODES hosts" >&2',
        "  exit 2",
        "fi",
        *environment_lines(knowledge, request),
        "# INFO logs name the network NCCL picked (NET/IB, NET/OFI, NET/Socket, a plugin):",
        "# the first thing to read when the bandwidth is low.",
        "export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET",
        *preflight,
        "# nccl-tests must be at the same path on every node (a shared home, or build on each).",
        'NCCL_TESTS_DIR="${NCCL_TESTS_DIR:-$HOME/nccl-tests}"',
        'if [ ! -x "$NCCL_TESTS_DIR/build/all_reduce_perf" ]; then',
        f'  git clone --depth 1 {NCCL_TESTS_REPO} "$NCCL_TESTS_DIR"',
        '  MPI_HOME="${MPI_HOME:-$(dirname "$(dirname "$(command -v mpicc)")")}"',
        '  make -C "$NCCL_TESTS_DIR" -j MPI=1 MPI_HOME="$MPI_HOME" '
        'CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"',
        "fi",
        "# Forward every NCCL/libfabric/UCX/CUDA variable set above to the remote ranks.",
        "FORWARD=()",
        'for name in $(env | grep -oE "^(NCCL|FI|UCX|CUDA|LD_LIBRARY_PATH)[A-Z0-9_]*" \\',
        "    | sort -u); do",
        '  FORWARD+=(-x "$name")',
        "done",
        f"for op in {' '.join(COLLECTIVES)}; do",
        f'  mpirun -np {ranks} --hostfile "$HOSTFILE" --map-by "ppr:$GPUS_PER_NODE:node" \\',
        '    --bind-to none -x PATH "${FORWARD[@]}" \\',
        f'    "$NCCL_TESTS_DIR/build/${{op}}_perf" -b {MIN_BYTES} -e {MAX_BYTES} '
        f"-f {STEP_FACTOR} -g 1 \\",
        '    2>&1 | tee "nccl-${op}.log"',
        "done",
        f"echo 'Compare with what the fabric should deliver: {ingest}'",
        "",
    ]
    return LaunchFile(f"check-{request.name}.sh", "\n".join(lines), "text/x-shellscript")
