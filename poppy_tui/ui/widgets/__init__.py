"""Widgets of the review and list screens. Import the module you need; nothing is re-exported."""
