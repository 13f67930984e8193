"""`poppy-tui web`: the page a paired phone or computer decides on (docs/web.md). Server-rendered
HTML (Starlette, Jinja2 with escaping on), over the same store and the same `Agent` as the TUI.
Uses agent/ and safety/; never Textual."""
