"""POST /api/v1/launch and the file downloads: JSON shape, attachments and error codes."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from clusterscout.web.schemas import LaunchOut


def test_launch_json_has_files_reasons_and_download_paths(client: TestClient) -> None:
    r = client.post("/api/v1/launch", json={"offer_id": "alpha-h100-ib", "nodes": 2})
    assert r.status_code == 200, r.text
    body = LaunchOut.model_validate(r.json())
    assert (body.offer_id, body.nodes, body.gpus_per_node, body.layout) == (
        "alpha-h100-ib",
        2,
        8,
        None,
    )
    by_format = {f.format: f for f in body.formats}
    assert list(by_format) == ["skypilot", "dstack", "slurm"]
    assert not by_format["skypilot"].supported
    assert by_format["skypilot"].reason == "SkyPilot cannot target alpha: Not a SkyPilot cloud."
    (slurm,) = by_format["slurm"].files
    assert slurm.download == "/api/v1/launch/alpha-h100-ib/slurm?nodes=2"
    download = client.get(slurm.download)
    assert download.status_code == 200
    assert download.text == slurm.content
    assert download.headers["content-disposition"] == (
        'attachment; filename="alpha-h100-ib-2n.sbatch"'
    )
    assert download.headers["content-type"].startswith("text/x-shellscript")
    assert body.check.files[0].kind == "check"


def test_a_layout_reaches_the_file_and_its_download_path(client: TestClient) -> None:
    layout = {"tp": 8, "pp": 2, "dp": 1, "sharding": "fsdp", "micro_batch": 1, "global_batch": 32}
    body = {"offer_id": "alpha-h100-ib", "nodes": 2, "format": "slurm", "layout": layout}
    r = client.post("/api/v1/launch", json=body)
    assert r.status_code == 200, r.text
    (fmt,) = r.json()["formats"]
    (file,) = fmt["files"]
    assert "export TP=8 PP=2 DP=1" in file["content"]
    assert "tp=8&pp=2&dp=1&sharding=fsdp&micro_batch=1&global_batch=32" in file["download"]
    assert client.get(file["download"]).text == file["content"]


def test_a_plan_option_picks_its_offer(client: TestClient) -> None:
    plan = {"model": "7B", "tokens": 1e10, "max_nodes": 4}
    first = client.post("/api/v1/plan", json=plan).json()["options"][0]
    offer = first["offer"]["offer_id"]
    r = client.post("/api/v1/launch", json={"offer_id": offer, "plan": plan, "plan_option": 1})
    assert r.status_code == 200, r.text
    assert r.json()["nodes"] == first["nodes"]
    assert r.json()["layout"]["dp"] == first["layout"]["dp"]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code", "field"),
    [
        ("post", "/api/v1/launch", {"offer_id": "nope", "nodes": 2}, 404, "not_found", "offer_id"),
        ("post", "/api/v1/launch", {"offer_id": "alpha-h100-ib"}, 400, "invalid_launch", "nodes"),
        ("post", "/api/v1/launch", [1], 400, "invalid_launch", "body"),
        (
            "post",
            "/api/v1/launch",
            {"offer_id": "alpha-h100-ib", "nodes": 2, "plan": {"model": "nope"}, "plan_option": 1},
            400,
            "invalid_launch",
            "model",
        ),
        ("get", "/api/v1/launch/alpha-h100-ib/skypilot?nodes=2", None, 422, "unsupported", None),
        ("get", "/api/v1/launch/alpha-h100-ib/helm?nodes=2", None, 400, "invalid_launch", "kind"),
        ("get", "/api/v1/launch/alpha-h100-ib/slurm", None, 400, "invalid_launch", "nodes"),
        ("get", "/api/v1/launch/alpha-h100-ib/slurm?nodes=2&x=1", None, 400, "invalid_launch", "x"),
        ("get", "/api/v1/launch/alpha-h100-ib/slurm?nodes=2&tp=8", None, 400, "invalid_launch",
         "layout.pp"),
        ("get", "/api/v1/launch/nope/slurm?nodes=2", None, 404, "not_found", "offer_id"),
    ],
)  # fmt: skip
def test_errors_are_4xx_naming_the_input(
    client: TestClient,
    method: str,
    path: str,
    body: object,
    status: int,
    code: str,
    field: str | None,
) -> None:
    r = client.post(path, json=body) if method == "post" else client.get(path)
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code
    assert r.json()["error"]["field"] == field
