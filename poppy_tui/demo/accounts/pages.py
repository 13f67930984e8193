"""The HTML pages a person sees at the demo Company: Direct Sign-In's sign-in and
consent page, and Device Sign-In's verification page.

Everything shown that came from outside (the agent's client_name and client_id from
its CIMD, the parameters of the request) is escaped, stripped of control and bidi
characters and shortened. Opening a page approves nothing: only a POST of the form
with the person's password and their "Allow" does.
"""

from __future__ import annotations

import html
import unicodedata

from starlette.responses import HTMLResponse

from poppy_tui.demo.accounts.users import SCOPE_DESCRIPTIONS

ORGANIZATION = "Manzanita Outfitters"
MAX_NAME_CHARS = 80


def plain(text: object, limit: int = MAX_NAME_CHARS) -> str:
    """Text from outside as safe HTML: no control, format (bidi) or private-use characters."""
    cleaned = "".join(
        ch
        for ch in str(text)
        if unicodedata.category(ch) not in ("Cc", "Cf", "Co", "Cs", "Zl", "Zp")
    )
    cleaned = " ".join(cleaned.split())
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1] + "…"
    return html.escape(cleaned, quote=True)


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    document = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)} · {ORGANIZATION}</title>
<meta name="referrer" content="no-referrer">
<style>body{{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}}
.agent{{font-weight:bold}} .error{{color:#a00}} li{{margin:.3rem 0}}</style></head>
<body><h1>{ORGANIZATION}</h1>{body}</body></html>"""
    # frame-ancestors/X-Frame-Options: a consent page must not be framed (clickjacking).
    headers = {
        "X-Frame-Options": "DENY",
        "Content-Security-Policy": "frame-ancestors 'none'",
        "Cache-Control": "no-store",
    }
    return HTMLResponse(document, status_code=status, headers=headers)


def _scope_list(scopes: tuple[str, ...]) -> str:
    items = "".join(
        f"<li><code>{plain(s)}</code>: {html.escape(SCOPE_DESCRIPTIONS.get(s, s))}</li>"
        for s in scopes
    )
    return f"<ul>{items}</ul>"


def _hidden(params: dict[str, str]) -> str:
    return "".join(
        f'<input type="hidden" name="{plain(k, 64)}" value="{html.escape(v, quote=True)}">'
        for k, v in params.items()
    )


def _credentials(username: str = "") -> str:
    return (
        f'<p><label>Email <input name="username" autocomplete="username" value="{html.escape(username, quote=True)}"></label></p>'
        '<p><label>Password <input name="password" type="password" autocomplete="current-password"></label></p>'
    )


def consent_page(
    agent_name: str,
    client_id: str,
    scopes: tuple[str, ...],
    params: dict[str, str],
    action: str,
    error: str = "",
) -> HTMLResponse:
    problem = f'<p class="error">{html.escape(error)}</p>' if error else ""
    body = f"""<h2>Sign in and allow an agent</h2>
<p>The personal agent <span class="agent">{plain(agent_name)}</span> (<code>{plain(client_id, 200)}</code>)
asks to act for you at {ORGANIZATION}. It will be able to:</p>
{_scope_list(scopes)}{problem}
<form method="post" action="{html.escape(action, quote=True)}">{_hidden(params)}{_credentials(params.get("username", ""))}
<p><button name="decision" value="allow">Sign in and allow</button>
<button name="decision" value="deny">Deny</button></p></form>"""
    return _page("Sign in", body, 401 if error else 200)


def error_page(message: str, status: int = 400) -> HTMLResponse:
    return _page("Sign-in problem", f'<p class="error">{html.escape(message)}</p>', status)


def device_page(
    action: str,
    user_code: str = "",
    agent: tuple[str, str] | None = None,
    scopes: tuple[str, ...] = (),
    error: str = "",
) -> HTMLResponse:
    about = ""
    if agent is not None:
        about = (
            f'<p>The personal agent <span class="agent">{plain(agent[0])}</span> (<code>{plain(agent[1], 200)}</code>) '
            f"asks to act for you at {ORGANIZATION}. It will be able to:</p>{_scope_list(scopes)}"
            "<p>Allow it only if you started this sign-in and the code matches the one your agent shows.</p>"
        )
    problem = f'<p class="error">{html.escape(error)}</p>' if error else ""
    body = f"""<h2>Connect a device</h2>{about}{problem}
<form method="post" action="{html.escape(action, quote=True)}">
<p><label>Code shown by your agent <input name="user_code" value="{plain(user_code, 32)}" autocomplete="one-time-code"></label></p>
{_credentials()}
<p><button name="decision" value="allow">Sign in and allow</button>
<button name="decision" value="deny">Deny</button></p></form>"""
    return _page("Connect a device", body, 400 if error else 200)


def done_page(message: str) -> HTMLResponse:
    return _page("Done", f"<p>{html.escape(message)}</p>")
