"""Type stub for the compiled core (crates/mptcplab-py). The contract between Rust and Python."""
from typing import Callable, Optional

class ScenarioError(ValueError):
    """Bad scenario input. `.field` is the dotted path of the offending field
    (e.g. "links[1].rate"), `.message` says what was expected."""
    field: str
    message: str

class SimulationInterrupted(KeyboardInterrupt):
    """Raised when Ctrl-C (SIGINT) stops a running simulation."""

def version() -> str: ...
def schema_json() -> str:
    """JSON Schema (draft 2020-12) of the scenario, generated from the Rust types."""
def components() -> list[tuple[str, str, str]]:
    """(kind, name, one-line description) for every CC, scheduler, path manager and app."""
def validate(scenario: "str | dict") -> str:
    """Parse + validate a scenario given as JSON text or as a dict (prefer the dict: JSON
    cannot carry NaN); returns the scenario as JSON. Raises ScenarioError."""
def simulate(
    scenario: "str | dict",
    seed: Optional[int] = None,
    duration_s: Optional[float] = None,
    progress: Optional[Callable[[float, float], None]] = None,
    trace_path: Optional[str] = None,
    trace_flows: Optional[list[str]] = None,
) -> dict:
    """Run the simulator with the GIL released. `trace_path` writes a per-packet CSV trace of
    `trace_flows` (default: all flows). `progress(sim_time_s, end_s)` is called about
    every 0.25 wall seconds. Returns plain columns:
      {"meta": {...}, "summary": {col: list}, "subflow_summary": {...},
       "subflows": {...}, "connections": {...}, "links": {...}, "subflow_events": {...}}
    """
