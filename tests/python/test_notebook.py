"""Notebook display (`_repr_html_` of Scenario and Result) and the notebook-style example."""
from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser

import mptcplab
from mptcplab import Result, Scenario

from conftest import REPO, SCENARIOS

VOID = {"br", "hr", "img", "meta", "link", "input", "col", "wbr"}
HOSTILE = '<script>alert("x")</script> & <b onclick="x()">'


class _Checker(HTMLParser):
    """Collects the text and fails on tags closed out of order, left open, or scripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.text: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if any(name.startswith("on") for name, _ in attrs):
            self.errors.append(f"event handler attribute on <{tag}>")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(fragment: str) -> _Checker:
    p = _Checker()
    p.feed(fragment)
    p.close()
    assert not p.errors, p.errors
    assert not p.stack, f"left open: {p.stack}"
    assert "script" not in p.tags
    return p


def text_of(fragment: str) -> str:
    return " ".join(parse(fragment).text)


def test_the_scenario_display_names_links_paths_connections_and_profile():
    scn = Scenario.from_toml(SCENARIOS / "validate" / "rate-limited-20ms.toml").with_("run.profile", "upstream")
    scn = scn.with_("connections[0].send_buffer", "4 MiB").with_("connections[0].receive_buffer", "6 MiB")
    text = text_of(scn._repr_html_())
    d = scn.to_dict()
    c = d["connections"][0]
    for want in [scn.name, "upstream", "4 MiB", "6 MiB", c["cc"], *[x["name"] for x in d["links"]],
                 *[x["name"] for x in d["paths"]], d["links"][0]["rate"]]:
        assert str(want) in text, want
    for field in ("scheduler", "path manager", "send buffer", "receive buffer", "profile"):
        assert field in text


def test_the_default_scenario_display_shows_its_description_and_schedule():
    text = text_of(Scenario.default()._repr_html_())
    for want in ("wifi-lte", "WiFi-like", "p-wifi", "p-lte", "minrtt", "fullmesh", "cubic", "2 steps",
                 "out_of_tree (default)"):
        assert want in text, want


def test_a_hostile_description_and_name_are_escaped_in_both_displays():
    scn = Scenario.default().with_("description", HOSTILE).with_("name", "<i>n</i>").with_duration("0.5 s")
    for fragment in (scn._repr_html_(), mptcplab.simulate(scn)._repr_html_()):
        assert "<script" not in fragment and "onclick=\"" not in fragment
        assert "&lt;script&gt;" in fragment
        assert HOSTILE in text_of(fragment)  # shown as text, whole
        assert "<i>n</i>" in text_of(fragment)


def test_the_result_display_holds_the_flow_and_subflow_tables_and_meta():
    res = mptcplab.simulate(Scenario.default().with_duration("1 s"), seed=7)
    fragment = res._repr_html_()
    text = text_of(fragment)
    for want in ("wifi-lte", "7", res.meta["version"], "duration_s", "1.0", "profile", "out_of_tree",
                 "scenario_sha256", res.meta["scenario_sha256"], "goodput_mbps", "bytes_acked", "p-wifi", "p-lte"):
        assert str(want) in text, want
    assert fragment.count("<table") == 4  # head, flows, subflows, meta
    assert str(res.summary["bytes_delivered"].iloc[0]) in text


def test_a_loaded_result_displays_like_the_one_that_was_saved(tmp_path):
    res = mptcplab.simulate(Scenario.default().with_duration("0.5 s"))
    loaded = Result.load(res.save(tmp_path / "r"))
    assert text_of(loaded._repr_html_()) == text_of(res._repr_html_())


def test_the_compare_two_ccs_example_writes_its_figures(tmp_path):
    """examples/compare_two_ccs.py, run as a script with the Agg backend and a short
    duration: it prints the comparison table and writes the figures it names."""
    env = {**os.environ, "MPLBACKEND": "Agg", "MPTCPLAB_EXAMPLE_OUT": str(tmp_path),
           "MPTCPLAB_EXAMPLE_DURATION": "3 s"}
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "compare_two_ccs.py")], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for name in ("run.png", "compare.png"):
        f = tmp_path / name
        assert f.is_file() and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert f"wrote {f}" in proc.stdout
    lines = proc.stdout.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.split()[:1] == ["cc"])
    rows = {ln.split()[0]: ln.split() for ln in lines[header + 1:header + 3]}
    assert set(rows) == {"cubic", "lia"}
    assert all(float(r[1]) > 0 for r in rows.values())  # goodput column
