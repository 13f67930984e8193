"""poppy-tui: a terminal Personal Agent for Poppy's operations extension v2.

Nothing heavy is imported here: `poppy-tui --version` and the headless
library must not pay for Textual (see docs/architecture.md).
"""

__version__ = "0.1.0"
