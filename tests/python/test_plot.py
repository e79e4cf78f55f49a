"""Plots (mptcplab.plot, `mptcplab plot`): run time series, bars with 10–90 % and min/max
bars, CDFs, scatter, figures of reproductions by kind; byte-stable output."""
from __future__ import annotations

import hashlib
import json

import pytest

pytest.importorskip("matplotlib")

from mptcplab import ScenarioError, plot  # noqa: E402
from mptcplab.reproduce import Figure  # noqa: E402
from mptcplab.stats import spread  # noqa: E402

from conftest import run_cli, run_python  # noqa: E402
from report_fixtures import sample_reproduction, saved_run  # noqa: E402


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return saved_run(tmp_path_factory.mktemp("plot") / "run")


def line_labels(ax) -> list[str]:
    return [line.get_label() for line in ax.get_lines()]


def test_importing_mptcplab_plot_and_report_does_not_import_matplotlib():
    proc = run_python("import sys, mptcplab, mptcplab.plot, mptcplab.report; "
                      "print('matplotlib' in sys.modules)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_throughput_plot_has_a_line_per_subflow_and_the_flows_goodput(run_dir):
    fig = plot.timeseries(run_dir, kind="throughput")
    (ax,) = fig.axes
    assert line_labels(ax) == ["c0/0 (p0)", "c0/1 (p1)", "c0 goodput"]
    import pandas as pd

    subs = pd.read_parquet(run_dir / "subflows.parquet")
    first = subs[subs.subflow == 0]
    x, y = ax.get_lines()[0].get_data()
    assert list(x) == pytest.approx(list(first.time_s))
    assert list(y) == pytest.approx(list(first.throughput_mbps))


def test_all_kinds_give_four_panels_throughput_cwnd_srtt_and_ooo(run_dir):
    fig = plot.timeseries(run_dir, kind="all")
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert len(titles) == 4
    assert "Throughput" in titles[0] and "Congestion window" in titles[1]
    assert "RTT" in titles[2] and "out-of-order" in titles[3]
    assert line_labels(fig.axes[3])[0] == "c0 out-of-order queue"
    assert fig.axes[3].get_xlabel() == "time (s)" and fig.axes[0].get_xlabel() == ""


def test_a_flow_filter_keeps_that_flow_and_an_unknown_flow_is_named(run_dir):
    fig = plot.timeseries(run_dir, kind="cwnd", flow="c0")
    assert len(fig.axes[0].get_lines()) == 2
    with pytest.raises(ScenarioError) as info:
        plot.timeseries(run_dir, kind="cwnd", flow="nope")
    assert info.value.field == "--flow" and "c0" in info.value.message


def test_bars_show_the_mean_with_10_90_percent_and_min_max_bars():
    values = [[1.0, 2.0, 3.0, 10.0], [4.0, 5.0]]
    fig = plot.bars(["a", "b"], [{"label": "x", "values": values}])
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([spread(v)["mean"] for v in values])
    # Two error-bar collections: min–max whiskers, then the thick 10–90 % bars.
    whiskers, pbars = [c for c in ax.collections if c.get_segments()]
    sp = spread(values[0])
    (x0, lo), (_, hi) = whiskers.get_segments()[0]
    assert (lo, hi) == pytest.approx((sp["min"], sp["max"]))
    (_, lo), (_, hi) = pbars.get_segments()[0]
    assert (lo, hi) == pytest.approx((sp["p10"], sp["p90"]))
    assert pbars.get_linewidth()[0] > whiskers.get_linewidth()[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["x", "10–90 %", "min–max"]


def test_bars_of_equal_values_whose_float_mean_rounds_past_them_still_draw():
    v = 13.394579199999999  # a goodput of `mptcplab validate`: sum([v] * 3) / 3 = 13.3945792 > v,
    assert sum([v] * 3) / 3 > v  # so max - mean < 0: matplotlib refused the error bar
    fig = plot.bars(["a"], [{"label": "x", "values": [[v, v, v]]}])
    assert fig.axes[0].patches[0].get_height() == pytest.approx(v)


def test_bars_leave_out_categories_without_runs():
    fig = plot.bars(["a", "b", "c"], [{"label": "x", "values": [[1.0], [], [3.0, 5.0]]}])
    assert [p.get_height() for p in fig.axes[0].patches] == pytest.approx([1.0, 4.0])


def test_cdf_is_a_step_from_zero_to_one_over_the_sorted_values():
    fig = plot.cdf([{"label": "x", "values": [3.0, 1.0, 2.0, 4.0]}])
    x, y = fig.axes[0].get_lines()[0].get_data()
    assert list(x) == [1.0, 1.0, 2.0, 3.0, 4.0]
    assert list(y) == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0])


def test_scatter_gives_each_label_one_colour_and_draws_error_bars():
    fig = plot.scatter([{"label": "a", "x": 1, "y": 2, "xerr": 0.5, "yerr": 0.25},
                        {"label": "b", "x": 3, "y": 4}, {"label": "b", "x": 5, "y": 6}])
    ax = fig.axes[0]
    points = [c for c in ax.collections if c.get_offsets().shape[0] and not hasattr(c, "get_segments")]
    assert [len(c.get_offsets()) for c in points] == [1, 2]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]
    segs = [s for c in ax.collections if hasattr(c, "get_segments") for s in c.get_segments()]
    assert any(list(s[:, 0]) == pytest.approx([0.5, 1.5]) for s in segs)  # x ± 0.5


def test_draw_takes_every_figure_kind_of_a_reproduction():
    rep = sample_reproduction()
    assert sorted(f.kind for f in rep.figures) == ["bar", "cdf", "scatter", "timeseries"]
    for spec in rep.figures:
        fig = plot.draw(spec)
        assert fig.axes[0].get_title(loc="left") == spec.title
        assert fig.axes[0].get_xlabel() == spec.xlabel
    as_dict = json.loads(json.dumps(rep.to_dict()["figures"][2]))
    assert len(plot.draw(as_dict).axes[0].get_lines()) == 2


@pytest.mark.parametrize(("data", "field"), [
    ({"categories": ["a"], "series": [{"label": "x", "values": [[1.0], [2.0]]}]}, "figures[1].data.series[0].values"),
    ({"categories": ["a"], "series": [{"label": "x", "values": [[1.0, "2"]]}]},
     "figures[1].data.series[0].values[0][1]"),
    ({"categories": ["a"]}, "figures[1].data.series"),
    ({"categories": ["a"], "series": {"label": "x"}}, "figures[1].data.series"),
])
def test_bad_bar_data_names_the_field(data, field):
    with pytest.raises(ScenarioError) as info:
        plot.draw(Figure("t", "bar", data), field="figures[1]")
    assert info.value.field == field


def test_timeseries_with_t_and_y_of_different_lengths_is_rejected():
    with pytest.raises(ScenarioError) as info:
        plot.lines([{"label": "x", "t": [0.1, 0.2], "y": [1.0]}])
    assert info.value.field == "figure.data.series[0].y"


def test_an_unknown_figure_kind_is_rejected_with_the_kinds():
    with pytest.raises(ScenarioError) as info:
        plot.draw({"kind": "pie", "data": {}}, field="figures[0]")
    assert info.value.field == "figures[0].kind" and "bar" in info.value.message


def test_save_writes_png_svg_and_pdf_by_suffix_and_rejects_others(tmp_path):
    fig = plot.bars(["a"], [{"label": "x", "values": [[1.0, 2.0]]}])
    assert plot.save(fig, tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot.save(fig, tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"
    text = plot.save(fig, tmp_path / "sub" / "f.svg").read_text()
    assert "<svg" in text and "matplotlib.org" not in text and "<dc:date>" not in text
    with pytest.raises(ScenarioError) as info:
        plot.save(fig, tmp_path / "f.gif")
    assert info.value.field == "--out"


def test_saving_a_figure_twice_gives_the_same_bytes():
    fig = plot.cdf([{"label": "x", "values": [1.0, 2.0, 5.0]}])
    assert plot.svg(fig) == plot.svg(fig)
    assert plot.png(fig) == plot.png(fig)


def test_svg_output_is_byte_stable_across_processes():
    code = ("import hashlib; from mptcplab import plot; "
            "fig = plot.bars(['a', 'b'], [{'label': 'x', 'values': [[1.0, 2.0, 4.0], [3.0]]}], title='t'); "
            "print(hashlib.sha256(plot.svg(fig).encode()).hexdigest())")
    a = run_python(code)  # another process, another PYTHONHASHSEED
    assert a.returncode == 0, a.stderr
    fig = plot.bars(["a", "b"], [{"label": "x", "values": [[1.0, 2.0, 4.0], [3.0]]}], title="t")
    assert a.stdout.strip() == hashlib.sha256(plot.svg(fig).encode()).hexdigest()


# -- the command ----------------------------------------------------------------------------
def test_cli_plot_of_a_run_writes_the_kind_asked_for(run_dir):
    proc = run_cli("plot", str(run_dir), "--kind", "ooo")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"wrote {run_dir / 'ooo.png'}"
    assert (run_dir / "ooo.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_plot_of_a_reproduction_writes_each_figure_or_the_one_asked_for(tmp_path):
    rep_dir = tmp_path / "rep"
    sample_reproduction().save(rep_dir)
    proc = run_cli("plot", str(rep_dir), "--out", str(tmp_path / "fig.png"))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.glob("fig-*.png")) == [f"fig-{n}.png" for n in range(1, 5)]
    proc = run_cli("plot", str(rep_dir), "--figure", "2")
    assert proc.returncode == 0, proc.stderr
    assert (rep_dir / "figure-2.png").is_file()
    proc = run_cli("plot", str(rep_dir), "--figure", "9")
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: --figure: expected 1 to 4, got 9"


@pytest.mark.parametrize(("args", "message"), [
    (["--kind", "pie"], "error: --kind: for a run: expected one of throughput, cwnd, srtt, ooo, all or scatter, "
                        "got 'pie'"),
    (["--out", "x.gif"], "error: --out: 'x.gif': expected a file name ending in .png, .svg or .pdf"),
])
def test_cli_plot_bad_arguments_are_one_line_and_exit_2(run_dir, args, message):
    proc = run_cli("plot", str(run_dir), *args)
    assert proc.returncode == 2
    assert proc.stderr.strip() == message


def test_cli_plot_of_a_missing_directory_says_so(tmp_path):
    proc = run_cli("plot", str(tmp_path / "nothing"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: <results>: '{tmp_path / 'nothing'}' does not exist"
