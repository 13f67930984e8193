"""A live 'expires in 4m 05s' that reads the app's clock, so snapshots can freeze it."""

from __future__ import annotations

from datetime import datetime, UTC
from collections.abc import Callable

from textual.content import Content
from textual.widgets import Static

from poppy_tui.ui.format import countdown, local_time


def app_now(widget: object) -> datetime:
    """The app's injectable clock, or the real one outside a PoppyApp."""
    clock: Callable[[], datetime] | None = getattr(getattr(widget, "app", None), "clock", None)
    return clock() if clock is not None else datetime.now(UTC)


class Countdown(Static):
    """Counts down to `target`. Adds -soon under a minute and -expired after, for styling."""

    DEFAULT_CLASSES = "countdown"

    def __init__(
        self,
        target: datetime | None = None,
        *,
        prefix: str = "Expires in ",
        expired_text: str = "EXPIRED",
        show_time: bool = True,
        soon_seconds: float = 60.0,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.target = target
        self.prefix = prefix
        self.expired_text = expired_text
        self.show_time = show_time
        self.soon_seconds = soon_seconds
        self.settled: str | None = None  # "performed", "declined": the expiry no longer counts

    def on_mount(self) -> None:
        self._tick()
        self.set_interval(1.0, self._tick)

    def settle(self, outcome: str | None) -> None:
        """Stop counting: the operation was decided for good (or start again with None)."""
        if outcome != self.settled:
            self.settled = outcome
            self._tick()

    def set_target(self, target: datetime | None) -> None:
        self.target = target
        self._tick()

    @property
    def seconds_left(self) -> float | None:
        if self.target is None:
            return None
        return (self.target - app_now(self)).total_seconds()

    def _tick(self) -> None:
        left = self.seconds_left
        if left is None:
            self.update(Content(""))
            return
        if self.settled is not None:
            self.set_class(False, "-expired")
            self.set_class(False, "-soon")
            self.update(
                Content(
                    f"Expiry {local_time(self.target)}: no longer matters, it is {self.settled}"
                )
            )
            return
        expired = left <= 0
        self.set_class(expired, "-expired")
        self.set_class(0 < left < self.soon_seconds, "-soon")
        text = self.expired_text if expired else f"{self.prefix}{countdown(left)}"
        if self.show_time:
            text += f"  ({local_time(self.target)})"
        self.update(Content(text))
