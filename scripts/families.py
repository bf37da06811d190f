"""GPU families of the calibration and the prior level of each (used by scripts/calibrate.py).

A family is a set of catalog GPUs that share one die and one software stack: their level
(``u_max`` under Megatron) is fitted on their own points when they have some, and a family
with fewer than ``MIN_FAMILY_POINTS`` fitted points is marked ``calibrated = false`` in
data/calibration.toml, which every estimate and plan option repeats.

The prior of a family is a physically grounded ratio to a sibling family's fitted level, not
a borrowed level: the ratio of the two families' Maximum Achievable Matmul FLOPS (the best
sustained BF16 matmul rate over a sweep of shapes) as fractions of their datasheet peaks,
measured with one script on each accelerator and published in one table (``MAMF_URL``). A
family whose own points are few is pulled towards its prior with a small weight, so the data
moves it when there is data and the prior holds when there is none.
"""

from __future__ import annotations

from dataclasses import dataclass

MAMF_URL = (
    "https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md"
    "#maximum-achievable-matmul-flops-comparison-table"
)
"""Stas Bekman's Machine Learning Engineering book, 'Maximum Achievable Matmul FLOPS
comparison table' (BF16, v2 table: A100 SXM 86.9 %, GH200 83.6 %, A100 PCIe 81.1 %, H100 SXM
80.3 %, MI325X 60.4 %, MI300X 51.4 % of the datasheet peak; v1 table: H100 SXM 80.1 %, MI250X
76.7 % of one GCD)."""

REFERENCE = "H100"
"""The family every prior chain ends at: the one with the most points and sources."""


@dataclass(frozen=True, slots=True)
class Family:
    """One GPU family and how its prior follows from a sibling's level.

    Attributes:
        name: the family's name in data/calibration.toml.
        gpus: canonical GPU names of data/gpus.toml.
        sibling: the family whose level the prior scales (None for the reference family).
        ratio: prior level over the sibling's level.
        why: where the ratio comes from, our words with the source.
    """

    name: str
    gpus: tuple[str, ...]
    sibling: str | None
    ratio: float
    why: str


PCIE_RATIO = 81.1 / 86.9
"""A PCIe card over the SXM module of the same die, both at their datasheet peaks: the A100
PCIe/SXM pair of the MAMF table (the only pair measured; PCIe cards run at lower power)."""

FAMILIES: tuple[Family, ...] = (
    Family(
        "H100",
        ("H100-SXM-80GB",),
        None,
        1.0,
        "the reference family (NVIDIA DGXC, NeMo and Megatron-Bridge tables, llm-foundry, "
        "torchtitan, Llama 3)",
    ),
    Family(
        "A100",
        ("A100-SXM-80GB", "A100-SXM-40GB"),
        "H100",
        86.9 / 80.3,
        f"MAMF A100 SXM 86.9 % vs H100 SXM 80.3 % of peak ({MAMF_URL})",
    ),
    Family(
        "A100-PCIe",
        ("A100-PCIe-80GB",),
        "A100",
        PCIE_RATIO,
        f"MAMF A100 PCIe 81.1 % vs A100 SXM 86.9 % of peak ({MAMF_URL})",
    ),
    Family(
        "H200",
        ("H200-SXM-141GB",),
        "H100",
        1.0,
        "the H100's die, SMs and clocks with faster, larger HBM3e (NVIDIA H200 datasheet); "
        "the bandwidth gain is in the roofline factor, not in the level",
    ),
    Family(
        "H100-PCIe",
        ("H100-PCIe-80GB", "H100-NVL-94GB"),
        "H100",
        PCIE_RATIO,
        "PCIe cards of the H100 die; the PCIe/SXM ratio of the A100 pair of the MAMF table "
        f"({MAMF_URL}), no H100 PCIe figure published there",
    ),
    Family(
        "H200-NVL",
        ("H200-NVL-141GB",),
        "H200",
        PCIE_RATIO,
        "PCIe card of the H200 die; the PCIe/SXM ratio of the A100 pair of the MAMF table "
        f"({MAMF_URL})",
    ),
    Family(
        "GH200",
        ("GH200-96GB",),
        "H100",
        83.6 / 80.3,
        f"MAMF GH200 83.6 % vs H100 SXM 80.3 % of peak ({MAMF_URL})",
    ),
    Family(
        "B200",
        ("B200-SXM-180GB", "B300-SXM-288GB"),
        "H100",
        1.0,
        "no Blackwell figure in the MAMF table: the H100's ratio until the family's own "
        "points move it",
    ),
    Family(
        "GB200",
        ("GB200-186GB", "GB300-288GB"),
        "B200",
        1.0,
        "the B200/B300 die in a Grace superchip (the datasheet peak already carries its "
        "higher clocks)",
    ),
    Family(
        "MI300X",
        ("MI300X-192GB", "MI325X-256GB"),
        "H100",
        51.4 / 80.3,
        f"MAMF MI300X 51.4 % vs H100 SXM 80.3 % of peak ({MAMF_URL}); the lower member's "
        "figure (MI325X, the same CDNA3 die at 1000 W, measures 60.4 %), so the family is not "
        "flattered",
    ),
    Family(
        "MI355X",
        ("MI355X-288GB", "MI350X-288GB"),
        "MI300X",
        1.0,
        "CDNA4, a new die and kernels (AMD Instinct MI350 series); no MAMF figure published: "
        "the MI300X family's level until its own points move it",
    ),
    Family(
        "MI250X",
        ("MI250X-128GB",),
        "H100",
        76.7 / 80.1,
        f"MAMF v1 table: MI250X 76.7 % of one GCD vs H100 SXM 80.1 % of peak ({MAMF_URL})",
    ),
)
"""Every family of the calibration; a catalog GPU in none of them gets ``DEFAULT_PRIOR``."""

DEFAULT_PRIOR = Family(
    "default",
    (),
    "H100",
    51.4 / 80.3,
    "a GPU of no family (L40S, workstation cards, new models): the lowest efficiency of any "
    f"accelerator in the MAMF table (MI300X 51.4 % vs H100 SXM 80.3 %, {MAMF_URL}), so an "
    "unknown GPU is never assumed to be better tuned than a measured one",
)


def family_of(gpu: str) -> Family | None:
    """The family of a canonical GPU name, or None."""
    return next((f for f in FAMILIES if gpu in f.gpus), None)


def prior_levels(fitted: dict[str, float]) -> dict[str, float]:
    """The prior level of every family (and ``default``) from the fitted ``fitted`` levels.

    A prior follows its sibling's level: the sibling's fitted level when it has one, else the
    sibling's own prior, down to the reference family.
    """
    by_name = {f.name: f for f in (*FAMILIES, DEFAULT_PRIOR)}
    out: dict[str, float] = {}

    def level(name: str) -> float:
        if name in fitted:
            return fitted[name]
        return prior(name)

    def prior(name: str) -> float:
        if name not in out:
            fam = by_name[name]
            out[name] = fam.ratio * (level(fam.sibling) if fam.sibling else 0.6)
        return out[name]

    for fam in (*FAMILIES, DEFAULT_PRIOR):
        prior(fam.name)
    return out
