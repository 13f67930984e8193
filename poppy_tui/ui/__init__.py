"""The Textual app. Importing this package is free: Textual loads only with poppy_tui.ui.app."""
