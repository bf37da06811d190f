"""The nccl-tests parser on ten published logs (tests/fixtures/nccl-tests, sources in each)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusterscout.launch.nccllog import NcclLogError, parse_nccl_log

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl-tests"
H100_2NODE = "nccl-tests-issue309-h100-ib-ndr-2node-nccl2262.log"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_every_fixture_cites_its_public_source() -> None:
    logs = sorted(FIXTURES.glob("*.log"))
    assert len(logs) == 10
    for path in logs:
        first = path.read_text().splitlines()[0]
        assert first.startswith("# source: https://"), path.name
        assert parse_nccl_log(path.read_text(), path.name).source_url == first.split()[2]


@pytest.mark.parametrize(
    ("name", "op", "op_from", "rows", "ranks", "nodes", "last_size", "last_busbw", "avg"),
    [
        (H100_2NODE, "all_reduce", "command line", 32, 16, 2, 17179869184, 469.21, 139.56),
        (
            "aws-p4d-a100-efa-2node-allreduce-nccl283.log",
            "all_reduce",
            "busbw/algbw ratio",
            28,
            16,
            2,
            1073741824,
            32.71,
            7.80081,
        ),
        (
            "gke-a4-b200-gib-rdma-2node-allgather-nccl2266.log",
            "all_gather",
            "busbw/algbw ratio",
            24,
            16,
            2,
            8589934592,
            260.03,
            59.3638,
        ),
        (
            "oci-bm-gpu-b4-a100-roce-2node-nccl2293-tests2179.log",
            "all_reduce",
            "banner",
            3,
            16,
            None,  # the page shows 4 of the 16 device lines: hosts do not count nodes
            4294967296,
            188.50,
            185.594,
        ),
        (
            "oci-oke-a100-roce-sriov-2node-nccl2143.log",
            "all_reduce",
            "busbw/algbw ratio",
            2,
            16,
            2,
            10737418240,
            180.06,
            175.531,
        ),
        (
            "gcp-a3mega-h100-2node-allreduce.log",
            "all_reduce",
            "command line",
            31,
            16,
            2,
            8589934592,
            338.82,
            70.742,
        ),
        (
            "nccl-tests-issue309-h100-8node-64gpu.log",
            "all_reduce",
            "busbw/algbw ratio",
            14,
            64,
            8,
            8589934592,
            320.70,
            183.055,
        ),
        (
            "coreweave-gb200-nvl72-2rack-144gpu-nccl2262.log",
            "all_reduce",
            "busbw/algbw ratio",
            6,
            144,
            None,
            17179869184,
            810.41,
            688.487,
        ),
    ],
)
def test_published_logs_parse(
    name: str,
    op: str,
    op_from: str,
    rows: int,
    ranks: int,
    nodes: int | None,
    last_size: int,
    last_busbw: float,
    avg: float,
) -> None:
    log = parse_nccl_log(read(name), name)
    assert (log.op, log.op_from) == (op, op_from)
    assert len(log.rows) == rows
    assert (log.ranks, log.nodes) == (ranks, nodes)
    assert log.rows[-1].size_bytes == last_size
    assert log.rows[-1].busbw_gbs == pytest.approx(last_busbw)
    assert log.avg_busbw_gbs == pytest.approx(avg)
    sizes = [r.size_bytes for r in log.rows]
    assert sizes == sorted(sizes)


def test_old_format_with_mpi_tags_and_info_lines_inside_the_table() -> None:
    log = parse_nccl_log(read("aws-p4d-a100-efa-2node-allreduce-nccl283.log"), "aws")
    first = log.rows[0]
    assert (first.size_bytes, first.count, first.dtype, first.redop) == (8, 2, "float", "sum")
    assert first.time_us == pytest.approx(167.5)
    assert first.wrong == "2e-07"  # old 'error' column: a rounding error, not a failure
    assert log.nccl_version == "2.8.3+cuda11.2"
    assert log.hosts == ("nccl-tests-efa-worker-0", "nccl-tests-efa-worker-1")
    assert log.devices == ("A100-SXM4-40GB",)
    assert log.complete


def test_in_place_columns_are_kept_apart() -> None:
    log = parse_nccl_log(read(H100_2NODE), "h100")
    row = next(r for r in log.rows if r.size_bytes == 2**30)
    assert (row.time_us, row.algbw_gbs, row.busbw_gbs) == (4484.9, 239.41, 448.90)
    assert (row.in_place_time_us, row.in_place_algbw_gbs, row.in_place_busbw_gbs) == (
        4470.2,
        240.20,
        450.37,
    )
    assert log.devices == ("NVIDIA H100 80GB HBM3",)


def test_elided_and_edited_log_parses_with_warnings() -> None:
    name = "coreweave-h100-64gpu-ib-sharp-truncated.log"
    log = parse_nccl_log(read(name), name)
    assert len(log.rows) == 5
    assert log.ranks is None  # the README cut the device list
    assert not log.complete
    text = " | ".join(log.warnings)
    assert "elided" in text
    assert "maxBytes" in text


def test_excerpt_without_run_header_is_flagged() -> None:
    name = "coreweave-gb200-nvl72-20rack-1440gpu.log"
    log = parse_nccl_log(read(name), name)
    assert log.ranks == 1440
    assert log.ranks_per_node == ()  # not every rank's device line: no per-host count
    assert any("no run header" in w for w in log.warnings)


def cut(text: str, marker: str, keep: int = 0) -> str:
    """``text`` up to ``keep`` characters into the first line containing ``marker``."""
    at = text.index(marker)
    return text[: at + keep]


def test_log_cut_mid_row_keeps_complete_rows_and_warns() -> None:
    text = read(H100_2NODE)
    cut_text = cut(text, "  4294967296    1073741824", keep=60)
    log = parse_nccl_log(cut_text, "cut.log")
    assert log.rows[-1].size_bytes == 2147483648
    assert any("cut short and was dropped" in w for w in log.warnings)
    assert any("summary line" in w for w in log.warnings)


def test_log_cut_before_the_first_row_is_an_error() -> None:
    text = cut(read(H100_2NODE), "           8             2")
    with pytest.raises(NcclLogError, match="no result row"):
        parse_nccl_log(text, "cut.log")


def test_log_cut_before_the_table_is_an_error() -> None:
    text = cut(read(H100_2NODE), "NCCL version")
    with pytest.raises(NcclLogError, match=r"cut\.log: no nccl-tests result table"):
        parse_nccl_log(text, "cut.log")


def test_garbage_is_an_error() -> None:
    with pytest.raises(NcclLogError, match="no nccl-tests result table"):
        parse_nccl_log("Segmentation fault (core dumped)\n", "crash.log")


def test_cut_row_followed_by_more_rows_is_an_error() -> None:
    lines = read(H100_2NODE).splitlines()
    i = next(n for n, line in enumerate(lines) if line.lstrip().startswith("1048576 "))
    lines[i] = lines[i][:50]
    with pytest.raises(NcclLogError, match="cut short but more rows follow"):
        parse_nccl_log("\n".join(lines), "mangled.log")


def test_extra_columns_and_non_numbers_are_errors() -> None:
    lines = read(H100_2NODE).splitlines()
    i = next(n for n, line in enumerate(lines) if line.lstrip().startswith("1048576 "))
    extra = [*lines[:i], lines[i] + "  7", *lines[i + 1 :]]
    with pytest.raises(NcclLogError, match="14 columns where the table header has 13"):
        parse_nccl_log("\n".join(extra), "extra.log")
    bad = [*lines[:i], lines[i].replace("14.58", "14.5x"), *lines[i + 1 :]]
    with pytest.raises(NcclLogError, match=r"algbw '14\.5x' is not a number"):
        parse_nccl_log("\n".join(bad), "bad.log")


def test_two_tables_in_one_log_are_refused() -> None:
    text = read(H100_2NODE)
    with pytest.raises(NcclLogError, match="second result table"):
        parse_nccl_log(text + text, "twice.log")


def test_validation_failures_are_reported() -> None:
    text = read("oci-oke-a100-roce-sriov-2node-nccl2143.log")
    broken = text.replace("170.99      0    11774", "170.99      3    11774").replace(
        ": 0 OK", ": 12 FAILED"
    )
    log = parse_nccl_log(broken, "broken.log")
    assert any("validation errors at 1" in w for w in log.warnings)
    assert any("out-of-bounds" in w for w in log.warnings)


def test_collective_can_be_given_and_must_be_known() -> None:
    text = read("oci-oke-a100-roce-sriov-2node-nccl2143.log")
    assert parse_nccl_log(text, "x", op="reduce_scatter").op_from == "given"
    with pytest.raises(NcclLogError, match="unknown collective 'allreduce'"):
        parse_nccl_log(text, "x", op="allreduce")


def test_ratio_inference_edge_cases() -> None:
    header = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
    slow = header + "1024 256 float sum -1 10.0 0.10 0.19 0 10.0 0.10 0.19 0\n"
    with pytest.raises(NcclLogError, match="cannot tell which collective"):
        parse_nccl_log(slow, "slow.log")
    equal = header + "1073741824 268435456 float sum -1 5000 200.0 200.0 0 5000 200.0 200.0 0\n"
    with pytest.raises(NcclLogError, match="fits several collectives"):
        parse_nccl_log(equal, "equal.log")
    two_ranks = (
        "#  Rank  0 Group  0 Pid 1 on a device  0 [0x1] GPU\n"
        "#  Rank  1 Group  0 Pid 2 on b device  0 [0x1] GPU\n" + equal
    )
    log = parse_nccl_log(two_ranks, "two.log")
    assert (log.op, log.ranks, log.nodes) == ("all_reduce", 2, 2)
    scatter = header + "1073741824 134217728 float sum -1 5000 200.0 100.0 0 5000 200 100 0\n"
    assert parse_nccl_log(scatter, "rs.log").op == "reduce_scatter"
