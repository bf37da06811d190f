"""Parse NVIDIA nccl-tests output: every table version, tagged MPI output, cut or edited logs.

The table is the one nccl-tests prints for every collective::

    #    size   count  type redop root   time  algbw  busbw #wrong   time  algbw  busbw #wrong
      1048576  262144 float   sum   -1  71.93  14.58  27.33      0  71.47  14.67  27.51      0

Older releases have no ``root`` column and an ``error`` column instead of ``#wrong``; newer ones
print a version banner and no out-of-place / in-place title. Open MPI's ``--tag-output`` prefix
(``[1,0]<stdout>:``) and NCCL INFO lines printed inside the table are skipped. A log that stops
early, or that had rows removed (``...``), is parsed as far as it goes with a warning; a log
with no result row is an error.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

OPS = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
    "gather",
    "scatter",
    "hypercube",
)
_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")
_OP_NAME = re.compile(r"\b(" + "|".join(OPS) + r")_perf(?:_mpi)?\b")
_BANNER = re.compile(r"#\s*Collective test starting:\s*(\w+?)_perf")
_HEADER = re.compile(r"#\s*nThread\s+\d+.*?minBytes\s+(\d+)\s+maxBytes\s+(\d+)")
_DEVICE = re.compile(
    r"#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.+)$"
)
_VERSION = re.compile(r"^\s*NCCL version (\S+)")
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*([0-9.]+)")
_OOB = re.compile(r"#\s*Out of bounds values\s*:\s*(\d+)\s+(\w+)")
_SOURCE = re.compile(r"^#\s*source:\s*(\S+)")
_ROW_START = re.compile(r"^\s*\d+\s+\d+\s+[A-Za-z]")
_ELLIPSIS = re.compile(r"^\s*(\.\.\.|…)\s*$")
_RATIO_MIN_ALGBW_GBS = 1.0
"""Rows slower than this carry too few digits for the busbw/algbw ratio to mean anything."""


class NcclLogError(ValueError):
    """The text is not an nccl-tests result, or too broken to read; the message says where."""


@dataclass(frozen=True, slots=True)
class NcclRow:
    """One message size: out-of-place and in-place time (us), algbw and busbw (GB/s)."""

    size_bytes: int
    count: int
    dtype: str
    redop: str
    time_us: float
    algbw_gbs: float
    busbw_gbs: float
    in_place_time_us: float
    in_place_algbw_gbs: float
    in_place_busbw_gbs: float
    wrong: str
    in_place_wrong: str


@dataclass(frozen=True, slots=True)
class NcclLog:
    """A parsed nccl-tests run and what the log says about where it ran."""

    name: str
    op: str
    op_from: str
    rows: tuple[NcclRow, ...]
    ranks: int | None
    nodes: int | None
    hosts: tuple[str, ...]
    devices: tuple[str, ...]
    ranks_per_node: tuple[int, ...]
    """Ranks on each host in ``hosts`` order, from the device lines (empty when they are
    incomplete): ``(4, 4)`` for a two-node run with ``-g 4`` on 8-GPU nodes."""
    nccl_version: str | None
    avg_busbw_gbs: float | None
    source_url: str | None
    warnings: tuple[str, ...]

    @property
    def complete(self) -> bool:
        """True when the log reached nccl-tests' summary line and nothing was elided."""
        return not self.warnings


def _number(token: str, what: str, where: str) -> float:
    try:
        return float(token)
    except ValueError:
        msg = f"{where}: {what} {token!r} is not a number"
        raise NcclLogError(msg) from None


def _row(tokens: list[str], has_root: bool, where: str) -> NcclRow:
    head = 5 if has_root else 4
    size, count, dtype, redop = tokens[0], tokens[1], tokens[2], tokens[3]
    oop = tokens[head : head + 4]
    ip = tokens[head + 4 : head + 8]
    return NcclRow(
        size_bytes=int(size),
        count=int(count),
        dtype=dtype,
        redop=redop,
        time_us=_number(oop[0], "time", where),
        algbw_gbs=_number(oop[1], "algbw", where),
        busbw_gbs=_number(oop[2], "busbw", where),
        wrong=oop[3],
        in_place_time_us=_number(ip[0], "time", where),
        in_place_algbw_gbs=_number(ip[1], "algbw", where),
        in_place_busbw_gbs=_number(ip[2], "busbw", where),
        in_place_wrong=ip[3],
    )


def _infer_op(rows: list[NcclRow], ranks: int | None, name: str) -> str:
    """Which collective produced the rows, from nccl-tests' busbw = algbw x factor.

    all_reduce has factor 2(n-1)/n (>= 1), all_gather / reduce_scatter / alltoall (n-1)/n (< 1)
    and broadcast / reduce 1. The rank count is not inferred: two printed decimals cannot
    tell 64 ranks from 96.
    """
    ratios = [r.busbw_gbs / r.algbw_gbs for r in rows if r.algbw_gbs >= _RATIO_MIN_ALGBW_GBS]
    if not ratios:
        msg = (
            f"{name}: cannot tell which collective ran (no banner, no command line, rows too slow)"
        )
        raise NcclLogError(msg)
    factor = statistics.median(ratios)
    redop = rows[-1].redop
    if 1.02 < factor < 2:
        return "all_reduce"
    if factor < 0.98:
        return "all_gather" if redop == "none" else "reduce_scatter"
    if redop == "sum" and ranks == 2:
        return "all_reduce"
    msg = f"{name}: busbw equals algbw, which fits several collectives; say which one ran"
    raise NcclLogError(msg)


@dataclass(slots=True)
class _State:
    source_url: str | None = None
    banner_op: str | None = None
    mentioned_ops: set[str] = field(default_factory=set)
    min_bytes: int | None = None
    max_bytes: int | None = None
    max_rank: int | None = None
    hosts: list[str] = field(default_factory=list)
    host_ranks: dict[str, set[int]] = field(default_factory=dict)
    device_lines: int = 0
    devices: list[str] = field(default_factory=list)
    version: str | None = None
    has_root: bool | None = None
    avg: float | None = None
    elided: bool = False
    oob_failed: bool = False
    truncated_row: str | None = None


def parse_nccl_log(text: str, name: str = "log", op: str | None = None) -> NcclLog:
    """Read one nccl-tests run from ``text``.

    Args:
        text: the log, as printed (MPI tags, NCCL INFO lines and commands may be mixed in).
        name: what to call the log in messages (usually its file name).
        op: the collective, when the caller knows it; otherwise read from the log.

    Returns:
        The rows and what the log says about the run; ``warnings`` lists anything that makes
        the result partial (cut before the summary, rows elided, validation errors).

    Raises:
        NcclLogError: when there is no result table, or a row cannot be read.
    """
    if op is not None and op not in OPS:
        msg = f"unknown collective {op!r} (known: {', '.join(OPS)})"
        raise NcclLogError(msg)
    st = _State()
    rows: list[NcclRow] = []
    warnings: list[str] = []
    header_seen = False
    for number, raw in enumerate(text.splitlines(), start=1):
        where = f"{name}:{number}"
        line = _TAG.sub("", raw).rstrip()
        if number <= 5 and (m := _SOURCE.match(line)) and st.source_url is None:
            st.source_url = m.group(1)
            continue
        if m := _BANNER.search(line):
            st.banner_op = m.group(1)
        elif m := _HEADER.search(line):
            st.min_bytes, st.max_bytes = int(m.group(1)), int(m.group(2))
        elif m := _DEVICE.search(line):
            rank, host, device = int(m.group(1)), m.group(2), m.group(3).strip()
            st.max_rank = max(st.max_rank or 0, rank)
            st.device_lines += 1
            if host not in st.hosts:
                st.hosts.append(host)
            st.host_ranks.setdefault(host, set()).add(rank)
            if device not in st.devices:
                st.devices.append(device)
        elif m := _AVG.search(line):
            st.avg = float(m.group(1))
        elif m := _OOB.search(line):
            st.oob_failed = m.group(2).upper() != "OK"
        elif line.lstrip().startswith("#") and " size " in f" {line} " and "busbw" in line:
            if rows:
                msg = f"{where}: a second result table starts here; give each run its own log"
                raise NcclLogError(msg)
            st.has_root = " root " in f" {line} "
            header_seen = True
        elif header_seen and _ROW_START.match(line):
            tokens = line.split()
            expected = 13 if st.has_root else 12
            if len(tokens) < expected:
                st.truncated_row = where
                continue
            if len(tokens) > expected:
                msg = f"{where}: {len(tokens)} columns where the table header has {expected}"
                raise NcclLogError(msg)
            if st.truncated_row is not None:
                msg = f"{st.truncated_row}: row is cut short but more rows follow"
                raise NcclLogError(msg)
            rows.append(_row(tokens, bool(st.has_root), where))
        elif _ELLIPSIS.match(line):
            st.elided = True
        else:
            if m := _VERSION.search(line):
                st.version = m.group(1)
            if not line.lstrip().startswith("#"):
                st.mentioned_ops.update(_OP_NAME.findall(line))
    if not header_seen:
        msg = f"{name}: no nccl-tests result table (no 'size ... busbw' header line)"
        raise NcclLogError(msg)
    if not rows:
        msg = f"{name}: the table header is there but no result row follows (log cut short?)"
        raise NcclLogError(msg)
    if st.truncated_row is not None:
        warnings.append(f"{st.truncated_row}: last row is cut short and was dropped")
    if st.avg is None:
        warnings.append(f"{name}: the log ends before nccl-tests' summary line (cut short?)")
    if st.min_bytes is None:
        warnings.append(f"{name}: no run header line (nThread ... minBytes); an excerpt?")
    if st.elided:
        warnings.append(f"{name}: lines were elided ('...'); rows may be missing")
    if st.oob_failed:
        warnings.append(f"{name}: nccl-tests reports out-of-bounds values (wrong results)")
    wrong = [r.size_bytes for r in rows if r.wrong not in {"0", "N/A"} and not _tiny(r.wrong)]
    if wrong:
        warnings.append(f"{name}: validation errors at {len(wrong)} message size(s)")
    if st.max_bytes is not None and rows[-1].size_bytes > st.max_bytes:
        warnings.append(f"{name}: rows go past the run's maxBytes ({st.max_bytes}); edited log?")
    ranks = st.max_rank + 1 if st.max_rank is not None else None
    # Hosts count nodes only when every rank's device line is there (excerpts drop some).
    every_rank = ranks is not None and st.device_lines == ranks
    if op is not None:
        chosen, op_from = op, "given"
    elif st.banner_op in OPS:
        chosen, op_from = st.banner_op, "banner"
    elif len(st.mentioned_ops) == 1:
        chosen, op_from = next(iter(st.mentioned_ops)), "command line"
    else:
        chosen = _infer_op(rows, ranks, name)
        op_from = "busbw/algbw ratio"
    return NcclLog(
        name=name,
        op=chosen,
        op_from=op_from,
        rows=tuple(rows),
        ranks=ranks,
        nodes=len(st.hosts) if every_rank else None,
        hosts=tuple(st.hosts),
        devices=tuple(st.devices),
        ranks_per_node=tuple(len(st.host_ranks[h]) for h in st.hosts) if every_rank else (),
        nccl_version=st.version,
        avg_busbw_gbs=st.avg,
        source_url=st.source_url,
        warnings=tuple(warnings),
    )


def _tiny(token: str) -> bool:
    """Old nccl-tests print the max relative error (5e-07): float rounding, not a failure."""
    try:
        return abs(float(token)) < 1e-3
    except ValueError:
        return False
