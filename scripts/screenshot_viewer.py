"""Screenshot `atlas view RUN_DIR` in headless Chromium (Debian's /usr/bin/chromium), for the docs.

python scripts/screenshot_viewer.py runs/<name> docs/images/viewer_run.png
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from atlas.viewer.server import ViewerThread

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def main(run_dir: str, out: str) -> None:
    with ViewerThread(Path(run_dir)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        page.goto(url)
        page.wait_for_selector("svg circle", timeout=15_000)
        page.wait_for_timeout(500)
        page.screenshot(path=out)
        browser.close()
    print(out)


if __name__ == "__main__":
    main(*sys.argv[1:3])
