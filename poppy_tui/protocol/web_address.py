"""Web addresses as a browser reads them, and whether one is on a Company's own domains.

A link poppy-tui shows or opens (a Device Sign-In verification link, a Direct Sign-In page) goes to
wherever the person's browser takes it, so it is read with the browser's rules, the WHATWG URL
Standard (through ada-url, a maintained implementation of it), never with urllib.parse, which
reads several addresses differently:
- `https://evil.test\\.shop.test/x` is evil.test to a browser (a backslash ends the host of an
  http(s) URL), `evil.test\\.shop.test` to urlsplit;
- tabs and newlines anywhere are dropped; `%65vil.test` is evil.test; hosts are lowercased and
  international names become their ASCII form (xn--...), the form DNS and the browser use.

"Own" (0.2 4.6: the issuer's host, a `poppy_domains` entry, or a subdomain of either) uses the
Public Suffix List (the publicsuffixlist package, which ships the list): an entry that is a public
suffix (`test`, `co.uk`, `github.io`) never makes the sites under it the Company's. Loopback and IP
hosts match only exactly, port included: on this machine another port is another program.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable

WEB_SCHEMES = ("https", "http")
_LOOPBACK_NAMES = frozenset({"localhost"})


@dataclass(frozen=True)
class BrowserUrl:
    """A URL as the browser will load it."""

    href: str  # the serialisation the browser loads (and the one to show)
    scheme: str  # "https" or "http"
    host: str  # ASCII, lowercase, no trailing dot; IPv6 in brackets
    port: int  # the effective port (443/80 when the URL names none)
    has_userinfo: bool  # `user@` or `user:password@` before the host

    @property
    def netloc(self) -> str:
        default = 443 if self.scheme == "https" else 80
        return self.host if self.port == default else f"{self.host}:{self.port}"


def read_like_a_browser(url: object) -> BrowserUrl | None:
    """An http(s) URL as the WHATWG URL Standard parses it, or None when a browser would not load
    it as a web page (not a URL, another scheme, no host)."""
    if not isinstance(url, str) or not url:
        return None
    import ada_url

    try:
        parsed = ada_url.URL(url)
    except ValueError:
        return None
    scheme = parsed.protocol.rstrip(":")
    host = parsed.hostname
    if scheme not in WEB_SCHEMES or not host:
        return None
    port = int(parsed.port) if parsed.port else (443 if scheme == "https" else 80)
    return BrowserUrl(
        href=parsed.href,
        scheme=scheme,
        host=_without_final_dot(host),
        port=port,
        has_userinfo=bool(parsed.username or parsed.password),
    )


def ascii_host(host: str) -> str | None:
    """A host (or host:port) as a browser writes it: lowercase, international labels as A-labels
    (UTS #46, as the URL Standard does), no trailing dot. None when it is not a valid host."""
    read = (
        read_like_a_browser(f"https://{host}/")
        if host and "/" not in host and "\\" not in host
        else None
    )
    return read.host if read is not None else None


def _without_final_dot(host: str) -> str:
    # `shop.test.` is the same DNS name as `shop.test` (an absolute name): compared without it.
    return host[:-1] if host.endswith(".") and not host.startswith("[") else host


def is_ip_literal(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=1)
def _suffix_list() -> Any:
    from publicsuffixlist import PublicSuffixList

    return (
        PublicSuffixList()
    )  # the list shipped in the package (private section included); no network


def is_public_suffix(domain: str) -> bool:
    """Whether anyone can register names directly under `domain` (`test`, `co.uk`, `github.io`).
    A name the list doesn't know is treated as a top-level domain, so as a public suffix."""
    domain = _without_final_dot(domain.lower())
    if not domain or is_ip_literal(domain):
        return False
    return bool(_suffix_list().is_public(domain))


@dataclass(frozen=True)
class OwnHost:
    host: str  # ASCII, as BrowserUrl.host
    port: int | None  # matters only for loopback and IP hosts


def own_hosts(issuer: str, poppy_domains: Iterable[str]) -> tuple[OwnHost, ...]:
    """The hosts that speak for the Company: the issuer's and each poppy_domains entry (which may
    carry a port, as a loopback Company's does). Entries that aren't hosts are left out."""
    hosts: list[OwnHost] = []
    issuer_url = read_like_a_browser(issuer)
    if issuer_url is not None:
        hosts.append(OwnHost(issuer_url.host, issuer_url.port))
    for entry in poppy_domains:
        if not isinstance(entry, str) or not entry or any(c in entry for c in "/\\@?#"):
            continue
        read = read_like_a_browser(f"https://{entry}/")
        if read is not None:
            explicit_port = read.port if read.netloc != read.host else None
            hosts.append(OwnHost(read.host, explicit_port))
    return tuple(dict.fromkeys(hosts))


def _exact_only(host: str) -> bool:
    return is_ip_literal(host) or host in _LOOPBACK_NAMES


def host_is_own(url: BrowserUrl, owned: Iterable[OwnHost]) -> bool:
    for own in owned:
        if _exact_only(own.host) or _exact_only(url.host):
            # Loopback and IP addresses: the same host and, where the entry says, the same port.
            if url.host == own.host and (own.port is None or url.port == own.port):
                return True
            continue
        if is_public_suffix(own.host):
            continue  # `test` or `co.uk` in poppy_domains makes no site the Company's
        if url.host == own.host or url.host.endswith("." + own.host):
            return True
    return False


def own_link(url: object, issuer: str, poppy_domains: Iterable[str]) -> BrowserUrl | None:
    """`url` read as the browser reads it, when it may be shown and opened as the Company's own:
    http(s) as the issuer is (http only for an http, i.e. loopback, issuer), no user name or
    password before the host, on the issuer's host, a poppy_domains entry or a subdomain of either
    (0.2 4.6). None otherwise."""
    read = read_like_a_browser(url)
    issuer_url = read_like_a_browser(issuer)
    if read is None or issuer_url is None or read.has_userinfo:
        return None
    if read.scheme == "http" and issuer_url.scheme != "http":
        return None
    return read if host_is_own(read, own_hosts(issuer, poppy_domains)) else None
