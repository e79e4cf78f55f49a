"""The HTML report rendered by headless Chromium: the tables, claim marks and figures
must show on screen, not only be present in the file.

Two looks at each page:

* a probe: a copy of the page with a small script appended (the report itself has
  none) that, after load, records each figure's box and whether it drew (an <img>
  decoded to a non-zero size, an <svg> with non-empty content), and the rendered
  claim marks and table rows; `--dump-dom` returns it;
* a screenshot of the page itself (which has no script), in which every figure's box must hold
  coloured (plotted) pixels: text and axes are grey or black, data is coloured.

Chromium comes from Debian's `chromium` package, which `./dev test` installs. Without
it the tests skip, except under CI=true, where they fail.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from mptcplab.report import write_report  # noqa: E402

from report_fixtures import HOSTILE, sample_reproduction, saved_run  # noqa: E402

WIDTH = 1200
MIN_COLOURED_PX = 400  # a plotted line of ~400 px; a broken-image icon has far fewer

PROBE = """<script>
window.addEventListener("load", () => {
  const figures = [...document.querySelectorAll("figure.plot")].map((f) => {
    const g = f.querySelector("svg, img");
    const r = g ? g.getBoundingClientRect() : {left: 0, top: 0, width: 0, height: 0};
    let drawn = false;
    if (g && g.tagName.toLowerCase() === "img") drawn = g.complete && g.naturalWidth > 0;
    else if (g) {
      const b = g.getBBox();
      drawn = b.width > 0 && b.height > 0 && g.querySelectorAll("path, use").length > 0;
    }
    return {id: f.id, drawn, x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height};
  });
  const marks = [...document.querySelectorAll("tr.claim td.mark")].map((td) => ({
    text: td.innerText.trim(), color: getComputedStyle(td).color, visible: td.getBoundingClientRect().height > 0}));
  const rows = [...document.querySelectorAll("table tbody tr")]
    .filter((tr) => tr.getBoundingClientRect().height > 0).length;
  const out = {figures, marks, rows, height: document.documentElement.scrollHeight};
  const pre = document.createElement("pre");
  pre.id = "render-probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Path:
    """One Chromium profile for the module (a fresh one per call costs ~0.5 s)."""
    return tmp_path_factory.mktemp("chromium-profile")


@pytest.fixture(scope="module")
def chromium() -> str:
    path = find_chromium()
    if path is None:
        reason = "Chromium not found (Debian: apt-get install chromium; ./dev test installs it)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; CI=true, so the report render test must run")
        pytest.skip(reason)
    return path


def run_chromium(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-background-networking", "--disable-gpu",
           "--disable-dev-shm-usage", "--disable-extensions", "--no-first-run", "--hide-scrollbars",
           "--mute-audio", "--force-device-scale-factor=1", "--host-resolver-rules=MAP * ~NOTFOUND",
           f"--user-data-dir={profile}", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return proc


def render(chromium: str, profile: Path, page: Path, work: Path) -> tuple[dict, np.ndarray, str]:
    """(probe results, screenshot as an RGB array (rows x columns x 3), DOM) of `page`."""
    from PIL import Image

    probe_page = work / f"probe-{page.name}"
    text = page.read_text(encoding="utf-8")
    probe_page.write_text(text.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = run_chromium(chromium, profile, f"--window-size={WIDTH},900", "--dump-dom",
                       probe_page.as_uri()).stdout
    m = re.search(r'<pre id="render-probe">(.*?)</pre>', dom, re.S)
    assert m, "the probe did not run: " + dom[-500:]
    import html

    probe = json.loads(html.unescape(m[1]))
    height = min(int(probe["height"]) + 20, 16000)
    shot = work / f"{page.stem}.png"
    assert "<script" not in text  # the screenshot is of the report as written: no scripts
    run_chromium(chromium, profile, f"--window-size={WIDTH},{height}", f"--screenshot={shot}",
                 page.as_uri())
    assert shot.is_file(), "chromium wrote no screenshot"
    return probe, np.asarray(Image.open(shot).convert("RGB"), dtype=np.int16), dom


def coloured_pixels(image: np.ndarray, box: dict) -> int:
    """Pixels in the box whose channels differ by more than 60: plotted colours, not the
    white page, grey grid or black text."""
    height, width = image.shape[:2]
    x0, y0 = max(0, int(box["x"])), max(0, int(box["y"]))
    x1, y1 = min(width, int(box["x"] + box["w"])), min(height, int(box["y"] + box["h"]))
    crop = image[y0:y1, x0:x1]
    return int(((crop.max(axis=2) - crop.min(axis=2)) > 60).sum()) if crop.size else 0


def problems(probe: dict, image: np.ndarray, n_figures: int) -> list[str]:
    """What failed to render; empty when every figure drew."""
    out = []
    if len(probe["figures"]) != n_figures:
        out.append(f"expected {n_figures} figures, found {len(probe['figures'])}")
    for f in probe["figures"]:
        if not f["drawn"]:
            out.append(f"{f['id']}: not drawn")
        if f["w"] < 200 or f["h"] < 100:
            out.append(f"{f['id']}: box {f['w']:.0f}x{f['h']:.0f} px")
        n = coloured_pixels(image, f)
        if n < MIN_COLOURED_PX:
            out.append(f"{f['id']}: {n} coloured pixels")
    non_white = int((image.min(axis=2) < 255).sum())
    if non_white < 0.01 * image.shape[0] * image.shape[1]:
        out.append(f"the page is nearly blank ({non_white} non-white pixels)")
    return out


@pytest.fixture(scope="module")
def rep_report(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("render") / "toy"
    sample_reproduction().save(d)
    return write_report(d)


def test_a_reproduction_report_renders_its_claims_tables_and_figures(chromium, profile, rep_report, tmp_path):
    probe, image, dom = render(chromium, profile, rep_report, tmp_path)
    assert problems(probe, image, n_figures=4) == []
    marks = probe["marks"]
    assert [m["text"] for m in marks] == ["✓", "✗", "✓"] and all(m["visible"] for m in marks)
    assert marks[0]["color"] != marks[1]["color"]  # pass and fail are told apart by colour too
    # 3 claims + 3 data-table rows + the metadata rows (the scenario is a <pre>, not a table)
    assert probe["rows"] == 3 + 3 + len(sample_reproduction().meta)
    # The hostile strings arrived as text: the only script is the probe's.
    assert dom.lower().count("<script") == 1
    assert "&lt;script&gt;alert('x')&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in dom
    assert HOSTILE.startswith("<script>")


def test_a_report_of_a_short_simulated_run_renders(chromium, profile, tmp_path):
    run_dir = saved_run(tmp_path / "run", duration="2 s")
    probe, image, _ = render(chromium, profile, write_report(run_dir), tmp_path)
    assert problems(probe, image, n_figures=5) == []
    assert probe["rows"] >= 3 + 8  # flow and subflow rows, metadata


def test_png_figures_render_too(chromium, profile, rep_report, tmp_path):
    page = write_report(rep_report.parent, tmp_path / "png.html", figure_format="png")
    probe, image, _ = render(chromium, profile, page, tmp_path)
    assert problems(probe, image, n_figures=4) == []


# -- the check can fail ---------------------------------------------------------------------
def _replace_svg(text: str, n: int, replacement: str) -> str:
    """`text` with its n-th (1-based) <svg>...</svg> replaced."""
    start = -1
    for _ in range(n):
        start = text.index("<svg ", start + 1)
    end = text.index("</svg>", start) + len("</svg>")
    return text[:start] + replacement + text[end:]


def test_the_check_finds_a_broken_image_and_an_empty_svg(chromium, profile, rep_report, tmp_path):
    text = rep_report.read_text(encoding="utf-8")
    text = _replace_svg(text, 1, '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUg" width="700" '
                                 'height="340" alt="broken">')
    text = _replace_svg(text, 1, '<svg width="700" height="340" viewBox="0 0 700 340"></svg>')  # was figure 2
    damaged = tmp_path / "damaged.html"
    damaged.write_text(text, encoding="utf-8")
    probe, image, _ = render(chromium, profile, damaged, tmp_path)
    found = problems(probe, image, n_figures=4)
    for fig in ("figure-1", "figure-2"):
        assert f"{fig}: not drawn" in found
        assert any(p.startswith(f"{fig}:") and "coloured pixels" in p for p in found)
    assert not any(p.startswith(("figure-3", "figure-4")) for p in found)


def test_a_quick_reproduce_report_renders(chromium, profile, tmp_path):
    """Issue 5, must-pass 4: a report written by `mptcplab reproduce X --quick` renders."""
    from mptcplab.cli import main

    out = tmp_path / "rbpm"
    assert main(["reproduce", "rbpm", "--quick", "--workers", "2", "--out", str(out)]) == 0
    page = out / "report.html"
    probe, image, _ = render(chromium, profile, page, tmp_path)
    from mptcplab.reproduce import Reproduction

    rep = Reproduction.load(out)
    assert problems(probe, image, n_figures=len(rep.figures)) == []
    assert [m["text"] for m in probe["marks"]] == [c.mark for c in rep.claims]
