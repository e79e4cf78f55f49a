"""Type stub for the compiled core (crates/mptcplab-py). The contract between Rust and Python."""
from typing import Any, Callable, Optional, Union

class ScenarioError(ValueError):
    """Bad scenario input. `.field` is the dotted path of the offending field
    (e.g. "links[1].rate"), `.message` says what was expected."""
    field: str
    message: str

class SimulationInterrupted(KeyboardInterrupt):
    """Raised when Ctrl-C (SIGINT) stops a running simulation."""

class PluginError(RuntimeError):
    """A Python scheduler or path manager failed; the run stopped. `__cause__` is the
    plug-in's own exception."""
    plugin: str
    kind: str
    flow: Optional[str]
    method: str
    time_s: Optional[float]

# -- plug-in API (docs/plugins.md); all frozen ---------------------------------------------
class New:
    def __init__(self) -> None: ...
class Reinject:
    def __init__(self) -> None: ...
class Copy:
    dsn: int
    len: int
    def __init__(self, dsn: int, len: int) -> None: ...
Segment = Union[New, Reinject, Copy]
class Send:
    sub: int
    seg: Segment
    def __init__(self, sub: int, seg: Optional[Segment] = None) -> None: ...
class Enqueue:
    sub: int
    bytes: int
    def __init__(self, sub: int, bytes: int) -> None: ...
class Penalise:
    sub: int
    def __init__(self, sub: int) -> None: ...
class Wait:
    def __init__(self) -> None: ...
class OpenSubflow:
    path: int
    backup: bool
    def __init__(self, path: int, backup: bool = False) -> None: ...
class DataRef:
    dsn: int
    len: int
    mask: int
    def __init__(self, dsn: int, len: int, mask: int = 0) -> None: ...
    def sent_on(self, sub: int) -> bool: ...
class SubflowView:
    index: int
    established: bool
    backup: bool
    srtt: float
    srtt_ns: int
    rttvar: float
    rttvar_ns: int
    cwnd: int
    ssthresh: int
    in_flight: int
    ca_state: str
    mss: int
    queued_bytes: int
    pacing_ok: bool
    wnd_ok: bool
    has_space: bool
    available: bool
    def __init__(self, index: int = 0, *, established: bool = True, backup: bool = False, srtt: float = 0.0,
                 rttvar: float = 0.0, cwnd: int = 10, ssthresh: int = 0x7FFFFFFF, in_flight: int = 0,
                 ca_state: str = "open", mss: int = 1448, queued_bytes: int = 0, pacing_ok: bool = True,
                 wnd_ok: bool = True) -> None: ...
class MetaView:
    new_data: bool
    next_dsn: int
    next_len: int
    window_limited: bool
    reinject: Optional[DataRef]
    una: Optional[DataRef]
    sndbuf_full: bool
    window_free: int
    def __init__(self, *, new_data: bool = False, next_dsn: int = 0, next_len: int = 0, window_limited: bool = False,
                 reinject: Optional[DataRef] = None, una: Optional[DataRef] = None, sndbuf_full: bool = False,
                 window_free: int = 0) -> None: ...
class SchedView:
    now: float
    now_ns: int
    subflows: tuple[SubflowView, ...]
    order: tuple[int, ...]
    meta: MetaView
    def __init__(self, *, now: float = 0.0, subflows: list[SubflowView] = ..., order: Optional[list[int]] = None,
                 meta: Optional[MetaView] = None) -> None: ...
class PmView:
    paths: int
    initial: int
    backup: tuple[bool, ...]
    path_names: tuple[str, ...]
    def __init__(self, *, paths: int, initial: int = 0, backup: Optional[list[bool]] = None,
                 path_names: Optional[list[str]] = None) -> None: ...

def version() -> str: ...
def schema_json() -> str:
    """JSON Schema (draft 2020-12) of the scenario, generated from the Rust types."""
def components() -> list[tuple[str, str, str]]:
    """(kind, name, one-line description) for every CC, scheduler, path manager and app."""
def components_markdown() -> str: ...
def profiles_json() -> str:
    """JSON list of profiles (`run.profile`): name, description, settings
    (field, value, source) and gaps (name, kernel, sim)."""
def profiles_markdown() -> str: ...
def congestion_controls_json() -> str: ...
def congestion_controls_markdown() -> str: ...
def validate(scenario: "str | dict") -> str:
    """Parse + validate a scenario given as JSON text or as a dict (prefer the dict: JSON
    cannot carry NaN); returns the scenario as JSON. Raises ScenarioError."""
def routes(scenario: "str | dict", seed: Optional[int] = None) -> list[tuple[str, str, str, str, list[str]]]:
    """The plan's routes: (connection, from host, to host, path, hops) per connection
    path, each hop "<link>/forward|reverse" in the data direction; `seed` overrides the
    scenario's (generated traffic and path choices draw from it). Raises ScenarioError."""
def simulate(
    scenario: "str | dict",
    seed: Optional[int] = None,
    duration_s: Optional[float] = None,
    progress: Optional[Callable[[float, float], None]] = None,
    trace_path: Optional[str] = None,
    trace_flows: Optional[list[str]] = None,
    plugins: Optional[list[tuple[str, str, Any, str]]] = None,
    pcap_files: Optional[list[str]] = None,
) -> dict:
    """Run the simulator with the GIL released. `trace_path` writes a per-packet CSV trace of
    `trace_flows` (default: all flows). `plugins` lists Python plug-ins as (connection name,
    "scheduler" or "path_manager", object, label); a run with plug-ins keeps the GIL, and
    raises PluginError when one fails. `pcap_files`: one capture file per path of the
    plan, in its order (docs/pcap.md). `progress(sim_time_s, end_s)` is called about
    every 0.25 wall seconds. Returns plain columns:
      {"meta": {...}, "summary": {col: list}, "subflow_summary": {...},
       "subflows": {...}, "connections": {...}, "links": {...}, "subflow_events": {...},
       "delay_samples": {...}, "frames": {...}, "fct": {...}}
    In the time series (subflows, connections, links) a numeric column comes packed, as
    `(typecode, bytes)` ("d": float64, "q": int64, native order, Python's `array`
    typecodes); `result.unpack_column` turns it into a list or a numpy array.
    """
