"""The Companies the agent knows: discovery, poppy.json kept fresh, their OpenAPI and MCP tools.
The part of the `Agent` facade (agent.py, a mixin of it) that reads them through agent/companies.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from poppy_tui.agent.errors import AgentError

if TYPE_CHECKING:
    import httpx2

    from poppy_tui.agent import companies as discovery
    from poppy_tui.agent.config import Config
    from poppy_tui.agent.sessions import Sessions
    from poppy_tui.agent.store import CompanyRecord, Store


class CompanyAccess:
    config: Config
    mcp: Any

    if TYPE_CHECKING:

        @property
        def store(self) -> Store: ...
        @property
        def sessions(self) -> Sessions: ...

    async def _http(self) -> httpx2.AsyncClient:
        raise NotImplementedError  # the facade's

    async def add_company(self, domain_or_url: str) -> CompanyRecord:
        from poppy_tui.agent import companies as discovery

        return await discovery.discover(
            await self._http(), self.store, domain_or_url, self.config.allow_loopback
        )

    async def refresh_company(
        self, company: CompanyRecord, force: bool = False
    ) -> discovery.Refreshed:
        """poppy.json brought up to date as its HTTP caching allows (`force`: ask now, conditionally)."""
        from poppy_tui.agent import companies as discovery

        return await discovery.refresh(
            await self._http(),
            self.store,
            self.store.get_company(company.id),
            self.config.allow_loopback,
            force,
        )

    def remove_company(self, company: CompanyRecord) -> CompanyRecord:
        return self.store.remove_company(company.id)

    def match_companies(self, key: str) -> list[CompanyRecord]:
        """Every Company `key` (name, domain, URL) could mean: one, none, or several (ambiguous)."""
        from poppy_tui.agent import companies as discovery

        text = key.strip()
        found = self.store.match_companies(text)
        if not found and "://" in text:
            found = self.store.match_companies(discovery.origin_of(text))
        return found

    def find_company(self, key: str) -> CompanyRecord | None:
        found = self.match_companies(key)
        return found[0] if len(found) == 1 else None

    async def fetch_openapi(self, company: CompanyRecord) -> dict:
        from poppy_tui.agent import companies as discovery

        return await discovery.fetch_openapi(
            await self._http(), company, self.config.allow_loopback, self.sessions.headers(company)
        )

    async def list_tools(self, company: CompanyRecord) -> list[dict]:
        from poppy_tui.agent import companies as discovery

        url = discovery.mcp_url(company)
        if url is None:
            raise AgentError(f"{company.name} lists no MCP server in its poppy.json")
        try:
            return await self.mcp.list_tools(self.store.get_company(company.id), url)
        except RuntimeError as exc:
            raise AgentError(str(exc)) from None
