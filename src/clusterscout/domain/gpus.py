"""The one GPU index: canonical names and aliases, folded, to the published GPU figures."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from clusterscout.domain.errors import InputError
from clusterscout.domain.ids import normalise_gpu_key
from clusterscout.domain.models import GpuSpec


@dataclass(frozen=True, slots=True)
class GpuIndex:
    """Look-up of GPUs by canonical name or alias; case, spaces, dashes and underscores ignored.

    The first GPU that claims a name wins (``catalog.checks`` reports an alias claimed twice).
    ``extra_names`` are canonical names known without figures (an offer's GPU that the
    reference table lacks): they resolve to themselves but have no spec.

    >>> h100 = GpuSpec("H100-SXM-80GB", "nvidia", 80.0, aliases=("H100",))
    >>> index = GpuIndex.of([h100], extra_names=["V100-SXM-32GB"])
    >>> index.canonical("h100"), index.canonical("v100 sxm 32gb"), index.canonical("T4")
    ('H100-SXM-80GB', 'V100-SXM-32GB', None)
    >>> index.spec("H100 SXM 80GB") is h100, index.spec("V100-SXM-32GB")
    (True, None)
    """

    specs: tuple[GpuSpec, ...]
    _specs_by_key: Mapping[str, GpuSpec]
    _names_by_key: Mapping[str, str]

    @classmethod
    def of(cls, specs: Iterable[GpuSpec], extra_names: Iterable[str] = ()) -> GpuIndex:
        """Index ``specs`` (names and aliases) and any extra canonical names."""
        specs = tuple(specs)
        by_key: dict[str, GpuSpec] = {}
        for gpu in specs:
            for name in (gpu.name, *gpu.aliases):
                by_key.setdefault(normalise_gpu_key(name), gpu)
        names = {key: gpu.name for key, gpu in by_key.items()}
        for name in extra_names:
            names.setdefault(normalise_gpu_key(name), name)
        return cls(specs, by_key, names)

    def spec(self, name: str) -> GpuSpec | None:
        """The GPU whose canonical name or alias matches ``name``, or None."""
        return self._specs_by_key.get(normalise_gpu_key(name))

    def canonical(self, name: str) -> str | None:
        """The canonical name for ``name`` (figures known or not), or None when unknown."""
        return self._names_by_key.get(normalise_gpu_key(name))

    def require(self, name: str, field: str) -> GpuSpec:
        """The GPU named ``name``.

        Raises:
            InputError: naming ``field`` and listing the known canonical names.
        """
        gpu = self.spec(name)
        if gpu is None:
            known = ", ".join(sorted(g.name for g in self.specs))
            raise InputError(field, f"unknown GPU {name!r} (known: {known})")
        return gpu
