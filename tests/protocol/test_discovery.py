import pytest

from poppy_tui.protocol.discovery import discovery_url, is_loopback_host, parse_poppy_json
from poppy_tui.protocol.errors import InvalidDiscovery


def doc(**overrides):
    base = {
        "protocol_version": "0.4",
        "organization": {"name": "Example Company", "domain": "example.com"},
        "auth": {"issuer": "https://auth.example.com"},
        "agent": {
            "protocols": [
                {"type": "poppy", "endpoint": "https://api.example.com/poppy/conversations"}
            ]
        },
        "apis": [
            {
                "type": "openapi",
                "url": "https://api.example.com/openapi.json",
                "description": "Orders",
            },
            {"type": "mcp", "url": "https://mcp.example.com/mcp", "description": "Search"},
            {"type": "graphql", "url": "https://x.example.com"},
        ],
        "extensions": {"operations": [{"version": "2"}]},
    }
    base.update(overrides)
    return base


def test_digest_example_parses():
    company = parse_poppy_json(doc(), "example.com")
    assert company.name == "Example Company"
    assert company.supports_operations
    assert company.openapi_url == "https://api.example.com/openapi.json"
    assert company.mcp_url == "https://mcp.example.com/mcp"
    assert company.conversation_endpoint == "https://api.example.com/poppy/conversations"
    assert company.audience == "https://auth.example.com"
    assert [a.type for a in company.apis] == ["openapi", "mcp"]  # unknown types skipped


def test_domain_must_match_the_host_case_insensitively_without_stripping_www():
    assert parse_poppy_json(doc(), "EXAMPLE.com").domain == "example.com"
    with pytest.raises(InvalidDiscovery, match="served by"):
        parse_poppy_json(doc(), "www.example.com")


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"protocol_version": "0.2"}, "protocol_version"),
        ({"protocol_version": 0.4}, "protocol_version"),
        ({"organization": {"domain": "example.com"}}, "organization.name"),
        ({"organization": "x"}, "organization"),
        ({"apis": [{"type": "openapi", "url": "http://api.example.com/o"}]}, "apis[0].url"),
        ({"apis": [{"type": "openapi", "url": "https://u:p@api.example.com/o"}]}, "apis[0].url"),
        ({"apis": "x"}, "apis"),
        ({"auth": {"issuer": "ftp://x"}}, "auth.issuer"),
    ],
)
def test_invalid_documents_name_the_field(overrides, field):
    with pytest.raises(InvalidDiscovery) as err:
        parse_poppy_json(doc(**overrides), "example.com")
    assert err.value.field == field


def test_document_with_no_interface_is_refused():
    with pytest.raises(InvalidDiscovery, match="no interface"):
        parse_poppy_json(doc(apis=[], agent=None), "example.com")


def test_loopback_http_only_when_allowed():
    local = doc(
        organization={"name": "Demo", "domain": "127.0.0.1:8123"},
        auth={"issuer": "http://127.0.0.1:8123"},
        apis=[{"type": "openapi", "url": "http://127.0.0.1:8123/openapi.json"}],
        agent=None,
    )
    with pytest.raises(InvalidDiscovery):
        parse_poppy_json(local, "127.0.0.1:8123")
    assert parse_poppy_json(
        local, "127.0.0.1:8123", allow_loopback_http=True
    ).openapi_url.startswith("http://")
    with pytest.raises(InvalidDiscovery):
        parse_poppy_json(
            doc(apis=[{"type": "openapi", "url": "http://10.0.0.1/o"}]),
            "example.com",
            allow_loopback_http=True,
        )


def test_discovery_url():
    assert discovery_url("example.com") == "https://example.com/.well-known/poppy.json"
    assert (
        discovery_url("http://127.0.0.1:8123", True)
        == "http://127.0.0.1:8123/.well-known/poppy.json"
    )
    with pytest.raises(InvalidDiscovery):
        discovery_url("http://example.com", True)
    with pytest.raises(InvalidDiscovery):
        discovery_url("http://127.0.0.1:8123")
    assert (
        is_loopback_host("[::1]")
        and is_loopback_host("localhost")
        and not is_loopback_host("10.0.0.1")
    )


def test_operations_extension_absent_or_other_major():
    assert not parse_poppy_json(doc(extensions={}), "example.com").supports_operations
    assert not parse_poppy_json(
        doc(extensions={"operations": [{"version": "3"}]}), "example.com"
    ).supports_operations


def test_private_address_literals_are_refused_even_for_local_companies():
    for url in (
        "https://10.0.0.1/mcp",
        "https://192.168.1.5/o",
        "https://[fe80::1]/o",
        "https://169.254.169.254/x",
    ):
        with pytest.raises(InvalidDiscovery, match="private"):
            parse_poppy_json(
                doc(apis=[{"type": "openapi", "url": url}]), "example.com", allow_loopback_http=True
            )


def test_a_remote_company_cannot_point_the_agent_at_loopback():
    remote = doc(apis=[{"type": "mcp", "url": "https://127.0.0.1:8443/mcp"}])
    with pytest.raises(InvalidDiscovery, match="loopback"):
        parse_poppy_json(remote, "example.com", allow_loopback_http=True)
