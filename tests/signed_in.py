"""The agent's sign-in, stood in for where a test is about what the agent does with a token, not
about getting one (the real sign-in runs in tests/signin/): the access token its requests carry,
and the sign-in record a finished sign-in keeps.

`Tokens` is what an embedding program assigns to `Agent.access_token_source`; `SignedIn` also
writes (or deletes) the store's sign-in record, which names the account, as a finished sign-in
does (agent/store/sign_ins.py)."""

from __future__ import annotations

from typing import Any

from poppy_tui.agent.store.sign_ins import delete_sign_in, save_sign_in


class Tokens:
    """The access token a request carries (None: signed out), as sign-in's token store gives it;
    `asked` counts the requests that asked for one."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token
        self.asked = 0

    async def __call__(self, company: Any) -> str | None:
        self.asked += 1
        return self.token


class SignedIn(Tokens):
    """The agent's sign-in at one Company: the token its requests carry and the account it named.
    `company` may be set later (once the Company is added)."""

    def __init__(self, agent: Any, company: Any = None) -> None:
        super().__init__()
        self.agent, self.company = agent, company

    def as_(self, token: str | None, account: str | None, scopes: tuple[str, ...] = ("orders",)):
        self.token = token
        if token is None:
            delete_sign_in(self.agent.store, self.company.id)
        else:
            save_sign_in(
                self.agent.store,
                self.company.id,
                self.company.base_url,
                "mediated",
                scopes,
                account,
            )
