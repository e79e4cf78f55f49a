//! All error mapping between the core and Python, in one place.

use mptcplab_core::ScenarioError;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;

create_exception!(_core, ScenarioErrorPy, PyValueError, "Bad scenario input; `.field` names the field, `.message` says what was expected.");
create_exception!(_core, SimulationInterrupted, PyKeyboardInterrupt, "Ctrl-C stopped a running simulation.");

pub fn scenario_error(py: Python<'_>, e: &ScenarioError) -> PyErr {
    let err = ScenarioErrorPy::new_err(format!("{}: {}", e.field, e.message));
    let v = err.value(py);
    // Attribute errors cannot happen on a fresh exception instance.
    let _ = v.setattr("field", e.field.clone());
    let _ = v.setattr("message", e.message.clone());
    err
}
