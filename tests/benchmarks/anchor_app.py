"""The anchor for first-frame figures: a minimal Textual app, one Static. Run under a pty."""

from textual.app import App
from textual.widgets import Static


class Minimal(App[None]):
    def compose(self):
        yield Static("minimal textual app ready")


if __name__ == "__main__":
    Minimal().run()
