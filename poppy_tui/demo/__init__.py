"""The demo Company: Manzanita Outfitters, a real Poppy Company on loopback.

It serves poppy.json, a REST API with an OpenAPI document, an MCP server and
conversations with a scripted Company Agent, and supports the operations
extension v2. `poppy-tui --demo` talks to it, and tests use it as their
partner (see poppy_tui.demo.testing and docs/demo-company.md).
"""

from poppy_tui.demo.faults import Faults
from poppy_tui.demo.server import RunningCompany, serve_company, start_company

__all__ = ["Faults", "RunningCompany", "serve_company", "start_company"]
