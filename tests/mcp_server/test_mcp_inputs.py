"""The MCP gate takes what it gives: numbers as integers (as its own results and `next_step` give
them) as well as strings, every input schema typed and valid JSON Schema (Draft 2020-12, the
dialect MCP tool schemas use), read-only hints on the tools that only read, and the package's
version in serverInfo. Through the MCP SDK's own client: in memory against `build_server`, and
once over stdio against `poppy-tui mcp`, against the spec-written Birchwood Dental."""

from __future__ import annotations

import contextlib
import importlib.metadata
from typing import Any
from collections.abc import AsyncIterator

import jsonschema
import pytest
from mcp.client.client import Client

from poppy_tui.mcp_server.server import build_server, server_version
from tests.mcp_server.conftest import mcp_client, person_agent

CANCEL = "/v1/appointments/apt_77/cancel"
READ_ONLY_TOOLS = {
    "list_companies",
    "describe_company",
    "operation_status",
    "wait_for_decision",
    "list_pending",
}
SENDING_TOOLS = {"call_api", "call_company_tool", "talk_to_company"}


@contextlib.asynccontextmanager
async def gate(home) -> AsyncIterator[Client]:
    agent = person_agent(home)
    try:
        async with Client(build_server(agent)) as client:
            yield client
    finally:
        await agent.aclose()


def sample_arguments(company: int, operation: int) -> dict[str, dict[str, Any]]:
    """One call per tool, with the numbers as integers, as a client copies them from results."""
    return {
        "list_companies": {"include_offerings": False},
        "describe_company": {"company": company},
        "call_api": {
            "company": company,
            "method": "POST",
            "path": CANCEL,
            "body": {"reason": "travel"},
            "wait_seconds": 0,
        },
        "call_company_tool": {
            "company": company,
            "tool": "cancel",
            "arguments": {"id": 1},
            "wait_seconds": 0,
        },
        "talk_to_company": {
            "company": company,
            "text": "hello",
            "new_conversation": True,
            "wait_seconds": 0,
        },
        "operation_status": {"operation": operation},
        "wait_for_decision": {"operation": operation, "wait_seconds": 0},
        "list_pending": {},
    }


def _types_of(schema: dict[str, Any]) -> set[str]:
    """The JSON types a property schema allows; fails on one that says nothing about its type."""
    if "type" in schema:
        return {schema["type"]} if isinstance(schema["type"], str) else set(schema["type"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return set().union(*(_types_of(member) for member in schema[key]))
    raise AssertionError(f"a property without a type: {schema}")


async def test_every_input_schema_is_typed_valid_2020_12_and_takes_integer_numbers(home, birchwood):
    async with gate(home) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    samples = sample_arguments(1, 1)
    assert set(tools) == set(samples)  # a new tool needs its sample here
    for name, tool in tools.items():
        schema = tool.input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        # Strict: clients that require it (the OpenAI Agents SDK) can use every tool.
        assert schema["additionalProperties"] is False, name
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.Draft202012Validator(schema).validate(samples[name] | {"aprove": True})
        for prop in schema.get("properties", {}).values():
            assert _types_of(prop), (name, prop)
        jsonschema.Draft202012Validator(schema).validate(samples[name])
        string_numbers = {
            k: str(v) if k in ("company", "operation") else v for k, v in samples[name].items()
        }
        jsonschema.Draft202012Validator(schema).validate(string_numbers)
    body = tools["call_api"].input_schema["properties"]["body"]
    assert _types_of(body) == {"object", "array", "string", "integer", "number", "boolean", "null"}
    validator = jsonschema.Draft202012Validator(tools["call_api"].input_schema)
    for value in ({"a": [1, 2]}, [1, "x"], "text", 3, 2.5, True, None):
        validator.validate(samples["call_api"] | {"body": value})
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(samples["call_api"] | {"company": 1.5})
    for name in ("operation_status", "wait_for_decision"):
        assert _types_of(tools[name].input_schema["properties"]["operation"]) == {
            "integer",
            "string",
        }


async def test_an_argument_no_schema_names_is_refused_not_dropped(home, birchwood):
    async with gate(home) as client:
        for name, arguments in sample_arguments(1, 1).items():
            refused = await client.call_tool(name, arguments | {"approve": True})
            assert refused.is_error, name
            said = refused.content[0].text
            assert f"{name} takes no argument 'approve'" in said and "it takes" in said, said
        misspelt = await client.call_tool(
            "call_api",
            {"company": 1, "method": "POST", "path": CANCEL, "body": {}, "wait_secs": 0},
        )
        assert misspelt.is_error and "'wait_secs'" in misspelt.content[0].text
    assert birchwood.performed == [] and birchwood.bodies == []  # nothing reached the Company


async def test_tools_that_only_read_say_so_and_the_ones_that_send_do_not(home, birchwood):
    async with gate(home) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name in READ_ONLY_TOOLS:
        hints = tools[name].annotations
        assert (
            hints is not None and hints.read_only_hint is True and hints.destructive_hint is False
        ), name
    for name in SENDING_TOOLS:
        hints = tools[name].annotations
        assert hints is None or not hints.read_only_hint, name


async def test_numbers_the_gate_gives_are_taken_back_as_integers(home, birchwood):
    async with gate(home) as client:
        listed = await client.call_tool("list_companies", {})
        [company] = listed.structured_content["companies"]
        assert isinstance(company["company"], int)
        first = await client.call_tool(
            "call_api",
            {
                "company": company["company"],
                "method": "POST",
                "path": CANCEL,
                "body": {},
                "wait_seconds": 0,
            },
        )
        assert (
            first.is_error is not True
            or first.structured_content.get("result") == "waiting_for_person"
        )
        data = first.structured_content
        number = data["operation"]["operation"]
        assert isinstance(number, int) and f"operation={number}" in data["next_step"]
        status = await client.call_tool("operation_status", {"operation": number})
        assert status.structured_content["operation"]["operation"] == number
        waited = await client.call_tool(
            "wait_for_decision", {"operation": number, "wait_seconds": 0}
        )
        assert waited.structured_content["result"] == "waiting_for_person"
        described = await client.call_tool("describe_company", {"company": company["company"]})
        assert described.structured_content["company"]["company"] == company["company"]
        # Strings keep working, and a number nobody gave is a clear error, not a schema failure.
        assert (
            await client.call_tool("operation_status", {"operation": str(number)})
        ).structured_content["operation"]["operation"] == number
        missing = await client.call_tool("operation_status", {"operation": 999_999})
        assert missing.is_error and "no operation '999999'" in missing.content[0].text
        unknown = await client.call_tool("describe_company", {"company": 4242})
        assert unknown.is_error and "unknown company '4242'" in unknown.content[0].text
        for not_a_number in (True, 1.5):  # JSON true is not Company 1; the schema says so too
            refused = await client.call_tool("describe_company", {"company": not_a_number})
            assert refused.is_error and "Birchwood" not in refused.content[0].text, not_a_number
    assert birchwood.performed == []


async def test_a_json_body_of_every_type_reaches_the_company_as_that_type(home, birchwood):
    async with gate(home) as client:
        for body in ([1, 2], "plain", 7, False, {"reason": "travel"}):
            answer = await client.call_tool(
                "call_api",
                {"company": 1, "method": "POST", "path": CANCEL, "body": body, "wait_seconds": 0},
            )
            assert answer.structured_content["result"] == "waiting_for_person", answer.content[
                0
            ].text
    assert birchwood.bodies == [[1, 2], "plain", 7, False, {"reason": "travel"}]


def test_server_version_is_the_packages_with_a_fallback(monkeypatch):
    assert server_version() == importlib.metadata.version("poppy-tui")

    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    import poppy_tui

    assert server_version() == poppy_tui.__version__


async def test_over_stdio_server_info_has_the_version_and_integers_are_taken(
    home, birchwood, tmp_path
):
    async with mcp_client(home, tmp_path) as session:
        info = session.server_info
        first = await session.call_tool(
            "call_api",
            {
                "company": 1,
                "method": "POST",
                "path": CANCEL,
                "body": {"reason": "travel"},
                "wait_seconds": 0,
            },
        )
        number = first.structured_content["operation"]["operation"]
        status = await session.call_tool("operation_status", {"operation": number})
    assert status.structured_content["result"] == "waiting_for_person"
    assert (
        info.name == "poppy-tui" and info.version == importlib.metadata.version("poppy-tui") != ""
    )
