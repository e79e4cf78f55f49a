"""The HTML report (mptcplab.report, `mptcplab report`) of a reproduction, a saved run and
a sweep store: content, escaping, self-containment and bad input. Rendering in a
browser is tests/python/test_report_render.py."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

pytest.importorskip("matplotlib")

from mptcplab import ScenarioError  # noqa: E402
from mptcplab.report import Sweep, render_report, write_report  # noqa: E402
from mptcplab.stats import fmt_ci, mean_ci  # noqa: E402
from mptcplab.sweep import parse_plan, run_sweep  # noqa: E402

from conftest import minimal, run_cli  # noqa: E402
from report_fixtures import HOSTILE, sample_reproduction, saved_run  # noqa: E402


class Page(HTMLParser):
    """Tags, text of the cells of each table row, and every attribute value."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.rows: list[tuple[str, list[str]]] = []  # (tr class, cell texts)
        self.text: list[str] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._row_class = ""
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.tags.append((tag, a))
        if tag == "tr":
            self._row, self._row_class = [], a.get("class", "")
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append((self._row_class, self._row))
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def count(self, tag: str, **attrs: str) -> int:
        return sum(1 for t, a in self.tags if t == tag and all(v in a.get(k, "").split() for k, v in attrs.items()))


@pytest.fixture(scope="module")
def rep_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("report") / "toy"
    sample_reproduction().save(d)
    return d


@pytest.fixture(scope="module")
def rep_html(rep_dir):
    path = write_report(rep_dir)
    assert path == rep_dir / "report.html"
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return saved_run(tmp_path_factory.mktemp("report") / "run")


# -- a reproduction -------------------------------------------------------------------------
def test_a_reproduction_report_has_the_numbered_claims_with_marks_and_the_pass_count(rep_html):
    page = Page(rep_html)
    claims = [(cls, cells) for cls, cells in page.rows if "claim" in cls.split()]
    assert [cells[0] for _, cells in claims] == ["C1", "C2", "C3"]
    assert [cells[4] for _, cells in claims] == ["✓", "✗", "✓"]
    assert [cls for cls, _ in claims] == ["claim pass", "claim fail", "claim pass"]
    assert claims[1][1][1] == HOSTILE and claims[1][1][5] == "runs 10x shorter"
    assert claims[0][1][2:4] == ["Fig. 3: ratio 0.8", "0.79 ± 0.02"]
    assert re.search(r'<span class="passed">2</span> of <span class="total">3</span> claims hold', rep_html)


def test_a_reproduction_report_draws_each_figure_inline_and_lists_its_tables(rep_html):
    page = Page(rep_html)
    assert page.count("figure", **{"class": "plot"}) == 4
    assert page.count("svg") == 4 and page.count("img") == 0
    kinds = [a["data-kind"] for t, a in page.tags if t == "figure"]
    assert kinds == ["bar", "cdf", "timeseries", "scatter"]
    data_rows = [cells for cls, cells in page.rows if cls == "" and len(cells) == 3 and cells[2] == "3"]
    assert [r[0] for r in data_rows] == ["lia", "reno", HOSTILE]
    assert data_rows[2][1] == "5.12346"


def test_a_reproduction_report_shows_metadata_scenarios_and_notes(rep_html):
    page = Page(rep_html)
    meta = {cells[0]: cells[1] for cls, cells in page.rows if len(cells) == 2}
    assert meta["seeds"] == "[1, 2, 3]" and meta["runs"] == "3" and meta["created"] == "2025-01-02T03:04:05Z"
    assert meta["duration_s"] == "2" and meta["wall_s"] == "1.25" and meta["version"] == "0.1.0"
    text = "".join(page.text)
    assert 'name = "toy"\n# <b>not bold</b> & co' in text
    assert "the testbed's RTT was 100 ms" in text
    assert "<code>100 ms</code>" in rep_html and "<strong>two</strong>" in rep_html


def test_every_string_from_the_input_is_escaped(rep_html):
    page = Page(rep_html)
    assert page.count("script") == 0 and page.count("b") == 0  # <b> of the input never became a tag
    assert rep_html.count("&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;") >= 6  # claim, table, meta, ...
    assert "A toy paper &lt;with&gt; markup &amp; ampersands" in rep_html


def test_figure_text_cannot_break_out_of_the_inline_svg(tmp_path):
    from mptcplab.reproduce import Figure

    rep = sample_reproduction()
    evil = "--><script>alert(1)</script><img src=x onerror=alert(2)>"
    rep.figures = [Figure(evil, "bar", {"categories": [evil], "series": [{"label": evil, "values": [[1.0]]}]},
                          xlabel=evil, ylabel=evil, note=evil)]
    page = Page(write_report(rep, out=tmp_path / "r.html").read_text())
    assert page.count("script") == 0 and page.count("img") == 0
    assert page.count("svg") == 1


def test_the_page_is_self_contained_without_scripts_or_external_urls(rep_html):
    assert not re.search(r"https?://", rep_html)
    assert not re.search(r"<(script|link|iframe|object|embed)\b", rep_html, re.I)
    assert not re.search(r"\bon[a-z]+\s*=", rep_html, re.I)  # no event handlers
    page = Page(rep_html)
    srcs = [a["src"] for t, a in page.tags if "src" in a]
    assert all(s.startswith("data:") for s in srcs)


def test_ids_of_the_inline_svgs_are_unique_on_the_page(rep_html):
    ids = re.findall(r'\bid="([^"]+)"', rep_html)
    assert len(ids) > 20 and len(ids) == len(set(ids))
    refs = set(re.findall(r'(?:href="#|url\(#)([^")]+)', rep_html))
    assert refs and refs <= set(ids)


def test_png_figures_are_embedded_as_base64_images(rep_dir, tmp_path):
    text = write_report(rep_dir, tmp_path / "png.html", figure_format="png").read_text()
    page = Page(text)
    srcs = [a["src"] for t, a in page.tags if t == "img"]
    assert len(srcs) == 4 and all(s.startswith("data:image/png;base64,iVBORw0KGgo") for s in srcs)
    assert page.count("svg") == 0


def test_a_reproduction_object_needs_an_out_and_a_json_file_works_too(rep_dir, tmp_path):
    with pytest.raises(ScenarioError) as info:
        write_report(sample_reproduction())
    assert info.value.field == "--out"
    out = write_report(sample_reproduction(), out=tmp_path / "a.html")
    assert out.read_text() == render_report(rep_dir / "reproduction.json")


# -- a run and a sweep ----------------------------------------------------------------------
def test_a_run_report_shows_its_scenario_metadata_figures_and_tables(run_dir):
    text = write_report(run_dir).read_text(encoding="utf-8")
    page = Page(text)
    assert page.count("figure", **{"class": "plot"}) == 5
    meta = json.loads((run_dir / "meta.json").read_text())
    rows = {cells[0]: cells[1] for _, cells in page.rows if len(cells) == 2}
    assert rows["seed"] == str(meta["seed"]) and rows["version"] == meta["version"]
    assert rows["scenario_sha256"] == meta["scenario_sha256"] and "saved" in rows
    assert (run_dir / "scenario.toml").read_text() in "".join(page.text)
    flows = [cells for _, cells in page.rows if cells and cells[0] == "c0" and len(cells) > 5]
    assert len(flows) == 3  # one flow row, two subflow rows


def test_a_sweep_report_shows_mean_and_95_percent_ci_per_parameter_value(tmp_path):
    scenario = minimal("1 s")
    scenario["links"][0]["loss"] = 0.01
    plan = parse_plan(
        'name = "tiny"\nrepetitions = 3\nmetrics = ["goodput_mbps"]\n'
        '[parameters]\n"connections[0].cc" = ["reno", "cubic"]\n'
        f"[scenario]\n{_toml_tables(scenario)}")
    frame = run_sweep(plan, out=tmp_path / "sw", workers=1, progress=False, log=lambda m: None)
    text = write_report(tmp_path / "sw").read_text(encoding="utf-8")
    page = Page(text)
    rows = {cells[0]: cells for _, cells in page.rows if cells and cells[0] in ("reno", "cubic")}
    for cc in ("reno", "cubic"):
        values = frame[frame["connections[0].cc"] == cc].goodput_mbps.tolist()
        assert rows[cc][2] == "3" and rows[cc][3] == fmt_ci(mean_ci(values))
    kinds = [a["data-kind"] for t, a in page.tags if t == "figure"]
    assert kinds == ["bar", "scatter", "cdf"]
    meta = {cells[0]: cells[1] for _, cells in page.rows if len(cells) == 2}
    assert meta["seeds"] == "1–3" and meta["points"] == "6" and meta["runs per combination"] == "3"
    sweep = Sweep.load(tmp_path / "sw")
    bar = sweep.figure("bar")
    assert bar.data["categories"] == ["reno", "cubic"]
    assert bar.data["series"][0]["values"][0] == pytest.approx(
        frame[frame["connections[0].cc"] == "reno"].goodput_mbps.tolist())


def _toml_tables(d):
    from mptcplab import Scenario

    # The scenario's TOML, its tables moved under [scenario.*].
    out = []
    for line in Scenario.from_dict(d).to_toml().splitlines():
        m = re.match(r"^(\[\[?)([^\]]+)(\]\]?)$", line)
        out.append(f"{m[1]}scenario.{m[2]}{m[3]}" if m else line)
    return "\n".join(out)


# -- bad input ------------------------------------------------------------------------------
def _bad_rep(tmp_path, edit):
    d = sample_reproduction().to_dict()
    edit(d)
    (tmp_path / "reproduction.json").write_text(json.dumps(d))
    return tmp_path


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["claims"][1].pop("verdict"), "claims[1].verdict"),
    (lambda d: d["claims"][0].update(verdict="yes"), "claims[0].verdict"),
    (lambda d: d["figures"][2].update(kind="pie"), "figures[2].kind"),
    (lambda d: d["figures"][0]["data"]["series"][1].update(values=[[1.0]]), "figures[0].data.series[1].values"),
    (lambda d: d["tables"][0]["rows"][1].pop(), "tables[0].rows[1]"),
    (lambda d: d.update(kind="sweep"), "kind"),
    (lambda d: d.pop("title"), "title"),
])
def test_a_damaged_reproduction_names_the_field(tmp_path, edit, field):
    with pytest.raises(ScenarioError) as info:
        write_report(_bad_rep(tmp_path, edit))
    assert info.value.field == field, info.value


def test_a_directory_without_results_is_named(tmp_path):
    with pytest.raises(ScenarioError) as info:
        write_report(tmp_path)
    assert info.value.field == "<results>" and "meta.json" in info.value.message
    (tmp_path / "reproduction.json").write_text("{not json")
    with pytest.raises(ScenarioError) as info:
        write_report(tmp_path)
    assert info.value.field == "reproduction.json" and "not valid JSON" in info.value.message


def test_cli_report_writes_the_page_and_reports_bad_input_on_one_line(rep_dir, tmp_path):
    proc = run_cli("report", str(rep_dir), "--out", str(tmp_path / "r.html"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"wrote {tmp_path / 'r.html'}"
    assert "claims hold" in (tmp_path / "r.html").read_text()
    (tmp_path / "bad").mkdir()
    bad = _bad_rep(tmp_path / "bad", lambda d: d["claims"][0].pop("id"))
    proc = run_cli("report", str(bad))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == "error: claims[0].id: expected a str, got None"
