//! Schedulers and path managers written in Python (docs/plugins.md).
//!
//! The Python object sees read-only views (`SchedView`, `SubflowView`, `MetaView`,
//! `DataRef`, `PmView`) and returns actions (`Send`, `Enqueue`, `Penalise`, `Wait`,
//! `OpenSubflow`; segments `New`, `Reinject`, `Copy`). They mirror the core's
//! `scheduler::{SchedView, Action, Segment}` and `pm::PmAction` one to one.
//!
//! The core calls a plug-in through its `Scheduler` / `PathManager` trait, which has no
//! way to fail: the wrappers take the GIL with `Python::with_gil` (a re-entry, since
//! `simulate` keeps the GIL while a run has plug-ins), and on the plug-in's first
//! exception or invalid return value they record it in a `FailureSlot` shared with the
//! driver loop, answer "no action" from then on, and the loop stops at the next event.

use mptcplab_core::cc::CaState;
use mptcplab_core::mptcp::pm::{PathManager, PmAction};
use mptcplab_core::mptcp::scheduler::{Action, MetaView, SchedView, Scheduler, Segment, SubflowView};
use mptcplab_core::units::SimTime;
use pyo3::exceptions::{PyKeyboardInterrupt, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

// -- segments and actions ---------------------------------------------------------------

/// `Segment::New`: the next new data (the connection picks its size).
#[pyclass(frozen, eq, hash, module = "mptcplab.plugins", name = "New")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyNew;

#[pymethods]
impl PyNew {
    #[new]
    fn new() -> Self { PyNew }
    fn __repr__(&self) -> &'static str { "New()" }
}

/// `Segment::Reinject`: the head of the reinjection queue.
#[pyclass(frozen, eq, hash, module = "mptcplab.plugins", name = "Reinject")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyReinject;

#[pymethods]
impl PyReinject {
    #[new]
    fn new() -> Self { PyReinject }
    fn __repr__(&self) -> &'static str { "Reinject()" }
}

/// `Segment::Copy`: data already sent (opportunistic retransmission, redundant copies).
#[pyclass(frozen, eq, hash, module = "mptcplab.plugins", name = "Copy")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyCopy {
    #[pyo3(get)]
    dsn: u64,
    #[pyo3(get)]
    len: u32,
}

#[pymethods]
impl PyCopy {
    #[new]
    fn new(dsn: u64, len: u32) -> Self { PyCopy { dsn, len } }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) { ("dsn", "len") }
    fn __repr__(&self) -> String { format!("Copy(dsn={}, len={})", self.dsn, self.len) }
}

fn segment_from(obj: &Bound<'_, PyAny>) -> PyResult<Segment> {
    if obj.downcast::<PyNew>().is_ok() {
        Ok(Segment::New)
    } else if obj.downcast::<PyReinject>().is_ok() {
        Ok(Segment::Reinject)
    } else if let Ok(c) = obj.downcast::<PyCopy>() {
        let c = c.get();
        Ok(Segment::Copy { dsn: c.dsn, len: c.len })
    } else {
        Err(PyTypeError::new_err(format!("expected a segment (New(), Reinject() or Copy(dsn, len)), got {}", describe(obj))))
    }
}

fn segment_to(py: Python<'_>, seg: Segment) -> PyResult<PyObject> {
    Ok(match seg {
        Segment::New => Bound::new(py, PyNew)?.into_any().unbind(),
        Segment::Reinject => Bound::new(py, PyReinject)?.into_any().unbind(),
        Segment::Copy { dsn, len } => Bound::new(py, PyCopy { dsn, len })?.into_any().unbind(),
    })
}

fn segment_repr(seg: Segment) -> String {
    match seg {
        Segment::New => "New()".into(),
        Segment::Reinject => "Reinject()".into(),
        Segment::Copy { dsn, len } => format!("Copy(dsn={dsn}, len={len})"),
    }
}

/// `Action::Send`: transmit `seg` on subflow `sub` now.
#[pyclass(frozen, eq, hash, module = "mptcplab.plugins", name = "Send")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PySend {
    #[pyo3(get)]
    sub: usize,
    seg: SegKey,
}

/// `Segment` with Hash (the core's has none).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum SegKey {
    New,
    Reinject,
    Copy(u64, u32),
}

impl From<Segment> for SegKey {
    fn from(s: Segment) -> Self {
        match s {
            Segment::New => SegKey::New,
            Segment::Reinject => SegKey::Reinject,
            Segment::Copy { dsn, len } => SegKey::Copy(dsn, len),
        }
    }
}

impl From<SegKey> for Segment {
    fn from(s: SegKey) -> Self {
        match s {
            SegKey::New => Segment::New,
            SegKey::Reinject => Segment::Reinject,
            SegKey::Copy(dsn, len) => Segment::Copy { dsn, len },
        }
    }
}

#[pymethods]
impl PySend {
    #[new]
    #[pyo3(signature = (sub, seg=None))]
    fn new(sub: usize, seg: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let seg = match seg {
            None => Segment::New,
            Some(s) => segment_from(s)?,
        };
        Ok(PySend { sub, seg: seg.into() })
    }
    #[getter]
    fn seg(&self, py: Python<'_>) -> PyResult<PyObject> { segment_to(py, self.seg.into()) }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) { ("sub", "seg") }
    fn __repr__(&self) -> String { format!("Send(sub={}, seg={})", self.sub, segment_repr(self.seg.into())) }
}

/// `Action::Enqueue`: assign `bytes` of new data to subflow `sub`'s queue.
#[pyclass(frozen, eq, hash, module = "mptcplab.plugins", name = "Enqueue")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyEnqueue {
    #[pyo3(get)]
    sub: usize,
    #[pyo3(get)]
    bytes: u32,
}

#[pymethods]
impl PyEnqueue {
    #[new]
    fn new(sub: usize, bytes: u32) -> Self { PyEnqueue { sub, bytes } }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) { ("sub", "bytes") }
    fn __repr__(&self) -> String { format!("Enqueue(sub={}, bytes={})", self.sub, self.bytes) }
}

/// `Action::Penalise`: halve subflow `sub`'s cwnd.
#[pyclass(frozen, eq, hash, module = "mptcplab.plugins", name = "Penalise")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyPenalise {
    #[pyo3(get)]
    sub: usize,
}

#[pymethods]
impl PyPenalise {
    #[new]
    fn new(sub: usize) -> Self { PyPenalise { sub } }
    #[classattr]
    fn __match_args__() -> (&'static str,) { ("sub",) }
    fn __repr__(&self) -> String { format!("Penalise(sub={})", self.sub) }
}

/// `Action::Wait`: send nothing now although a subflow has space.
#[pyclass(frozen, eq, hash, module = "mptcplab.plugins", name = "Wait")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyWait;

#[pymethods]
impl PyWait {
    #[new]
    fn new() -> Self { PyWait }
    fn __repr__(&self) -> &'static str { "Wait()" }
}

/// `PmAction::OpenSubflow`: open a subflow on the connection's path number `path`.
#[pyclass(frozen, eq, hash, module = "mptcplab.plugins", name = "OpenSubflow")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyOpenSubflow {
    #[pyo3(get)]
    path: usize,
    #[pyo3(get)]
    backup: bool,
}

#[pymethods]
impl PyOpenSubflow {
    #[new]
    #[pyo3(signature = (path, backup=false))]
    fn new(path: usize, backup: bool) -> Self { PyOpenSubflow { path, backup } }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str) { ("path", "backup") }
    fn __repr__(&self) -> String { format!("OpenSubflow(path={}, backup={})", self.path, if self.backup { "True" } else { "False" }) }
}

// -- views ------------------------------------------------------------------------------

fn ca_state_name(s: CaState) -> &'static str {
    match s {
        CaState::Open => "open",
        CaState::Disorder => "disorder",
        CaState::Cwr => "cwr",
        CaState::Recovery => "recovery",
        CaState::Loss => "loss",
    }
}

fn ca_state_from(name: &str) -> PyResult<CaState> {
    Ok(match name {
        "open" => CaState::Open,
        "disorder" => CaState::Disorder,
        "cwr" => CaState::Cwr,
        "recovery" => CaState::Recovery,
        "loss" => CaState::Loss,
        _ => return Err(PyValueError::new_err(format!("ca_state must be one of open, disorder, cwr, recovery, loss; got {name:?}"))),
    })
}

fn secs_to_time(field: &str, s: f64) -> PyResult<SimTime> {
    if !(s.is_finite() && s >= 0.0) {
        return Err(PyValueError::new_err(format!("{field} must be a finite number of seconds >= 0, got {s}")));
    }
    Ok(SimTime::from_secs_f64(s))
}

/// One subflow as the scheduler sees it (read-only). Times are in seconds (`srtt`) and
/// in integer nanoseconds (`srtt_ns`); windows in packets; sizes in bytes.
#[pyclass(frozen, module = "mptcplab.plugins", name = "SubflowView")]
pub struct PySubflowView {
    #[pyo3(get)]
    index: usize,
    v: SubflowView,
}

#[pymethods]
impl PySubflowView {
    /// Build a view by hand, to unit-test a plug-in without a simulation.
    #[new]
    #[pyo3(signature = (index=0, *, established=true, backup=false, srtt=0.0, rttvar=0.0, cwnd=10, ssthresh=0x7fff_ffff, in_flight=0, ca_state="open", mss=1448, queued_bytes=0, pacing_ok=true, wnd_ok=true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        index: usize,
        established: bool,
        backup: bool,
        srtt: f64,
        rttvar: f64,
        cwnd: u32,
        ssthresh: u32,
        in_flight: u32,
        ca_state: &str,
        mss: u32,
        queued_bytes: u64,
        pacing_ok: bool,
        wnd_ok: bool,
    ) -> PyResult<Self> {
        let v = SubflowView {
            established,
            backup,
            srtt: secs_to_time("srtt", srtt)?,
            rttvar: secs_to_time("rttvar", rttvar)?,
            cwnd,
            ssthresh,
            in_flight,
            ca_state: ca_state_from(ca_state)?,
            mss,
            queued_bytes,
            pacing_ok,
            wnd_ok,
            ..Default::default()
        };
        Ok(PySubflowView { index, v })
    }
    /// Established and not pre-established (the MP_JOIN 4th ACK arrived).
    #[getter]
    fn established(&self) -> bool { self.v.established }
    #[getter]
    fn backup(&self) -> bool { self.v.backup }
    /// Smoothed RTT, seconds (0 before the first sample).
    #[getter]
    fn srtt(&self) -> f64 { self.v.srtt.secs_f64() }
    #[getter]
    fn srtt_ns(&self) -> u64 { self.v.srtt.ns() }
    #[getter]
    fn rttvar(&self) -> f64 { self.v.rttvar.secs_f64() }
    #[getter]
    fn rttvar_ns(&self) -> u64 { self.v.rttvar.ns() }
    /// Congestion window, packets.
    #[getter]
    fn cwnd(&self) -> u32 { self.v.cwnd }
    #[getter]
    fn ssthresh(&self) -> u32 { self.v.ssthresh }
    /// Packets in flight (Linux `tcp_packets_in_flight`).
    #[getter]
    fn in_flight(&self) -> u32 { self.v.in_flight }
    /// Congestion-avoidance state: "open", "disorder", "cwr", "recovery" or "loss".
    #[getter]
    fn ca_state(&self) -> &'static str { ca_state_name(self.v.ca_state) }
    #[getter]
    fn mss(&self) -> u32 { self.v.mss }
    /// Bytes assigned to this subflow (Enqueue) and not yet sent.
    #[getter]
    fn queued_bytes(&self) -> u64 { self.v.queued_bytes }
    /// Segments sent and not cumulatively acknowledged on this subflow.
    #[getter]
    fn packets_out(&self) -> u32 { self.v.packets_out }
    /// Bytes sent and not cumulatively acknowledged on this subflow.
    #[getter]
    fn outstanding_bytes(&self) -> u64 { self.v.outstanding_bytes }
    /// The subflow's pacing rate in bit/s (0 when not paced).
    #[getter]
    fn pacing_rate(&self) -> f64 { self.v.pacing_rate_bps }
    /// A BBR controller's bandwidth estimate in bit/s (0 for other CCs).
    #[getter]
    fn bw(&self) -> f64 { self.v.bw_bps }
    /// The subflow's minimum RTT, in seconds (0 before the first sample).
    #[getter]
    fn min_rtt(&self) -> f64 { self.v.min_rtt.secs_f64() }
    /// The controller's mode for the CC trace (BBR: "startup", "drain", "probe_bw",
    /// "probe_rtt"; empty for other CCs).
    #[getter]
    fn cc_mode(&self) -> &'static str { self.v.cc_mode }
    /// The pacer lets a packet leave now.
    #[getter]
    fn pacing_ok(&self) -> bool { self.v.pacing_ok }
    /// The next segment fits the subflow's own window (snd_una + snd_wnd).
    #[getter]
    fn wnd_ok(&self) -> bool { self.v.wnd_ok }
    /// Not in Loss, cwnd room beyond in-flight and queued packets, pacing and window ok
    /// (the core's `SubflowView::has_space`, Linux `mptcp_is_temp_unavailable`).
    #[getter]
    fn has_space(&self) -> bool { self.v.has_space() }
    /// `established and has_space` (the core's `SubflowView::available`).
    #[getter]
    fn available(&self) -> bool { self.v.available() }
    fn __repr__(&self) -> String {
        let v = &self.v;
        format!(
            "SubflowView(index={}, established={}, backup={}, srtt={:?}, cwnd={}, in_flight={}, ca_state='{}', queued_bytes={}, pacing_ok={}, wnd_ok={})",
            self.index,
            py_bool(v.established),
            py_bool(v.backup),
            v.srtt.secs_f64(),
            v.cwnd,
            v.in_flight,
            ca_state_name(v.ca_state),
            v.queued_bytes,
            py_bool(v.pacing_ok),
            py_bool(v.wnd_ok)
        )
    }
}

fn py_bool(b: bool) -> &'static str { if b { "True" } else { "False" } }

/// A segment of the connection's data: its data sequence number, length, and the
/// subflows it was sent on (`mask`, bit i = subflow i).
#[pyclass(frozen, eq, hash, module = "mptcplab.plugins", name = "DataRef")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyDataRef {
    #[pyo3(get)]
    dsn: u64,
    #[pyo3(get)]
    len: u32,
    #[pyo3(get)]
    mask: u64,
}

#[pymethods]
impl PyDataRef {
    #[new]
    #[pyo3(signature = (dsn, len, mask=0))]
    fn new(dsn: u64, len: u32, mask: u64) -> Self { PyDataRef { dsn, len, mask } }
    /// Was this data sent on subflow `sub`?
    fn sent_on(&self, sub: usize) -> bool { sub < 64 && self.mask & (1u64 << sub) != 0 }
    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str) { ("dsn", "len", "mask") }
    fn __repr__(&self) -> String { format!("DataRef(dsn={}, len={}, mask={:#b})", self.dsn, self.len, self.mask) }
}

/// The connection as the scheduler sees it (read-only).
#[pyclass(frozen, module = "mptcplab.plugins", name = "MetaView")]
pub struct PyMetaView {
    m: MetaView,
}

fn data_ref(py: Python<'_>, r: Option<(u64, u32, u64)>) -> PyResult<PyObject> {
    match r {
        None => Ok(py.None()),
        Some((dsn, len, mask)) => Ok(Bound::new(py, PyDataRef { dsn, len, mask })?.into_any().unbind()),
    }
}

fn data_ref_from(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<(u64, u32, u64)>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => {
            let r = o.downcast::<PyDataRef>().map_err(|_| PyTypeError::new_err(format!("expected a DataRef or None, got {}", describe(o))))?.get();
            Ok(Some((r.dsn, r.len, r.mask)))
        }
    }
}

#[pymethods]
impl PyMetaView {
    /// Build a view by hand, to unit-test a plug-in without a simulation.
    #[new]
    #[pyo3(signature = (*, new_data=false, next_dsn=0, next_len=0, window_limited=false, reinject=None, una=None, sndbuf_full=false, window_free=0))]
    #[allow(clippy::too_many_arguments)]
    fn new(new_data: bool, next_dsn: u64, next_len: u32, window_limited: bool, reinject: Option<&Bound<'_, PyAny>>, una: Option<&Bound<'_, PyAny>>, sndbuf_full: bool, window_free: u64) -> PyResult<Self> {
        Ok(PyMetaView { m: MetaView { new_data, next_dsn, next_len, window_limited, reinject: data_ref_from(reinject)?, una: data_ref_from(una)?, sndbuf_full, window_free, ..Default::default() } })
    }
    /// Bytes the peer's connection-level window still allows beyond what is in flight.
    #[getter]
    fn window_free(&self) -> u64 { self.m.window_free }
    /// DATA_ACK: the oldest data not acknowledged at connection level.
    #[getter]
    fn data_una(&self) -> u64 { self.m.data_una }
    /// The peer's connection-level receive window.
    #[getter]
    fn snd_wnd(&self) -> u64 { self.m.snd_wnd }
    /// Bytes written by the application and never handed to a subflow.
    #[getter]
    fn unsent(&self) -> u64 { self.m.unsent }
    /// Bytes written and not DATA_ACKed.
    #[getter]
    fn queued_bytes(&self) -> u64 { self.m.queued_bytes }
    /// Segments handed to subflows and not DATA_ACKed.
    #[getter]
    fn packets_out(&self) -> u32 { self.m.packets_out }
    /// New data is ready to go (written, never sent, and allowed by the peer's window).
    #[getter]
    fn new_data(&self) -> bool { self.m.new_data }
    /// Data sequence number `Send(sub, New())` would send now.
    #[getter]
    fn next_dsn(&self) -> u64 { self.m.next_dsn }
    /// Length `Send(sub, New())` would send now (0 without new data).
    #[getter]
    fn next_len(&self) -> u32 { self.m.next_len }
    /// New data waits only because the peer's receive window is closed.
    #[getter]
    fn window_limited(&self) -> bool { self.m.window_limited }
    /// Head of the reinjection queue (a DataRef) or None.
    #[getter]
    fn reinject(&self, py: Python<'_>) -> PyResult<PyObject> { data_ref(py, self.m.reinject) }
    /// The oldest data not DATA_ACKed (a DataRef) or None.
    #[getter]
    fn una(&self, py: Python<'_>) -> PyResult<PyObject> { data_ref(py, self.m.una) }
    /// The application is blocked on a full send buffer.
    #[getter]
    fn sndbuf_full(&self) -> bool { self.m.sndbuf_full }
    fn __repr__(&self) -> String {
        let m = &self.m;
        let r = |x: Option<(u64, u32, u64)>| x.map_or("None".to_string(), |(d, l, k)| format!("DataRef(dsn={d}, len={l}, mask={k:#b})"));
        format!(
            "MetaView(new_data={}, next_dsn={}, next_len={}, window_limited={}, reinject={}, una={}, sndbuf_full={})",
            py_bool(m.new_data),
            m.next_dsn,
            m.next_len,
            py_bool(m.window_limited),
            r(m.reinject),
            r(m.una),
            py_bool(m.sndbuf_full)
        )
    }
}

/// Everything a scheduler sees at one decision (read-only).
#[pyclass(frozen, module = "mptcplab.plugins", name = "SchedView")]
pub struct PySchedView {
    now: SimTime,
    #[pyo3(get)]
    subflows: Py<PyTuple>,
    #[pyo3(get)]
    order: Py<PyTuple>,
    #[pyo3(get)]
    meta: Py<PyMetaView>,
}

#[pymethods]
impl PySchedView {
    /// Build a view by hand, to unit-test a plug-in without a simulation. `order`
    /// defaults to the subflows' indices in increasing order.
    #[new]
    #[pyo3(signature = (*, now=0.0, subflows=Vec::new(), order=None, meta=None))]
    fn new(py: Python<'_>, now: f64, subflows: Vec<Py<PySubflowView>>, order: Option<Vec<usize>>, meta: Option<Py<PyMetaView>>) -> PyResult<Self> {
        let n = subflows.len();
        for (i, s) in subflows.iter().enumerate() {
            if s.get().index != i {
                return Err(PyValueError::new_err(format!("subflows[{i}] has index {}; a view lists subflow i at position i", s.get().index)));
            }
        }
        let order = order.unwrap_or_else(|| (0..n).collect());
        let mut seen = vec![false; n];
        for &i in &order {
            if i >= n || std::mem::replace(&mut seen[i], true) {
                return Err(PyValueError::new_err(format!("order must list each subflow index below {n} once, got {order:?}")));
            }
        }
        let meta = match meta {
            Some(m) => m,
            None => Py::new(py, PyMetaView { m: MetaView { new_data: false, next_dsn: 0, next_len: 0, window_limited: false, reinject: None, una: None, sndbuf_full: false, ..Default::default() } })?,
        };
        Ok(PySchedView { now: secs_to_time("now", now)?, subflows: PyTuple::new(py, subflows)?.unbind(), order: PyTuple::new(py, order)?.unbind(), meta })
    }
    /// Simulated time, seconds.
    #[getter]
    fn now(&self) -> f64 { self.now.secs_f64() }
    /// Simulated time, integer nanoseconds.
    #[getter]
    fn now_ns(&self) -> u64 { self.now.ns() }
    fn __repr__(&self, py: Python<'_>) -> String {
        format!("SchedView(now={:?}, subflows={} subflows, order={}, meta={})", self.now.secs_f64(), self.subflows.bind(py).len(), self.order.bind(py).repr().map(|r| r.to_string()).unwrap_or_default(), self.meta.get().__repr__())
    }
}

/// What a path manager sees when the initial subflow is established (read-only).
#[pyclass(frozen, module = "mptcplab.plugins", name = "PmView")]
pub struct PyPmView {
    /// Number of paths (local address, remote address pairs) the connection may use.
    #[pyo3(get)]
    paths: usize,
    /// The path the initial subflow runs on.
    #[pyo3(get)]
    initial: usize,
    /// Per path: marked backup in the scenario.
    #[pyo3(get)]
    backup: Py<PyTuple>,
    /// Per path: its name in the scenario.
    #[pyo3(get)]
    path_names: Py<PyTuple>,
}

#[pymethods]
impl PyPmView {
    #[new]
    #[pyo3(signature = (*, paths, initial=0, backup=None, path_names=None))]
    fn new(py: Python<'_>, paths: usize, initial: usize, backup: Option<Vec<bool>>, path_names: Option<Vec<String>>) -> PyResult<Self> {
        let backup = backup.unwrap_or_else(|| vec![false; paths]);
        let names = path_names.unwrap_or_else(|| (0..paths).map(|i| format!("path{i}")).collect());
        if backup.len() != paths || names.len() != paths || initial >= paths.max(1) {
            return Err(PyValueError::new_err("backup and path_names need one entry per path, and initial < paths"));
        }
        Ok(PyPmView { paths, initial, backup: PyTuple::new(py, backup)?.unbind(), path_names: PyTuple::new(py, names)?.unbind() })
    }
    fn __repr__(&self, py: Python<'_>) -> String {
        format!("PmView(paths={}, initial={}, backup={}, path_names={})", self.paths, self.initial, self.backup.bind(py).repr().map(|r| r.to_string()).unwrap_or_default(), self.path_names.bind(py).repr().map(|r| r.to_string()).unwrap_or_default())
    }
}

// -- failures ---------------------------------------------------------------------------

/// The first exception (or invalid return value) of any plug-in of a run.
pub struct Failure {
    pub kind: &'static str,
    pub label: &'static str,
    pub conn: String,
    pub method: &'static str,
    pub err: PyErr,
}

#[derive(Default)]
pub struct FailureSlot {
    flag: AtomicBool,
    failure: Mutex<Option<Failure>>,
}

impl FailureSlot {
    pub fn is_set(&self) -> bool { self.flag.load(Ordering::Relaxed) }
    fn set(&self, f: Failure) {
        let mut g = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(f);
        }
        self.flag.store(true, Ordering::Relaxed);
    }
    pub fn take(&self) -> Option<Failure> { self.failure.lock().unwrap_or_else(|e| e.into_inner()).take() }
}

/// A plug-in label lives as long as the process (the traits want `&'static str`); each
/// distinct label is leaked once.
fn intern(label: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&s) = set.get(label) {
        return s;
    }
    let s: &'static str = Box::leak(label.to_owned().into_boxed_str());
    set.insert(s);
    s
}

fn describe(obj: &Bound<'_, PyAny>) -> String {
    let ty = obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    let r = obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
    let r = if r.chars().count() > 80 { format!("{}...", r.chars().take(77).collect::<String>()) } else { r };
    format!("{r} ({ty})")
}

/// Iterate over what a plug-in method returned: None, or any iterable of items.
fn for_each_item<'py>(ret: &Bound<'py, PyAny>, what: &str, mut f: impl FnMut(&Bound<'py, PyAny>) -> PyResult<()>) -> PyResult<()> {
    if ret.is_none() {
        return Ok(());
    }
    if let Ok(l) = ret.downcast::<PyList>() {
        for item in l.iter() {
            f(&item)?;
        }
        return Ok(());
    }
    if let Ok(t) = ret.downcast::<PyTuple>() {
        for item in t.iter() {
            f(&item)?;
        }
        return Ok(());
    }
    let it = ret.try_iter().map_err(|_| PyTypeError::new_err(format!("returned {}; expected a list of {what} (or None)", describe(ret))))?;
    for item in it {
        f(&item?)?;
    }
    Ok(())
}

// -- the scheduler wrapper ----------------------------------------------------------------

pub struct PyScheduler {
    schedule: Py<PyAny>,
    label: &'static str,
    conn: String,
    slot: Arc<FailureSlot>,
    order_cache: Option<(Vec<usize>, Py<PyTuple>)>,
}

impl PyScheduler {
    pub fn new(obj: &Bound<'_, PyAny>, label: &str, conn: &str, slot: Arc<FailureSlot>) -> PyResult<Self> {
        let schedule = obj.getattr("schedule").map_err(|_| PyTypeError::new_err(format!("scheduler plug-in {label} has no schedule(view) method")))?;
        if !schedule.is_callable() {
            return Err(PyTypeError::new_err(format!("scheduler plug-in {label}: schedule is not callable")));
        }
        Ok(PyScheduler { schedule: schedule.unbind(), label: intern(label), conn: conn.to_owned(), slot, order_cache: None })
    }

    fn view<'py>(&mut self, py: Python<'py>, v: &SchedView) -> PyResult<Bound<'py, PySchedView>> {
        let subs: Vec<Bound<'py, PySubflowView>> = v.subflows.iter().enumerate().map(|(index, s)| Bound::new(py, PySubflowView { index, v: *s })).collect::<PyResult<_>>()?;
        let order = match &self.order_cache {
            Some((o, t)) if o.as_slice() == v.order => t.clone_ref(py),
            _ => {
                let t = PyTuple::new(py, v.order)?.unbind();
                self.order_cache = Some((v.order.to_vec(), t.clone_ref(py)));
                t
            }
        };
        let meta = Py::new(py, PyMetaView { m: v.meta })?;
        Bound::new(py, PySchedView { now: v.now, subflows: PyTuple::new(py, subs)?.unbind(), order, meta })
    }

    fn call(&mut self, py: Python<'_>, v: &SchedView, out: &mut Vec<Action>) -> PyResult<()> {
        let view = self.view(py, v)?;
        let ret = self.schedule.bind(py).call1((view,))?;
        let n = v.subflows.len();
        let mut new_sent = false;
        for_each_item(&ret, "actions", |item| {
            let a = action_from(item, n)?;
            if let Action::Send { seg: Segment::Copy { dsn, len }, .. } = a {
                // Only data that exists: already sent, or exactly the segment a Send(New())
                // earlier in this list sends.
                let end = dsn.checked_add(len as u64).unwrap_or(u64::MAX);
                let same_as_new = new_sent && dsn == v.meta.next_dsn && len == v.meta.next_len;
                if len == 0 || (end > v.meta.next_dsn && !same_as_new) {
                    return Err(PyValueError::new_err(format!(
                        "returned {}: a copy must name data already sent (end <= meta.next_dsn = {}), or exactly (meta.next_dsn, meta.next_len) after a Send(sub, New()) in the same list",
                        describe(item),
                        v.meta.next_dsn
                    )));
                }
            }
            if let Action::Send { seg: Segment::New, .. } = a {
                new_sent = true;
            }
            out.push(a);
            Ok(())
        })
    }
}

fn check_sub(item: &Bound<'_, PyAny>, sub: usize, n: usize) -> PyResult<usize> {
    if sub >= n {
        return Err(PyValueError::new_err(format!("returned {}: the connection has {n} subflows (0..{})", describe(item), n.saturating_sub(1))));
    }
    Ok(sub)
}

fn action_from(item: &Bound<'_, PyAny>, n: usize) -> PyResult<Action> {
    if let Ok(s) = item.downcast::<PySend>() {
        let s = s.get();
        return Ok(Action::Send { sub: check_sub(item, s.sub, n)?, seg: s.seg.into() });
    }
    if let Ok(e) = item.downcast::<PyEnqueue>() {
        let e = e.get();
        if e.bytes == 0 {
            return Err(PyValueError::new_err(format!("returned {}: bytes must be > 0", describe(item))));
        }
        return Ok(Action::Enqueue { sub: check_sub(item, e.sub, n)?, bytes: e.bytes });
    }
    if let Ok(p) = item.downcast::<PyPenalise>() {
        return Ok(Action::Penalise { sub: check_sub(item, p.get().sub, n)? });
    }
    if item.downcast::<PyWait>().is_ok() {
        return Ok(Action::Wait);
    }
    Err(PyTypeError::new_err(format!("returned {}; expected Send, Enqueue, Penalise or Wait from mptcplab.plugins", describe(item))))
}

impl Scheduler for PyScheduler {
    /// A Python scheduler may read every view field.
    fn needs_rates(&self) -> bool { true }

    fn name(&self) -> &'static str { self.label }
    fn schedule(&mut self, v: &SchedView, out: &mut Vec<Action>) {
        if self.slot.is_set() {
            return;
        }
        Python::with_gil(|py| {
            let start = out.len();
            if let Err(err) = self.call(py, v, out) {
                out.truncate(start);
                self.slot.set(Failure { kind: "scheduler", label: self.label, conn: self.conn.clone(), method: "schedule", err });
            }
        });
    }
}

// -- the path manager wrapper ------------------------------------------------------------

pub struct PyPathManager {
    on_established: Option<Py<PyAny>>,
    label: &'static str,
    conn: String,
    path_names: Vec<String>,
    slot: Arc<FailureSlot>,
}

impl PyPathManager {
    /// Every hook is optional: a missing `on_established` opens no subflow.
    pub fn new(obj: &Bound<'_, PyAny>, label: &str, conn: &str, path_names: Vec<String>, slot: Arc<FailureSlot>) -> PyResult<Self> {
        let hook = if obj.hasattr("on_established")? {
            let h = obj.getattr("on_established")?;
            if !h.is_callable() {
                return Err(PyTypeError::new_err(format!("path manager plug-in {label}: on_established is not callable")));
            }
            Some(h.unbind())
        } else {
            None
        };
        Ok(PyPathManager { on_established: hook, label: intern(label), conn: conn.to_owned(), path_names, slot })
    }

    fn call(&self, py: Python<'_>, hook: &Py<PyAny>, paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>) -> PyResult<()> {
        let names: Vec<&str> = (0..paths).map(|i| self.path_names.get(i).map(String::as_str).unwrap_or("")).collect();
        let view = Bound::new(py, PyPmView { paths, initial, backup: PyTuple::new(py, backup)?.unbind(), path_names: PyTuple::new(py, names)?.unbind() })?;
        let ret = hook.bind(py).call1((view,))?;
        for_each_item(&ret, "OpenSubflow actions", |item| {
            let o = item.downcast::<PyOpenSubflow>().map_err(|_| PyTypeError::new_err(format!("returned {}; expected OpenSubflow(path, backup) from mptcplab.plugins", describe(item))))?.get();
            if o.path >= paths {
                return Err(PyValueError::new_err(format!("returned {}: the connection has {paths} paths (0..{})", describe(item), paths.saturating_sub(1))));
            }
            out.push(PmAction::OpenSubflow { path: o.path, backup: o.backup });
            Ok(())
        })
    }
}

impl PathManager for PyPathManager {
    fn name(&self) -> &'static str { self.label }
    fn on_established(&mut self, paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>) {
        if self.slot.is_set() {
            return;
        }
        let Some(hook) = &self.on_established else { return };
        Python::with_gil(|py| {
            let start = out.len();
            if let Err(err) = self.call(py, hook, paths, initial, backup, out) {
                out.truncate(start);
                self.slot.set(Failure { kind: "path manager", label: self.label, conn: self.conn.clone(), method: "on_established", err });
            }
        });
    }
}

/// Whether a failure is Ctrl-C arriving while the plug-in ran (Python runs signal
/// handlers inside the plug-in's code, so the KeyboardInterrupt surfaces there).
pub fn is_interrupt(py: Python<'_>, f: &Failure) -> bool { f.err.is_instance_of::<PyKeyboardInterrupt>(py) }

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNew>()?;
    m.add_class::<PyReinject>()?;
    m.add_class::<PyCopy>()?;
    m.add_class::<PySend>()?;
    m.add_class::<PyEnqueue>()?;
    m.add_class::<PyPenalise>()?;
    m.add_class::<PyWait>()?;
    m.add_class::<PyOpenSubflow>()?;
    m.add_class::<PySubflowView>()?;
    m.add_class::<PyDataRef>()?;
    m.add_class::<PyMetaView>()?;
    m.add_class::<PySchedView>()?;
    m.add_class::<PyPmView>()?;
    Ok(())
}
