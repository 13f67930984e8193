"""A Textual stylesheet that doesn't parse all of its CSS again when nothing it depends on changed.

Textual calls `App.refresh_css()` whenever a screen first shown in a mode (every screen of
`PoppyApp.MODES`, the inbox included, before the first frame) is behind the app's CSS update
count. `refresh_css` sets the theme's variables again and `reparse()`s every source in a fresh
stylesheet, which also empties the parse cache: the next widget class that brings its
DEFAULT_CSS then parses poppy.tcss and Textual's own CSS a third time. At start-up that was
three full parses (~60 ms of a ~450 ms first frame) for rules identical each time.

Parsed rules depend only on the sources and the variables, so with the same variables a
reparse is a `parse()` of this stylesheet, whose own cache holds each source's rules: each
source parsed once, a new or changed source parsed when it comes. A theme (new variables) still
parses everything again. Only Stylesheet's public methods are overridden.
"""

from __future__ import annotations

from textual.css.stylesheet import Stylesheet


class StableStylesheet(Stylesheet):
    def __init__(self, *, variables: dict[str, str] | None = None) -> None:
        super().__init__(variables=variables)
        # Names of our own, without a leading underscore: Textual's private names are its own.
        self.parsed_with_variables = dict(variables or {})
        self.theme_changed = False

    def set_variables(self, variables: dict[str, str]) -> None:
        if variables == self.parsed_with_variables:
            return  # the same values: the parsed rules (and styles) stand
        self.parsed_with_variables = dict(variables)
        self.theme_changed = True
        super().set_variables(variables)

    def reparse(self) -> None:
        if self.theme_changed:
            super().reparse()  # a fresh parse of everything, as Textual does
            self.theme_changed = False
            return
        # Same variables: every source's rules are what its parse gave (the stylesheet's parse
        # cache is keyed by the source's text), so only sources added since are parsed.
        self.parse()
