"""``report.html`` opened in a real browser: headless Chromium (Debian's
``chromium``; ``make test`` installs it where root and apt allow) loads a
report the report module wrote from a real tournament, with no console
error, every image decoded, and a screenshot saved.

Run as a script to photograph any report (the README picture)::

    python tests/test_report_browser.py results/quick/report.html docs/report-quick.png
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
]
# Runs first in <head>: records console errors, uncaught exceptions and
# resources that fail to load, then after ``load`` writes the verdict and
# each image's decoded size into the DOM that --dump-dom prints.
PROBE = """<script>
(function () {
  var errors = [];
  var original = console.error;
  console.error = function () {
    errors.push(Array.prototype.join.call(arguments, ' '));
    original.apply(console, arguments);
  };
  window.addEventListener('error', function (e) {
    errors.push(e.message || ('failed to load ' + (e.target && (e.target.src || e.target.href))));
  }, true);
  window.addEventListener('unhandledrejection', function (e) { errors.push(String(e.reason)); });
  window.addEventListener('load', function () {
    var images = Array.prototype.map.call(document.images, function (img) {
      return img.complete && img.naturalWidth > 0 ? img.naturalWidth + 'x' + img.naturalHeight
                                                  : 'broken';
    });
    var out = document.createElement('pre');
    out.id = 'harness-probe';
    out.textContent = JSON.stringify({errors: errors, images: images});
    document.body.appendChild(out);
  });
})();
</script>"""


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run(chromium: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [chromium, *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=timeout,
        )


def probe(chromium: str, report: Path) -> tuple[dict, str]:
    """Open a copy of ``report`` with :data:`PROBE` injected; the probe's
    verdict and Chromium's own log (console messages appear as ``CONSOLE``)."""
    import json

    text = report.read_text(encoding="utf-8")
    probed = report.with_name(f".{report.stem}.probe.html")
    probed.write_text(text.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    try:
        done = _run(chromium, "--enable-logging=stderr", "--v=0",
                    "--virtual-time-budget=5000", "--dump-dom", probed.as_uri())
    finally:
        probed.unlink()
    found = re.search(r"<pre id=\"harness-probe\">(.*?)</pre>", done.stdout, flags=re.S)
    if found is None:
        raise AssertionError(f"the probe did not run; chromium said: {done.stderr[-2000:]}")
    verdict = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    return verdict, done.stderr


def screenshot(chromium: str, report: Path, png: Path, width: int = 1200,
               height: int = 1600) -> Path:
    png.parent.mkdir(parents=True, exist_ok=True)
    _run(chromium, f"--screenshot={png}", f"--window-size={width},{height}",
         "--virtual-time-budget=5000", report.resolve().as_uri())
    if not png.exists() or png.stat().st_size == 0:
        raise AssertionError(f"chromium wrote no screenshot to {png}")
    return png


def small_report(out: Path) -> Path:
    """A report the way the suite writes one: a real tournament's ranking
    table and its Elo and win-matrix plots, rendered by ``suite.document``."""
    import pandas as pd

    from harness import api
    from harness.suite.document import Block, render_html

    result = api.tournament(["random", "uct:4", "uct:16"], out=out / "tournament",
                            board_size=9, games_per_pair=2, seed=1)
    blocks = [
        Block("h1", "go-harness study: browser check"),
        Block("p", f"{len(result.rows)} games between three players on 9x9."),
        Block("table", table=pd.read_csv(result.out / "ranking.csv")),
        Block("img", image=result.out / "elo.png"),
        Block("img", image=result.out / "win_matrix.png"),
    ]
    report = out / "report.html"
    report.write_text(render_html(blocks, "browser check"), encoding="utf-8")
    return report


@pytest.mark.slow
def test_report_opens_in_chromium_without_errors_and_every_image_loads(tmp_path):
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("chromium not installed ('make chromium' installs it as root with apt)")
    report = small_report(tmp_path)
    verdict, log = probe(chromium, report)
    assert verdict["errors"] == []
    assert len(verdict["images"]) == 2
    assert all(re.fullmatch(r"\d+x\d+", size) for size in verdict["images"]), verdict
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert console == []
    png = screenshot(chromium, report, tmp_path / "report.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_the_probe_sees_a_broken_image_and_a_script_error(tmp_path):
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("chromium not installed ('make chromium' installs it as root with apt)")
    page = tmp_path / "broken.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
        "<img alt='bad' src='data:image/png;base64,AAAA'>"
        "<script>console.error('boom'); undefinedFunction();</script></body></html>"
    )
    verdict, _ = probe(chromium, page)
    assert verdict["images"] == ["broken"]
    assert "boom" in verdict["errors"]
    assert any("undefinedFunction" in e for e in verdict["errors"])
    assert any("failed to load" in e for e in verdict["errors"])


if __name__ == "__main__":
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    browser = find_chromium()
    if browser is None:
        raise SystemExit("chromium not installed")
    verdict, _ = probe(browser, source)
    print(verdict)
    print(screenshot(browser, source, target))
