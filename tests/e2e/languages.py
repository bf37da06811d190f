"""Is a text in the language it is shown as? Lingua, restricted to the site's five languages.

A text is judged once the names that are the same in every language are taken out (GPU and
product names, fabrics, schedulers, launch tools, units, URLs, file names, ``{field}``
placeholders, the fixture's provider names (as names and as slugs), the values
``true``/``false``): with fewer than ``MIN_WORDS`` words left it is not judged. It is in
another language when Lingua ranks another language first *and* gives the declared one less
than ``MAX_DECLARED_CONFIDENCE``: short Romance phrases full of loanwords ("Ver clusters com
Slurm gerenciado") are often ranked Spanish before Portuguese, but never with Portuguese that
unlikely. ``test_languages.py`` checks this rule on the site's own translated messages.
Lingua is deterministic: a text always gets the same answer.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Final

MIN_WORDS: Final = 4
MAX_DECLARED_CONFIDENCE: Final = 0.3
SAME_IN_EVERY_LANGUAGE: Final = re.compile(
    r"https?://\S+|%\(\w+\)s|\{\w+\}|\S+\.toml\b|\b(?:\w*\d\w*|SkyPilot|dstack|backend|"
    r"alpha|beta|gamma|InfiniBand|RoCE|EFA|Ethernet|NVLink|NVSwitch|"
    r"GPUDirect|RDMA|NCCL|SXM|HGX|DGX|GPUs?|CPU|Slurm|Kubernetes|FSDP|Llama|Alpha|Beta|Gamma|"
    r"Cloud|clusterscout|JSON|API|CSV|SVG|USD|GB|GiB|TB|Gbit|TFLOPS|MFU|ClusterMAX|"
    r"SemiAnalysis|Megatron|PyTorch|DeepSpeed|megatron|pytorch|deepspeed|NeMo|torchtitan|"
    r"TP|PP|VP|DP|CP|EP|ZeRO|[Cc]lusters?|[Mm]ulti|true|false)\b"
)
WORD: Final = re.compile(r"[^\W\d_]{2,}")
CODES: Final = ("en", "pt", "es", "fr", "de")


@cache
def _detector() -> Any:
    from lingua import IsoCode639_1, Language, LanguageDetectorBuilder

    languages = [Language.from_iso_code_639_1(getattr(IsoCode639_1, c.upper())) for c in CODES]
    return LanguageDetectorBuilder.from_languages(*languages).build()


def confidences(text: str) -> dict[str, float] | None:
    """Language code -> Lingua's confidence, or None when too few words are left to judge."""
    words = WORD.findall(SAME_IN_EVERY_LANGUAGE.sub(" ", text))
    if len(words) < MIN_WORDS:
        return None
    values = _detector().compute_language_confidence_values(" ".join(words))
    return {v.language.iso_code_639_1.name.lower(): v.value for v in values}


def other_language(text: str, declared: str) -> str | None:
    """The language ``text`` is in when it is clearly not ``declared``, else None."""
    found = confidences(text)
    if found is None:
        return None
    top = max(found, key=lambda code: found[code])
    if top != declared and found.get(declared, 0.0) < MAX_DECLARED_CONFIDENCE:
        return top
    return None
