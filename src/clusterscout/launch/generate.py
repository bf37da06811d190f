"""One entry point for every launch format: the files, or why the tool cannot target the offer."""

from __future__ import annotations

from clusterscout.domain.launch import LaunchKnowledge
from clusterscout.domain.messages import N_
from clusterscout.launch.dstack import dstack_files
from clusterscout.launch.request import (
    LaunchFile,
    LaunchFormat,
    LaunchRequest,
    UnsupportedError,
    Why,
)
from clusterscout.launch.skypilot import skypilot_task
from clusterscout.launch.slurm import slurm_script


def launch_files(
    knowledge: LaunchKnowledge, request: LaunchRequest, fmt: LaunchFormat
) -> tuple[LaunchFile, ...]:
    """The files for ``fmt`` (dstack writes a fleet and a task).

    Raises:
        UnsupportedError: with the reason the tool cannot target the offer.
    """
    if request.offer.fabric is None:
        msg = N_("the catalog does not state the fabric of {offer}, so no NCCL settings")
        raise UnsupportedError(Why(msg, (("offer", request.offer.id),)))
    if fmt is LaunchFormat.SKYPILOT:
        return (skypilot_task(knowledge, request),)
    if fmt is LaunchFormat.DSTACK:
        return dstack_files(knowledge, request)
    return (slurm_script(knowledge, request),)
