"""Plots of runs, sweeps and reproductions, drawn with matplotlib.

Every function returns a `matplotlib.figure.Figure` on the Agg canvas, made without
pyplot (no global figure registry, no GUI backend), and `save(fig, path)` writes PNG,
SVG or PDF by the file's suffix. Output is byte-stable: matplotlib's default style plus
fixed fonts and sizes (`STYLE`), a fixed SVG hash salt and no dates in the metadata.

    >>> from mptcplab import plot
    >>> fig = plot.timeseries("results/run1", kind="all")   # a Result or its saved directory
    >>> plot.save(fig, "run1.svg")
    >>> plot.draw(reproduction.figures[0])                   # a reproduce Figure, by its kind

The data of a reproduce `Figure` (mptcplab/reproduce/model.py) is what `bars`, `cdf`,
`lines` and `scatter` take; `run_figures(result)` gives a run's plots as such Figures.
matplotlib is imported on first use: `import mptcplab` never imports it.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from .errors import ScenarioError
from .reproduce.model import FIGURE_KINDS
from .reproduce.model import Figure as FigureSpec

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .result import Result

__all__ = [
    "COLORS", "FORMATS", "RUN_KINDS", "STYLE", "bars", "cdf", "check_format", "draw", "lines", "load_result", "png",
    "run_figures", "save", "scatter", "svg", "throughput_delay", "throughput_delay_spec", "timeseries",
]

ResultLike = Union["Result", str, Path]
FORMATS = ("png", "svg", "pdf")
RUN_KINDS = ("throughput", "cwnd", "srtt", "ooo")  # time-series panels of a run; "all" = every one

# Okabe–Ito colours (distinguishable with colour-blindness), then matplotlib's tab10 extras.
COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
          "#8c564b", "#7f7f7f"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]

# Applied over matplotlib's defaults (not the user's matplotlibrc) while drawing and saving.
STYLE: dict[str, Any] = {
    "font.family": "DejaVu Sans",  # ships with matplotlib: the same glyphs everywhere
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.0,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "figure.figsize": (7.0, 3.4),
    "figure.dpi": 100.0,
    "savefig.dpi": 120.0,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "grid.linewidth": 0.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.3,
    "legend.frameon": False,
    "svg.fonttype": "path",        # text as glyph paths: no font needed to view the SVG
    "svg.hashsalt": "mptcplab",    # fixed ids in the SVG (else random per save)
    "pdf.fonttype": 42,
}
_METADATA: dict[str, dict[str, Any]] = {
    "svg": {"Creator": "mptcplab", "Date": None},
    "pdf": {"Creator": "mptcplab", "Producer": "mptcplab", "CreationDate": None},
    "png": {"Software": "mptcplab"},
}


@contextmanager
def _style() -> Iterator[None]:
    import matplotlib.style
    from cycler import cycler

    with matplotlib.style.context(["default", {**STYLE, "axes.prop_cycle": cycler(color=COLORS)}]):
        yield


def _new_figure(rows: int = 1, height: float | None = None) -> tuple[Figure, list[Axes]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    w, h = STYLE["figure.figsize"]
    fig = Figure(figsize=(w, height or h * rows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, sharex=rows > 1, squeeze=False)[:, 0]
    return fig, list(axes)


def _freeze(fig: Figure) -> Figure:
    """Lay the figure out once, then fix it: constrained layout moves things by a few
    micro-points on every draw, which would make a second save differ from the first.
    (Call `fig.set_layout_engine("constrained")` after adding to a figure.)"""
    with _style():
        fig.draw_without_rendering()
    fig.set_layout_engine("none")
    return fig


# -- saving ---------------------------------------------------------------------------------
def check_format(path: str | Path, fmt: str | None = None) -> str:
    """The output format of `path` (png, svg or pdf), or ScenarioError on `--out`."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ScenarioError("--out", f"'{path}': expected a file name ending in .png, .svg or .pdf")
    return fmt


def save(fig: Figure, path: str | Path, format: str | None = None) -> Path:
    """Write `fig` as PNG, SVG or PDF (by `format`, else the suffix of `path`)."""
    path = Path(path)
    fmt = check_format(path, format)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _style():
            fig.savefig(path, format=fmt, metadata=_METADATA[fmt])
    except OSError as err:
        raise ScenarioError("--out", f"cannot write '{path}': {err.strerror or err}") from None
    return path


def _bytes(fig: Figure, fmt: str) -> bytes:
    import io

    buf = io.BytesIO()
    with _style():
        fig.savefig(buf, format=fmt, metadata=_METADATA[fmt])
    return buf.getvalue()


def svg(fig: Figure) -> str:
    """The figure as SVG text (byte-stable)."""
    return _bytes(fig, "svg").decode("utf-8")


def png(fig: Figure) -> bytes:
    """The figure as PNG bytes."""
    return _bytes(fig, "png")


# -- checking figure data -------------------------------------------------------------------
def _seq(value: Any, field: str) -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        if hasattr(value, "tolist"):  # numpy arrays, pandas series
            return list(value.tolist())
        raise ScenarioError(field, f"expected a list, got {type(value).__name__}")
    return list(value)


def _num(value: Any, field: str) -> float:
    """A number; None (JSON's NaN) is NaN."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if hasattr(value, "item") and not isinstance(value, (str, bytes)):
            return _num(value.item(), field)
        raise ScenarioError(field, f"expected a number, got {value!r}")
    return float(value)


def _nums(value: Any, field: str) -> list[float]:
    return [_num(v, f"{field}[{i}]") for i, v in enumerate(_seq(value, field))]


def _map(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ScenarioError(field, f"expected a table (dict), got {type(value).__name__}")
    return value


def _key(m: Mapping[str, Any], key: str, field: str) -> Any:
    if key not in m:
        raise ScenarioError(f"{field}.{key}", "missing")
    return m[key]


def _finite(values: Sequence[float]) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def _decorate(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    if title:
        ax.set_title(title, loc="left")
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)


def _legend(ax: Axes, n: int, handles: list[Any] | None = None, labels: list[str] | None = None,
            outside: bool = False) -> None:
    """A few short labels go inside the axes; more or longer ones (or `outside`) to the
    right of them (constrained layout then narrows the axes instead of hiding data)."""
    if handles is None or labels is None:
        handles, labels = ax.get_legend_handles_labels()
    if not labels or n < 1:
        return
    if not outside and len(labels) <= 4 and sum(len(t) for t in labels) <= 64:
        ax.legend(handles, labels, ncols=len(labels), loc="best")
    else:
        ax.legend(handles, labels, ncols=1 if len(labels) <= 14 else 2, loc="center left",
                  bbox_to_anchor=(1.01, 0.5))


def _empty(ax: Axes, text: str = "no data") -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="#777777")


# -- the four figure kinds ------------------------------------------------------------------
def _draw_bars(ax: Axes, data: Mapping[str, Any], field: str) -> None:
    """Grouped bars: the mean per category and series; a thick bar from the 10th to the
    90th percentile and thin whiskers from min to max (stats.spread)."""
    from .stats import spread

    categories = [str(c) for c in _seq(_key(data, "categories", field), f"{field}.categories")]
    series = _seq(_key(data, "series", field), f"{field}.series")
    checked = []
    for i, s in enumerate(series):
        f = f"{field}.series[{i}]"
        s = _map(s, f)
        values = _seq(_key(s, "values", f), f"{f}.values")
        if len(values) != len(categories):
            raise ScenarioError(f"{f}.values", f"expected {len(categories)} lists (one per category), "
                                f"got {len(values)}")
        checked.append((str(s.get("label", f"series {i + 1}")),
                        [_finite(_nums(v, f"{f}.values[{j}]")) for j, v in enumerate(values)]))
    if not categories or not checked:
        _empty(ax)
        return
    n = len(checked)
    width = 0.8 / n
    for k, (label, per_cat) in enumerate(checked):
        xs, means, p_lo, p_hi, lo, hi = [], [], [], [], [], []
        for j, vals in enumerate(per_cat):
            if not vals:
                continue
            sp = spread(vals)
            xs.append(j - 0.4 + width * (k + 0.5))
            means.append(sp["mean"])
            # max(0, ...): the float mean of equal values can land a rounding error
            # outside them, and matplotlib refuses negative error bars
            p_lo.append(max(0.0, sp["mean"] - sp["p10"]))
            p_hi.append(max(0.0, sp["p90"] - sp["mean"]))
            lo.append(max(0.0, sp["mean"] - sp["min"]))
            hi.append(max(0.0, sp["max"] - sp["mean"]))
        color = COLORS[k % len(COLORS)]
        ax.bar(xs, means, width=width * 0.9, color=color, label=label, zorder=2)
        ax.errorbar(xs, means, yerr=[lo, hi], fmt="none", ecolor="#333333", elinewidth=0.8, capsize=3, zorder=3)
        ax.errorbar(xs, means, yerr=[p_lo, p_hi], fmt="none", ecolor="#000000", elinewidth=2.6, capsize=0,
                    zorder=4)
    ax.set_xticks(range(len(categories)), categories)
    ax.set_xlim(-0.6, len(categories) - 0.4)
    ax.margins(y=0.18)  # headroom for the legend above the tallest whisker
    ax.grid(axis="x", visible=False)
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([], [], color="#000000", linewidth=2.6), Line2D([], [], color="#333333", linewidth=0.8)]
    labels += ["10–90 %", "min–max"]
    _legend(ax, len(labels), handles, labels)


def _draw_cdf(ax: Axes, data: Mapping[str, Any], field: str) -> None:
    series = _seq(_key(data, "series", field), f"{field}.series")
    drawn = 0
    for i, s in enumerate(series):
        f = f"{field}.series[{i}]"
        s = _map(s, f)
        vals = sorted(_finite(_nums(_key(s, "values", f), f"{f}.values")))
        if not vals:
            continue
        n = len(vals)
        # Empirical CDF F(x) = #{v ≤ x} / n, drawn as steps from 0 to 1.
        xs = [vals[0], *vals]
        ys = [0.0, *((k + 1) / n for k in range(n))]
        ax.step(xs, ys, where="post", label=str(s.get("label", f"series {i + 1}")),
                color=COLORS[i % len(COLORS)])
        drawn += 1
    if not drawn:
        _empty(ax)
        return
    ax.set_ylim(0.0, 1.02)
    _legend(ax, drawn)


def _draw_lines(ax: Axes, data: Mapping[str, Any], field: str) -> None:
    series = _seq(_key(data, "series", field), f"{field}.series")
    drawn = 0
    for i, s in enumerate(series):
        f = f"{field}.series[{i}]"
        s = _map(s, f)
        t = _nums(_key(s, "t", f), f"{f}.t")
        y = _nums(_key(s, "y", f), f"{f}.y")
        if len(t) != len(y):
            raise ScenarioError(f"{f}.y", f"expected {len(t)} values (as many as t), got {len(y)}")
        if not t:
            continue
        ax.plot(t, y, label=str(s.get("label", f"series {i + 1}")), color=COLORS[i % len(COLORS)])
        drawn += 1
    if not drawn:
        _empty(ax, "no samples")
        return
    _legend(ax, drawn)


def _draw_scatter(ax: Axes, data: Mapping[str, Any], field: str) -> None:
    points = _seq(_key(data, "points", field), f"{field}.points")
    groups: dict[str, list[tuple[float, float, float, float]]] = {}
    for i, p in enumerate(points):
        f = f"{field}.points[{i}]"
        p = _map(p, f)
        x, y = _num(_key(p, "x", f), f"{f}.x"), _num(_key(p, "y", f), f"{f}.y")
        xerr, yerr = _num(p.get("xerr"), f"{f}.xerr"), _num(p.get("yerr"), f"{f}.yerr")
        groups.setdefault(str(p.get("label", "")), []).append((x, y, xerr, yerr))
    if not groups:
        _empty(ax)
        return
    for k, (label, pts) in enumerate(groups.items()):
        color, marker = COLORS[k % len(COLORS)], MARKERS[k % len(MARKERS)]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        ax.scatter(xs, ys, color=color, marker=marker, s=28, label=label or None, zorder=3)
        xe = [0.0 if math.isnan(p[2]) else p[2] for p in pts]
        ye = [0.0 if math.isnan(p[3]) else p[3] for p in pts]
        if any(xe) or any(ye):
            ax.errorbar(xs, ys, xerr=xe, yerr=ye, fmt="none", ecolor=color, elinewidth=0.9, capsize=2, zorder=2)
    ax.margins(0.12)
    _legend(ax, sum(1 for label in groups if label), outside=True)  # points can sit anywhere


_DRAW = {"bar": _draw_bars, "cdf": _draw_cdf, "timeseries": _draw_lines, "scatter": _draw_scatter}


def _spec(figure: FigureSpec | Mapping[str, Any], field: str) -> FigureSpec:
    if isinstance(figure, FigureSpec):
        spec = figure
    else:
        m = _map(figure, field)
        kind = _key(m, "kind", field)
        if kind not in FIGURE_KINDS:
            raise ScenarioError(f"{field}.kind", f"expected one of {', '.join(FIGURE_KINDS)}, got {kind!r}")
        spec = FigureSpec(title=str(m.get("title", "")), kind=kind, data=_map(_key(m, "data", field), f"{field}.data"),
                          xlabel=str(m.get("xlabel", "")), ylabel=str(m.get("ylabel", "")), note=str(m.get("note", "")))
    if spec.kind not in _DRAW:
        raise ScenarioError(f"{field}.kind", f"expected one of {', '.join(FIGURE_KINDS)}, got {spec.kind!r}")
    return spec


def draw(figure: FigureSpec | Mapping[str, Any], ax: Axes | None = None, field: str = "figure") -> Figure:
    """Draw a reproduce `Figure` (or its dict) by its kind: bar, cdf, timeseries or scatter.
    Bad data raises `ScenarioError` naming `field` and the path inside it
    (``figures[2].data.series[0].values``). With `ax`, draws into it and returns its figure."""
    spec = _spec(figure, field)
    with _style():
        own = ax is None
        if ax is None:
            fig, (ax,) = _new_figure()
        else:
            fig = ax.figure
        _DRAW[spec.kind](ax, _map(spec.data, f"{field}.data"), f"{field}.data")
        _decorate(ax, spec.title, spec.xlabel, spec.ylabel)
    return _freeze(fig) if own else fig


def bars(categories: Sequence[Any], series: Sequence[Mapping[str, Any]], *, title: str = "", xlabel: str = "",
         ylabel: str = "") -> Figure:
    """Grouped bars (categories × series) of the mean of each list of per-run values, with
    10–90 % bars and min/max whiskers. `series`: ``[{"label": str, "values": [[float per
    run] per category]}]``."""
    return draw(FigureSpec(title, "bar", {"categories": list(categories), "series": list(series)}, xlabel, ylabel))


def cdf(series: Sequence[Mapping[str, Any]], *, title: str = "", xlabel: str = "",
        ylabel: str = "fraction") -> Figure:
    """Empirical CDFs. `series`: ``[{"label": str, "values": [float]}]``."""
    return draw(FigureSpec(title, "cdf", {"series": list(series)}, xlabel, ylabel))


def lines(series: Sequence[Mapping[str, Any]], *, title: str = "", xlabel: str = "time (s)",
          ylabel: str = "") -> Figure:
    """Lines over time. `series`: ``[{"label": str, "t": [float], "y": [float]}]``."""
    return draw(FigureSpec(title, "timeseries", {"series": list(series)}, xlabel, ylabel))


def scatter(points: Sequence[Mapping[str, Any]], *, title: str = "", xlabel: str = "",
            ylabel: str = "") -> Figure:
    """Points, one colour and marker per label, with optional error bars.
    `points`: ``[{"label": str, "x": float, "y": float, "xerr": float?, "yerr": float?}]``."""
    return draw(FigureSpec(title, "scatter", {"points": list(points)}, xlabel, ylabel))


# -- runs -----------------------------------------------------------------------------------
def load_result(result: ResultLike) -> Result:
    """A Result as given, or loaded from its saved directory (Result.save)."""
    from .result import Result

    if isinstance(result, Result):
        return result
    path = Path(result)
    if not (path / "meta.json").is_file():
        raise ScenarioError("<results>", f"'{path}' is not a saved run (no meta.json; write one with "
                            "`mptcplab run --out DIR` or Result.save)")
    try:
        return Result.load(path)
    except ScenarioError:
        raise
    except Exception as err:  # noqa: BLE001 - a damaged directory is bad input
        raise ScenarioError("<results>", f"cannot read the run in '{path}': {type(err).__name__}: {err}") from None


def _flows(frame: Any, flow: str | None, all_flows: list[str]) -> Any:
    if flow is None or frame.empty:
        return frame
    if flow not in all_flows:
        raise ScenarioError("--flow", f"no flow {flow!r}; flows: {', '.join(all_flows) or '(none)'}")
    return frame[frame["flow"] == flow]


def _subflow_series(frame: Any, column: str, scale: float = 1.0) -> list[dict[str, Any]]:
    out = []
    if frame.empty or column not in frame.columns:
        return out
    for (flow, sub), g in frame.groupby(["flow", "subflow"], sort=False):
        path = g["path"].iloc[0] if "path" in g.columns else ""
        out.append({"label": f"{flow}/{sub} ({path})", "t": [float(t) for t in g["time_s"]],
                    "y": [float(v) * scale for v in g[column]]})
    return out


def _flow_series(frame: Any, column: str, suffix: str, scale: float = 1.0) -> list[dict[str, Any]]:
    out = []
    if frame.empty or column not in frame.columns:
        return out
    for flow, g in frame.groupby("flow", sort=False):
        out.append({"label": f"{flow} {suffix}".strip(), "t": [float(t) for t in g["time_s"]],
                    "y": [float(v) * scale for v in g[column]]})
    return out


def run_figures(result: ResultLike, kinds: Sequence[str] = (*RUN_KINDS, "scatter"),
                flow: str | None = None) -> list[FigureSpec]:
    """A run's plots as reproduce Figures (data, drawn by `draw`): per-subflow throughput,
    cwnd and smoothed RTT over time, the out-of-order queue, and the throughput–delay
    scatter of the subflows. `flow` keeps one flow."""
    res = load_result(result)
    subs, conns = res.timeseries.subflows, res.timeseries.connections
    names = [str(f) for f in res.summary["flow"]] if "flow" in res.summary.columns else []
    subs, conns = _flows(subs, flow, names), _flows(conns, flow, names)
    specs = []
    for kind in kinds:
        if kind == "throughput":
            series = _subflow_series(subs, "throughput_mbps") + _flow_series(conns, "goodput_mbps", "goodput")
            specs.append(FigureSpec("Throughput (bytes acknowledged) per subflow and goodput per flow", "timeseries",
                                    {"series": series}, "time (s)", "Mbit/s"))
        elif kind == "cwnd":
            specs.append(FigureSpec("Congestion window per subflow", "timeseries",
                                    {"series": _subflow_series(subs, "cwnd_pkts")}, "time (s)", "cwnd (packets)"))
        elif kind == "srtt":
            specs.append(FigureSpec("Smoothed RTT per subflow", "timeseries",
                                    {"series": _subflow_series(subs, "srtt_ms")}, "time (s)", "srtt (ms)"))
        elif kind == "ooo":
            series = (_flow_series(conns, "ooo_bytes", "out-of-order queue", 1e-3)
                      + _flow_series(conns, "rcvbuf_bytes", "receive buffer", 1e-3))
            specs.append(FigureSpec("Receiver's out-of-order queue and receive buffer", "timeseries",
                                    {"series": series}, "time (s)", "KB"))
        elif kind == "scatter":
            specs.append(throughput_delay_spec(res, flow))
        else:
            raise ScenarioError("--kind", f"expected one of {', '.join((*RUN_KINDS, 'scatter', 'all'))}, got {kind!r}")
    return specs


def throughput_delay_spec(result: ResultLike, flow: str | None = None) -> FigureSpec:
    """Each subflow's mean smoothed RTT against its throughput, as a scatter Figure."""
    res = load_result(result)
    s = res.subflow_summary
    names = [str(f) for f in res.summary["flow"]] if "flow" in res.summary.columns else []
    s = _flows(s, flow, names)
    points = []
    if not s.empty:
        for row in s.itertuples(index=False):
            points.append({"label": f"{row.flow}/{row.subflow} ({row.path})",
                           "x": float(row.mean_srtt_ms), "y": float(row.throughput_mbps)})
    return FigureSpec("Throughput against delay per subflow", "scatter", {"points": points},
                      "mean smoothed RTT (ms)", "throughput (Mbit/s)")


def throughput_delay(result: ResultLike, flow: str | None = None) -> Figure:
    """The throughput–delay scatter of a run's subflows."""
    return draw(throughput_delay_spec(result, flow))


def timeseries(result: ResultLike, kind: str = "all", flow: str | None = None) -> Figure:
    """Time series of a run (a Result or its saved directory): `kind` is throughput, cwnd,
    srtt, ooo, or all (one panel each, sharing the time axis)."""
    kinds = list(RUN_KINDS) if kind == "all" else [kind]
    if any(k not in RUN_KINDS for k in kinds):
        raise ScenarioError("--kind", f"expected one of {', '.join(RUN_KINDS)} or all, got {kind!r}")
    specs = run_figures(result, kinds, flow)
    with _style():
        fig, axes = _new_figure(len(specs), height=None if len(specs) == 1 else 2.3 * len(specs))
        for i, (spec, ax) in enumerate(zip(specs, axes)):
            draw(spec, ax=ax, field=f"figures[{i}]")
            if len(specs) > 1 and i < len(specs) - 1:
                ax.set_xlabel("")
    return _freeze(fig)
