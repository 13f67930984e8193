"""Headless Chromium (Debian's `chromium` and `chromium-driver`) driven by Selenium, for the tests
that need a real browser. Tests that use it skip, saying why, only when chromium is not installed
(.ci/browser installs it; .ci/run calls that)."""

from __future__ import annotations

import shutil
import tempfile
import weakref
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="Debian's chromium and chromium-driver are not installed (bash .ci/browser installs them)",
)

# As root, on a machine with no network: without these Chromium stalls on connections it tries
# (sync, component updates, QUIC) and refuses to start sandboxed.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)
PHONE = {"width": 390, "height": 844, "pixelRatio": 1}
PHONE_AGENT = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0 Mobile Safari/537.36"
)


def browser(
    *,
    phone: bool = False,
    size: tuple[int, int] = (1280, 900),
    resolve: dict[str, str] | None = None,
    dark: bool = False,
) -> Any:
    """A new Chromium with an empty profile of its own (so its own cookies): a phone's viewport
    (390x844, touch, a phone's user agent) or a desktop window. `resolve` maps host names to
    addresses (a page of another site whose name resolves to this machine: DNS rebinding)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="poppy-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    if resolve:
        rules = ", ".join(f"MAP {name} {address}" for name, address in resolve.items())
        options.add_argument(f"--host-resolver-rules={rules}")
    if dark:
        options.add_argument("--force-dark-mode")
        options.add_argument("--blink-settings=preferredColorScheme=0")
    if phone:
        options.add_experimental_option(
            "mobileEmulation", {"deviceMetrics": PHONE, "userAgent": PHONE_AGENT}
        )
    else:
        options.add_argument(f"--window-size={size[0]},{size[1]}")
    try:
        driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    except BaseException:
        shutil.rmtree(profile, ignore_errors=True)
        raise
    # The profile is removed once the driver is collected (after the test that used it quit it),
    # or at the latest when the worker exits: each run left a dozen profiles in the temp folder.
    weakref.finalize(driver, shutil.rmtree, profile, ignore_errors=True)
    driver.set_page_load_timeout(60)
    return driver


def loaded(driver: Any) -> bool:
    """The page and its script are in (the script's handlers are set on DOMContentLoaded, before
    `complete`): a click before then would miss them, as a person's very quick tap would."""
    try:
        return driver.execute_script("return document.readyState") == "complete"
    except Exception:  # noqa: BLE001 - navigating: no document to ask
        return False


def wait(driver: Any, condition: Any, what: str, timeout: float = 20.0) -> Any:
    """Until the page is loaded and `condition(driver)` holds."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(
        lambda d: loaded(d) and condition(d), message=f"timed out waiting for {what}"
    )


def text(driver: Any) -> str:
    """The page's text; "" while it is being replaced (a navigation, a live update)."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    try:
        return driver.find_element(By.TAG_NAME, "body").text
    except WebDriverException:  # stale, gone, or "does not belong to the document" mid-swap
        return ""


def on_screen(driver: Any, element_id: str) -> bool:
    """Whether the control with that id is inside the viewport, whole, without scrolling, and at
    least 44 px each way (read in one script: a live update may replace it at any moment)."""
    box = driver.execute_script(
        "const e = document.getElementById(arguments[0]); if (!e) return null;"
        "const r = e.getBoundingClientRect();"
        "return [r.top, r.bottom, r.left, r.right, innerHeight, innerWidth, r.height, r.width];",
        element_id,
    )
    if box is None:
        return False
    top, bottom, left, right, height, width, tall, wide = box
    return (
        top >= 0 and left >= 0 and bottom <= height and right <= width and tall >= 44 and wide >= 44
    )


def press(driver: Any, element_id: str, what: str | None = None) -> None:
    """Click the control with that id, once it is there: a live update can replace the part of
    the page it is in between finding it and clicking it (then it is found again)."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    def clicked(d: Any) -> bool:
        try:
            d.find_element(By.ID, element_id).click()
        except WebDriverException:
            return False
        return True

    wait(driver, clicked, what or f"#{element_id} to click")
