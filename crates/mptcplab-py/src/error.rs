//! All error mapping between the core and Python, in one place.

use mptcplab_core::ScenarioError;
use pyo3::create_exception;
use crate::plugins::Failure;
use mptcplab_core::units::SimTime;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(_core, ScenarioErrorPy, PyValueError, "Bad scenario input; `.field` names the field, `.message` says what was expected.");
create_exception!(_core, SimulationInterrupted, PyKeyboardInterrupt, "Ctrl-C stopped a running simulation.");
create_exception!(
    mptcplab,
    PluginError,
    PyRuntimeError,
    "A Python scheduler or path manager failed (raised, or returned something that is not a list of actions). `.plugin` names it, `.kind` is \"scheduler\" or \"path manager\", `.flow` the connection, `.method` the hook, `.time_s` the simulated time; `__cause__` is the original exception."
);

pub fn scenario_error(py: Python<'_>, e: &ScenarioError) -> PyErr {
    let err = ScenarioErrorPy::new_err(format!("{}: {}", e.field, e.message));
    let v = err.value(py);
    // Attribute errors cannot happen on a fresh exception instance.
    let _ = v.setattr("field", e.field.clone());
    let _ = v.setattr("message", e.message.clone());
    err
}

/// The run stopped because a plug-in failed: one line naming it, the original exception
/// chained as `__cause__` (its traceback is the plug-in's).
pub fn plugin_error(py: Python<'_>, f: Failure, at: SimTime) -> PyErr {
    let value = f.err.value(py);
    let ty = value.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
    let msg = value.str().map(|s| s.to_string()).unwrap_or_default();
    let what = if msg.is_empty() { ty } else { format!("{ty}: {msg}") };
    let text = format!("{} plug-in {} (connection '{}') failed in {}() at {:.6} s: {what}", f.kind, f.label, f.conn, f.method, at.secs_f64());
    let err = PluginError::new_err(text);
    let v = err.value(py);
    let _ = v.setattr("plugin", f.label);
    let _ = v.setattr("kind", f.kind);
    let _ = v.setattr("flow", f.conn.as_str());
    let _ = v.setattr("method", f.method);
    let _ = v.setattr("time_s", at.secs_f64());
    err.set_cause(py, Some(f.err));
    err
}
