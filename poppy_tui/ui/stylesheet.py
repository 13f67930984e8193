"""A Textual stylesheet that doesn't parse all of its CSS again when nothing it depends on changed.

Textual calls `App.refresh_css()` whenever a screen first shown in a mode (every screen of
`PoppyApp.MODES`, the inbox included, before the first frame) is behind the app's CSS update
count. `refresh_css` sets the theme's variables again and `reparse()`s every source in a fresh
stylesheet, which also empties the parse cache: the next widget class that brings its
DEFAULT_CSS then parses poppy.tcss and Textual's own CSS a third time. At start-up that was
three full parses (~60 ms of a ~450 ms first frame) for rules identical each time.

Parsed rules depend only on the sources and the variables, so with the same variables a
reparse is the cached parse: each source parsed once, a new or changed source parsed when it
comes. A theme (new variables) still parses everything again.
"""

from __future__ import annotations

from typing import Any

from textual.css.stylesheet import Stylesheet


class StableStylesheet(Stylesheet):
    def __init__(self, *, variables: dict[str, str] | None = None, cache: Any = None) -> None:
        super().__init__(variables=variables)
        self._parsed_variables = dict(variables or {})
        self._variables_changed = False
        # ui/css_cache.CssCache: rules parsed by an earlier run with the same CSS, variables,
        # Python and Textual (None: parse everything, as Textual does).
        self.cache = cache
        if cache is not None:
            cache.load(self._parsed_variables)

    def _parse_rules(self, css: str, read_from: Any, is_default_rules: bool = False, tie_breaker: int = 0,
                     scope: str = "") -> Any:
        if self.cache is None:
            return super()._parse_rules(css, read_from, is_default_rules, tie_breaker, scope)
        key = (css, tuple(read_from), is_default_rules, tie_breaker, scope)
        rules = self.cache.get(key, self._parsed_variables)
        if rules is None:
            rules = super()._parse_rules(css, read_from, is_default_rules, tie_breaker, scope)
            if not any(rule.errors for rule in rules):
                self.cache.put(key, rules)
        return rules

    def set_variables(self, variables: dict[str, str]) -> None:
        if variables == self._parsed_variables:
            return  # the same values: the cached parses (and styles) stand
        self._parsed_variables = dict(variables)
        self._variables_changed = True
        super().set_variables(variables)

    def reparse(self) -> None:
        if self._variables_changed:
            super().reparse()  # a fresh parse of everything, as Textual does
            self._variables_changed = False
            return
        # Same variables: every source's rules are what its cached parse gave (the cache is
        # keyed by the source's text), so only sources added since are parsed.
        self.parse()
