"""Screens, each in its own module so the app imports one only when it is first shown."""
