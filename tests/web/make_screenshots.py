"""Write the README's screenshots of the web page: python -m tests.web.make_screenshots [OUTPUT_DIR]

The TUI screenshots' sample operations (tests/ui/ui_sample.py), served by a real `poppy-tui web`
and taken by headless Chromium: a phone (390x844) on a review, a desktop on the list.
"""

from __future__ import annotations

import sys
import tempfile
from datetime import datetime, UTC
from pathlib import Path

from poppy_tui.agent.paths import resolve_paths
from poppy_tui.agent.store import Store
from tests.ui.ui_sample import build_sample
from tests.web.browser_support import browser, text, wait
from tests.web.web_support import make_home, new_link, running_web

DEFAULT_OUTPUT = Path(__file__).resolve().parents[2] / "screenshots"


def pair(driver, home: Path, name: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(new_link(home))
    driver.find_element(By.ID, "name").send_keys(name)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(driver, lambda d: "Waiting for you" in text(d), "the list")


def main(output: Path) -> list[Path]:
    output.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        home = make_home(Path(folder) / "home", 'key_storage = "file"\narm_delay_seconds = 0\n')
        paths = resolve_paths(home).ensure()
        with Store.open(paths.database) as store:
            rows = build_sample(store, now=datetime.now(UTC))
        with running_web(home, Path(folder)) as server:
            phone = browser(phone=True)
            desktop = browser(size=(1280, 900))
            try:
                pair(phone, home, "phone")
                pair(desktop, home, "desk")
                phone.get(f"{server.url}/op/{rows['jacket']}")
                wait(phone, lambda d: "Summary" in text(d), "the review")
                desktop.get(f"{server.url}/")
                written = [output / "web-phone.png", output / "web-desktop.png"]
                phone.save_screenshot(str(written[0]))
                desktop.save_screenshot(str(written[1]))
            finally:
                phone.quit()
                desktop.quit()
    return written


if __name__ == "__main__":
    for path in main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUTPUT):
        print(path)
