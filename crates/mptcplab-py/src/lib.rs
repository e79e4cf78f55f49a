//! `mptcplab._core`: a thin binding of mptcplab-core. Converts inputs, releases the GIL
//! while simulating (keeps it when a run has Python plug-ins), and turns the core's
//! columns into Python lists.

mod error;
mod plugins;

use error::{plugin_error, scenario_error, PluginError, ScenarioErrorPy, SimulationInterrupted};
use mptcplab_core::mptcp::pm::AnyPm;
use mptcplab_core::mptcp::scheduler::AnyScheduler;
use mptcplab_core::scenario::Scenario;
use mptcplab_core::units::SimTime;
use mptcplab_core::{ScenarioError, Simulator};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use plugins::{FailureSlot, PyPathManager, PyScheduler};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn parse_scenario(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Scenario> {
    let r = if let Ok(s) = obj.downcast::<PyString>() {
        Scenario::from_json(&s.to_cow()?)
    } else {
        let mut de = pythonize::Depythonizer::from_object(obj);
        Scenario::deserialize_from(&mut de)
    };
    r.map_err(|e| scenario_error(py, &e))
}

#[pyfunction]
fn version() -> &'static str { mptcplab_core::VERSION }

/// The core's source fingerprint (`mptcplab_core::MODEL`).
#[pyfunction]
fn model() -> &'static str { mptcplab_core::MODEL }

#[pyfunction]
fn schema_json() -> String { Scenario::json_schema() }

/// The congestion-control catalogue (name, kind, source, departures, options) as JSON.
#[pyfunction]
fn congestion_controls_json() -> String { mptcplab_core::cc::registry::catalogue_json() }

/// The congestion-control table as Markdown, generated from the registry.
#[pyfunction]
fn congestion_controls_markdown() -> String { mptcplab_core::cc::registry::markdown_table() }

/// Schedulers, path managers and applications as a Markdown table with options.
#[pyfunction]
fn components_markdown() -> String { mptcplab_core::components_markdown() }

/// Profiles (`run.profile`): what each sets and the kernel mechanisms it leaves out, as JSON.
#[pyfunction]
fn profiles_json() -> String { mptcplab_core::profile::catalogue_json() }

/// Profiles and the upstream profile's known gaps as Markdown tables.
#[pyfunction]
fn profiles_markdown() -> String { mptcplab_core::profile::markdown() }

/// The state a named random stream of the simulator is expanded from (rng.rs
/// `Rng::stream_state`): the kernel backend's forwarder draws its losses from it.
#[pyfunction]
fn rng_stream_state(seed: u64, name: &str) -> u64 { mptcplab_core::rng::Rng::stream_state(seed, name) }

/// The first `n` uniform draws of that stream (what a link's Bernoulli loss compares
/// with its probability, one draw a frame): the kernel tests check the forwarder's drops.
#[pyfunction]
fn rng_stream_draws(seed: u64, name: &str, n: usize) -> Vec<f64> {
    let mut r = mptcplab_core::rng::Rng::stream(seed, name);
    (0..n).map(|_| r.next_f64()).collect()
}

#[pyfunction]
fn components() -> Vec<(&'static str, &'static str, &'static str)> { mptcplab_core::components() }

/// Parse and check a scenario; returns it as JSON text with every default written out
/// and multi-homed hosts expanded.
#[pyfunction]
fn validate(py: Python<'_>, scenario: &Bound<'_, PyAny>) -> PyResult<String> {
    let sc = parse_scenario(py, scenario)?;
    let n = sc.normalized().map_err(|e| scenario_error(py, &e))?;
    Ok(n.to_json())
}

/// The routes a scenario's plan uses, as (connection, host pair, path, hops) rows: each
/// hop "<link>/<forward|reverse>" in the data direction. For a `[topology]` these are
/// the generated links and the paths each connection picked (under `seed`, default the
/// scenario's).
#[pyfunction]
#[pyo3(signature = (scenario, seed=None))]
fn routes(py: Python<'_>, scenario: &Bound<'_, PyAny>, seed: Option<u64>) -> PyResult<Vec<(String, String, String, String, Vec<String>)>> {
    let mut sc = parse_scenario(py, scenario)?;
    if let Some(s) = seed {
        sc.run.seed = Some(s);
    }
    let plan = sc.plan().map_err(|e| scenario_error(py, &e))?;
    let hop = |h: u32| format!("{}/{}", plan.links[(h / 2) as usize].name, if h % 2 == 0 { "forward" } else { "reverse" });
    let mut out = Vec::new();
    for c in &plan.conns {
        let (a, b) = c.hosts.clone().unwrap_or_default();
        for &p in &c.paths {
            let path = &plan.paths[p];
            out.push((c.cfg.name.clone(), a.clone(), b.clone(), path.name.clone(), path.fwd_hops.iter().map(|&h| hop(h)).collect()));
        }
    }
    Ok(out)
}

fn write_trace(path: &str, sim: &Simulator) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::new(f);
    writeln!(w, "time_s,flow,subflow,event,seq,len,dsn,ack,cwnd_pkts,inflight_pkts,srtt_ms,link,ssthresh_pkts,ca_state,cc_mode,pacing_mbps,sched_kind")?;
    let t = &sim.metrics.trace;
    for i in 0..t.len() {
        let c = t.conn[i] as usize;
        let link = if t.hop[i] == u32::MAX { String::new() } else { format!("{}/{}", sim.links[t.hop[i] as usize].name, sim.links[t.hop[i] as usize].direction) };
        writeln!(
            w,
            "{:.9},{},{},{},{},{},{},{},{},{},{:.3},{},{},{},{},{:.6},{}",
            t.time_ns[i] as f64 / 1e9,
            sim.conns[c].cfg.name,
            t.subflow[i],
            t.event[i],
            t.seq[i],
            t.len[i],
            t.dsn[i],
            t.ack[i],
            t.cwnd_pkts[i],
            t.inflight_pkts[i],
            t.srtt_us[i] as f64 / 1e3,
            link,
            t.ssthresh_pkts[i],
            t.ca_state[i],
            t.cc_mode[i],
            t.pacing_bps[i] / 1e6,
            t.sched_kind[i]
        )?;
    }
    w.flush()
}

/// Install the Python plug-ins: (connection name, "scheduler" or "path_manager", object,
/// label). Returns whether any was installed.
fn install_plugins(py: Python<'_>, sim: &mut Simulator, plugins: Vec<(String, String, PyObject, String)>, slot: &Arc<FailureSlot>) -> PyResult<bool> {
    let mut any = false;
    for (conn, kind, obj, label) in plugins {
        let Some(ci) = sim.conns.iter().position(|c| c.cfg.name == conn && c.cfg.mptcp) else {
            return Err(scenario_error(py, &ScenarioError::new(format!("<{kind}>"), format!("no MPTCP connection named {conn:?}"))));
        };
        match kind.as_str() {
            "scheduler" => {
                let s = PyScheduler::new(obj.bind(py), &label, &conn, slot.clone())?;
                sim.set_scheduler(ci, AnyScheduler::Dyn(Box::new(s)));
            }
            "path_manager" => {
                let names = (0..sim.conns[ci].subflows.len()).map(|s| sim.path_name(ci, s).to_string()).collect();
                let p = PyPathManager::new(obj.bind(py), &label, &conn, names, slot.clone())?;
                sim.conns[ci].pm = AnyPm::Dyn(Box::new(p));
            }
            _ => return Err(pyo3::exceptions::PyValueError::new_err(format!("unknown plug-in kind {kind:?}"))),
        }
        any = true;
    }
    Ok(any)
}

/// Run a scenario. The GIL is released while the engine runs, except in runs with Python
/// plug-ins (`plugins`), which keep it and call into Python at each decision. Ctrl-C
/// raises `SimulationInterrupted` (a KeyboardInterrupt); a failing plug-in raises
/// `PluginError` and stops the run.
#[pyfunction]
#[pyo3(signature = (scenario, seed=None, duration_s=None, progress=None, trace_path=None, trace_flows=None, plugins=None, pcap_files=None))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    scenario: &Bound<'py, PyAny>,
    seed: Option<u64>,
    duration_s: Option<f64>,
    progress: Option<Bound<'py, PyAny>>,
    trace_path: Option<String>,
    trace_flows: Option<Vec<String>>,
    plugins: Option<Vec<(String, String, PyObject, String)>>,
    pcap_files: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut sc = parse_scenario(py, scenario)?;
    // The seed also draws generated traffic and path choices (`[[traffic]]`), which the
    // plan fixes: it must see the override.
    if let Some(s) = seed {
        sc.run.seed = Some(s);
    }
    let plan = sc.plan().map_err(|e| scenario_error(py, &e))?;
    let duration = match duration_s {
        None => None,
        Some(d) if d.is_finite() && d > 0.0 && d <= 1e7 => Some(SimTime::from_secs_f64(d)),
        Some(d) => return Err(scenario_error(py, &ScenarioError::new("run.duration", format!("expected a duration between 0 and 1e7 s, got {d}")))),
    };
    let trace: Vec<String> = match (&trace_path, trace_flows) {
        (_, Some(f)) => f,
        (Some(_), None) => vec!["all".to_string()],
        (None, None) => vec![],
    };
    let name = plan.name.clone();
    let used_seed = seed.unwrap_or(plan.seed);
    let mut sim = Simulator::new(plan, seed, duration, &trace).map_err(|e| scenario_error(py, &e))?;
    if let Some(files) = &pcap_files {
        attach_pcap(py, &mut sim, files)?;
    }
    let slot = Arc::new(FailureSlot::default());
    let with_plugins = install_plugins(py, &mut sim, plugins.unwrap_or_default(), &slot)?;
    let wall0 = Instant::now();
    let mut chunk = SimTime::from_ms(10);
    let mut last_progress = Instant::now();
    while !sim.done() {
        let target = (sim.now + chunk).min(sim.end);
        let t0 = Instant::now();
        if with_plugins {
            // Keep the GIL: every decision calls Python (the plug-ins' `Python::with_gil`
            // is then a re-entry). Python's own eval loop still hands the GIL to other
            // threads and runs signal handlers while the plug-in's code runs. Stop at the
            // event in which a plug-in failed.
            while !slot.is_set() && sim.step(target) {}
            if let Some(f) = slot.take() {
                if plugins::is_interrupt(py, &f) {
                    return Err(SimulationInterrupted::new_err(format!("interrupted at {:.3} s of simulated time", sim.now.secs_f64())));
                }
                return Err(plugin_error(py, f, sim.now));
            }
            sim.run_until(target);
        } else {
            py.allow_threads(|| sim.run_until(target));
        }
        // Aim for ~50 ms of wall time per chunk so Ctrl-C and progress stay responsive.
        let took = t0.elapsed().as_secs_f64().max(1e-6);
        let scale = (0.05 / took).clamp(0.25, 4.0);
        chunk = SimTime::from_secs_f64((chunk.secs_f64() * scale).clamp(1e-4, 10.0));
        if let Err(e) = py.check_signals() {
            if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
                return Err(SimulationInterrupted::new_err(format!("interrupted at {:.3} s of simulated time", sim.now.secs_f64())));
            }
            return Err(e);
        }
        if let Some(cb) = &progress {
            if last_progress.elapsed() >= Duration::from_millis(250) || sim.done() {
                cb.call1((sim.now.secs_f64(), sim.end.secs_f64()))?;
                last_progress = Instant::now();
            }
        }
    }
    let wall = wall0.elapsed().as_secs_f64();
    // (On the error returns above, dropping `sim` flushes the captures' buffers: a run
    // that fails midway leaves whole records of what it simulated.)
    if let (Some(files), Some(Err(e))) = (&pcap_files, sim.finish_pcap()) {
        let f = files.get(e.path).map_or("?", |s| s.as_str());
        return Err(pyo3::exceptions::PyOSError::new_err(format!("cannot write pcap {f}: {}", e.error)));
    }
    if let Some(p) = &trace_path {
        write_trace(p, &sim).map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("cannot write trace {p}: {e}")))?;
    }
    result_dict(py, sim, &name, used_seed, wall)
}

/// Open one capture file per path of the plan (`files`, in its order) and attach them.
fn attach_pcap(py: Python<'_>, sim: &mut Simulator, files: &[String]) -> PyResult<()> {
    if files.len() != sim.plan.paths.len() {
        let msg = format!("expected {} files (one per path), got {}", sim.plan.paths.len(), files.len());
        return Err(scenario_error(py, &ScenarioError::new("--pcap", msg)));
    }
    let mut sinks: Vec<Box<dyn Write + Send>> = Vec::with_capacity(files.len());
    for f in files {
        let file = std::fs::File::create(f).map_err(|e| scenario_error(py, &ScenarioError::new("--pcap", format!("cannot create '{f}': {e}"))))?;
        sinks.push(Box::new(std::io::BufWriter::with_capacity(1 << 16, file)));
    }
    sim.attach_pcap(sinks);
    Ok(())
}

/// The run's tables as Python columns. Takes the simulator and drops it before any
/// table is built; the time series' columns are dropped as they are converted, so the
/// core's copy and Python's are not both alive at the end of a run (issue 14).
fn result_dict<'py>(py: Python<'py>, mut sim: Simulator, name: &str, seed: u64, wall: f64) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    meta_table(py, &out, &sim, name, seed, wall)?;
    let mut t = Tables::take(&mut sim);
    // The simulator's queues (scoreboards, link rings: most of a large run's memory) go
    // before any table is copied out, so the copies reuse their memory (issue 14: at
    // 1 000 connections the copies had raised the peak by ~3 MiB).
    drop(sim);
    summary_tables(py, &out, &t)?;
    let series = std::mem::take(&mut t.series);
    series_tables(py, &out, series, &t.names)?;
    record_tables(py, &out, &t)?;
    Ok(out)
}

/// The names the tables' rows refer to by index.
struct Names {
    conns: Vec<String>,
    paths: Vec<String>,
    links: Vec<(String, &'static str)>,
}

type Series = (mptcplab_core::metrics::SubflowSeries, mptcplab_core::metrics::ConnSeries, mptcplab_core::metrics::LinkSeries);

/// What the tables need from a finished run, owned, so the simulator can go first.
struct Tables {
    names: Names,
    summary: Vec<mptcplab_core::world::FlowSummary>,
    subflow_summary: Vec<mptcplab_core::world::SubflowSummary>,
    series: Series,
    events: mptcplab_core::metrics::SubflowEvents,
    delay: mptcplab_core::metrics::DelaySamples,
    frames: mptcplab_core::metrics::FrameTable,
    flow_times: Vec<mptcplab_core::world::FlowTime>,
}

impl Tables {
    fn take(sim: &mut Simulator) -> Tables {
        let m = &mut sim.metrics;
        let series = (std::mem::take(&mut m.subflows), std::mem::take(&mut m.conns), std::mem::take(&mut m.links));
        let events = std::mem::take(&mut m.events);
        let delay = std::mem::take(&mut m.delay);
        Tables {
            names: Names {
                conns: sim.conns.iter().map(|c| c.cfg.name.clone()).collect(),
                paths: sim.plan.paths.iter().map(|p| p.name.clone()).collect(),
                links: sim.links.iter().map(|l| (l.name.clone(), l.direction)).collect(),
            },
            summary: sim.summary(),
            subflow_summary: sim.subflow_summary(),
            series,
            events,
            delay,
            frames: sim.frames(),
            flow_times: sim.flow_times(),
        }
    }
}

/// `meta`: the run's identity and counters.
fn meta_table<'py>(py: Python<'py>, out: &Bound<'py, PyDict>, sim: &Simulator, name: &str, seed: u64, wall: f64) -> PyResult<()> {
    let st = sim.stats();
    let meta = PyDict::new(py);
    meta.set_item("version", mptcplab_core::VERSION)?;
    meta.set_item("model", mptcplab_core::MODEL)?;
    meta.set_item("seed", seed)?;
    meta.set_item("duration_s", sim.now.secs_f64())?;
    meta.set_item("wall_s", wall)?;
    meta.set_item("events", st.events)?;
    meta.set_item("data_segments_sent", st.data_segments_sent)?;
    meta.set_item("acks_sent", st.acks_sent)?;
    meta.set_item("scenario_name", name)?;
    meta.set_item("profile", sim.plan.profile.info().name)?;
    meta.set_item("trace_rows", sim.metrics.trace.len())?;
    // `tcp.receive_memory = "skb"` only: the receiver's drops and its deadlock, beside
    // the kernel backend's TcpExt counters (TCPRcvQDrop, TCPOFODrop).
    let rm = PyDict::new(py);
    for c in sim.conns.iter().filter(|c| c.rcv.skb.is_some()) {
        let d = PyDict::new(py);
        d.set_item("sk_rcvbuf", c.rcv.rcvbuf)?;
        d.set_item("rcvq_drops", c.stats.rcvq_drops)?;
        d.set_item("ofo_drops", c.stats.ofo_drops)?;
        d.set_item("nodss_window", c.rcv.nodss_window)?;
        d.set_item("ofo_merged", c.rcv.skb.as_ref().map_or(0, |m| m.ofo_merged))?;
        d.set_item("stalled_at_s", c.stats.rcv_stalled_at.map(|t| t.secs_f64()))?;
        d.set_item("rmem_max", c.stats.rcv_rmem_max)?;
        rm.set_item(&c.cfg.name, d)?;
    }
    if !rm.is_empty() {
        meta.set_item("receive_memory", rm)?;
    }
    // Flows running CUBIC: HyStart's exits from slow start, named as the kernel backend's
    // TcpExt counters (TCPHystartTrainDetect/Cwnd, TCPHystartDelayDetect/Cwnd).
    let hy = PyDict::new(py);
    for (name, e) in sim.hystart_exits() {
        let d = PyDict::new(py);
        // In sorted order, as a saved result's meta.json holds them.
        d.set_item("TCPHystartDelayCwnd", e.delay_cwnd)?;
        d.set_item("TCPHystartDelayDetect", e.delay)?;
        d.set_item("TCPHystartTrainCwnd", e.train_cwnd)?;
        d.set_item("TCPHystartTrainDetect", e.train)?;
        hy.set_item(name, d)?;
    }
    if !hy.is_empty() {
        meta.set_item("hystart", hy)?;
    }
    // Flows with tail loss probes (upstream): TcpExt TCPLossProbes / TCPLossProbeRecovery.
    let lp = PyDict::new(py);
    for (name, probes, repaired) in sim.loss_probes() {
        let d = PyDict::new(py);
        d.set_item("TCPLossProbeRecovery", repaired)?;
        d.set_item("TCPLossProbes", probes)?;
        lp.set_item(name, d)?;
    }
    if !lp.is_empty() {
        meta.set_item("loss_probes", lp)?;
    }
    out.set_item("meta", meta)?;
    Ok(())
}

/// `summary` (per flow or connection) and `subflow_summary`.
fn summary_tables<'py>(py: Python<'py>, out: &Bound<'py, PyDict>, t: &Tables) -> PyResult<()> {
    let conn_name = |i: u32| t.names.conns[i as usize].clone();
    let path_name = |p: u32| t.names.paths[p as usize].clone();
    let sum = &t.summary;
    let d = PyDict::new(py);
    d.set_item("flow", sum.iter().map(|r| r.name.clone()).collect::<Vec<_>>())?;
    d.set_item("kind", sum.iter().map(|r| r.kind).collect::<Vec<_>>())?;
    d.set_item("cc", sum.iter().map(|r| r.cc.clone()).collect::<Vec<_>>())?;
    d.set_item("scheduler", sum.iter().map(|r| r.scheduler.clone()).collect::<Vec<_>>())?;
    d.set_item("path_manager", sum.iter().map(|r| r.path_manager.clone()).collect::<Vec<_>>())?;
    d.set_item("subflows", sum.iter().map(|r| r.subflows).collect::<Vec<_>>())?;
    d.set_item("bytes_delivered", sum.iter().map(|r| r.bytes_delivered).collect::<Vec<_>>())?;
    d.set_item("goodput_mbps", sum.iter().map(|r| r.goodput_mbps).collect::<Vec<_>>())?;
    d.set_item("bytes_sent", sum.iter().map(|r| r.bytes_sent).collect::<Vec<_>>())?;
    d.set_item("bytes_retrans", sum.iter().map(|r| r.bytes_retrans).collect::<Vec<_>>())?;
    d.set_item("completion_s", sum.iter().map(|r| r.completion_s).collect::<Vec<_>>())?;
    d.set_item("ooo_max_bytes", sum.iter().map(|r| r.ooo_max_bytes).collect::<Vec<_>>())?;
    d.set_item("rcvbuf_max_bytes", sum.iter().map(|r| r.rcvbuf_max_bytes).collect::<Vec<_>>())?;
    out.set_item("summary", d)?;

    let ss = &t.subflow_summary;
    let d = PyDict::new(py);
    d.set_item("flow", ss.iter().map(|r| conn_name(r.conn)).collect::<Vec<_>>())?;
    d.set_item("subflow", ss.iter().map(|r| r.subflow).collect::<Vec<_>>())?;
    d.set_item("path", ss.iter().map(|r| path_name(r.path)).collect::<Vec<_>>())?;
    d.set_item("bytes_sent", ss.iter().map(|r| r.bytes_sent).collect::<Vec<_>>())?;
    d.set_item("bytes_retrans", ss.iter().map(|r| r.bytes_retrans).collect::<Vec<_>>())?;
    d.set_item("bytes_acked", ss.iter().map(|r| r.bytes_acked).collect::<Vec<_>>())?;
    d.set_item("mean_srtt_ms", ss.iter().map(|r| r.mean_srtt_ms).collect::<Vec<_>>())?;
    d.set_item("throughput_mbps", ss.iter().map(|r| r.throughput_mbps).collect::<Vec<_>>())?;
    d.set_item("rto_count", ss.iter().map(|r| r.rto_count).collect::<Vec<_>>())?;
    d.set_item("recoveries", ss.iter().map(|r| r.recoveries).collect::<Vec<_>>())?;
    d.set_item("sched_new_segs", ss.iter().map(|r| r.sched_new_segs).collect::<Vec<_>>())?;
    d.set_item("sched_reinjected_segs", ss.iter().map(|r| r.sched_reinjected_segs).collect::<Vec<_>>())?;
    d.set_item("sched_copied_segs", ss.iter().map(|r| r.sched_copied_segs).collect::<Vec<_>>())?;
    d.set_item("sched_penalised", ss.iter().map(|r| r.sched_penalised).collect::<Vec<_>>())?;
    d.set_item("segs_sent", ss.iter().map(|r| r.segs_sent).collect::<Vec<_>>())?;
    d.set_item("segs_retrans", ss.iter().map(|r| r.segs_retrans).collect::<Vec<_>>())?;
    d.set_item("drops_queue", ss.iter().map(|r| r.drops_queue).collect::<Vec<_>>())?;
    d.set_item("drops_loss", ss.iter().map(|r| r.drops_loss).collect::<Vec<_>>())?;
    d.set_item("drops_down", ss.iter().map(|r| r.drops_down).collect::<Vec<_>>())?;
    d.set_item("active_s", ss.iter().map(|r| r.active_s).collect::<Vec<_>>())?;
    d.set_item("tau_av_ms", ss.iter().map(|r| r.tau_av_ms).collect::<Vec<_>>())?;
    d.set_item("tau_max_ms", ss.iter().map(|r| r.tau_max_ms).collect::<Vec<_>>())?;
    out.set_item("subflow_summary", d)?;

    let ft = &t.flow_times;
    let d = PyDict::new(py);
    d.set_item("flow", ft.iter().map(|r| conn_name(r.conn)).collect::<Vec<_>>())?;
    d.set_item("src", ft.iter().map(|r| r.src.clone()).collect::<Vec<_>>())?;
    d.set_item("dst", ft.iter().map(|r| r.dst.clone()).collect::<Vec<_>>())?;
    d.set_item("start_s", ft.iter().map(|r| r.start_s).collect::<Vec<_>>())?;
    d.set_item("size_bytes", ft.iter().map(|r| r.size_bytes).collect::<Vec<_>>())?;
    d.set_item("fct_s", ft.iter().map(|r| r.fct_s).collect::<Vec<_>>())?;
    out.set_item("fct", d)?;

    Ok(())
}

/// `subflow_events`, `delay_samples` and `frames`.
fn record_tables<'py>(py: Python<'py>, out: &Bound<'py, PyDict>, t: &Tables) -> PyResult<()> {
    let conn_name = |i: u32| t.names.conns[i as usize].clone();
    let path_name = |p: u32| t.names.paths[p as usize].clone();
    let e = &t.events;
    let d = PyDict::new(py);
    d.set_item("time_s", &e.time_s)?;
    d.set_item("flow", e.conn.iter().map(|&c| conn_name(c)).collect::<Vec<_>>())?;
    d.set_item("subflow", &e.subflow)?;
    d.set_item("path", e.path.iter().map(|&p| path_name(p)).collect::<Vec<_>>())?;
    d.set_item("from", &e.from)?;
    d.set_item("to", &e.to)?;
    d.set_item("reason", &e.reason)?;
    out.set_item("subflow_events", d)?;

    let x = &t.delay;
    let d = PyDict::new(py);
    d.set_item("time_s", &x.time_s)?;
    d.set_item("flow", x.conn.iter().map(|&c| conn_name(c)).collect::<Vec<_>>())?;
    d.set_item("dsn", &x.dsn)?;
    d.set_item("len", &x.len)?;
    d.set_item("taken_s", &x.taken_s)?;
    d.set_item("subflow", &x.subflow)?;
    d.set_item("delay_ms", &x.delay_ms)?;
    d.set_item("theta_ms", &x.theta_ms)?;
    d.set_item("tau_ms", &x.tau_ms)?;
    d.set_item("tau_max_ms", &x.tau_max_ms)?;
    d.set_item("t_over_ms", &x.t_over_ms)?;
    d.set_item("zeta_ms", &x.zeta_ms)?;
    d.set_item("zeta_measured_ms", &x.zeta_measured_ms)?;
    out.set_item("delay_samples", d)?;

    let f = &t.frames;
    let d = PyDict::new(py);
    d.set_item("flow", f.conn.iter().map(|&c| conn_name(c)).collect::<Vec<_>>())?;
    d.set_item("frame", &f.frame)?;
    d.set_item("size_bytes", &f.size_bytes)?;
    d.set_item("scheduled_s", &f.scheduled_s)?;
    d.set_item("enqueued_s", &f.enqueued_s)?;
    d.set_item("taken_s", &f.taken_s)?;
    d.set_item("acked_s", &f.acked_s)?;
    d.set_item("delivered_s", &f.delivered_s)?;
    out.set_item("frames", d)?;
    Ok(())
}

fn series_tables<'py>(py: Python<'py>, out: &Bound<'py, PyDict>, (s, c, l): Series, names: &Names) -> PyResult<()> {
    let conn_name = |i: u32| names.conns[i as usize].clone();
    let path_name = |p: u32| names.paths[p as usize].clone();
    let d = PyDict::new(py);
    d.set_item("time_s", packed(py, s.time_s))?;
    d.set_item("flow", shared_names(py, &s.conn, conn_name))?;
    d.set_item("subflow", packed(py, s.subflow))?;
    d.set_item("path", shared_names(py, &s.path, path_name))?;
    d.set_item("cwnd_pkts", packed(py, s.cwnd_pkts))?;
    d.set_item("ssthresh_pkts", packed(py, s.ssthresh_pkts))?;
    d.set_item("srtt_ms", packed(py, s.srtt_ms))?;
    d.set_item("inflight_bytes", packed(py, s.inflight_bytes))?;
    d.set_item("bytes_sent", packed(py, s.bytes_sent))?;
    d.set_item("bytes_acked", packed(py, s.bytes_acked))?;
    d.set_item("bytes_retrans", packed(py, s.bytes_retrans))?;
    d.set_item("throughput_mbps", packed(py, s.throughput_mbps))?;
    d.set_item("sent_mbps", packed(py, s.sent_mbps))?;
    out.set_item("subflows", d)?;

    let d = PyDict::new(py);
    d.set_item("time_s", packed(py, c.time_s))?;
    d.set_item("flow", shared_names(py, &c.conn, conn_name))?;
    d.set_item("goodput_mbps", packed(py, c.goodput_mbps))?;
    d.set_item("bytes_delivered", packed(py, c.bytes_delivered))?;
    d.set_item("ooo_bytes", packed(py, c.ooo_bytes))?;
    d.set_item("rcvbuf_bytes", packed(py, c.rcvbuf_bytes))?;
    d.set_item("sndbuf_bytes", packed(py, c.sndbuf_bytes))?;
    out.set_item("connections", d)?;

    let d = PyDict::new(py);
    d.set_item("time_s", packed(py, l.time_s))?;
    d.set_item("link", shared_names(py, &l.hop, |h| names.links[h as usize].0.clone()))?;
    d.set_item("direction", shared_names(py, &l.hop, |h| names.links[h as usize].1.to_string()))?;
    d.set_item("queue_pkts", packed(py, l.queue_pkts))?;
    d.set_item("queue_bytes", packed(py, l.queue_bytes))?;
    d.set_item("sent_pkts", packed(py, l.sent_pkts))?;
    d.set_item("delivered_pkts", packed(py, l.delivered_pkts))?;
    d.set_item("dropped_pkts", packed(py, l.dropped_pkts))?;
    d.set_item("rate_mbps", packed(py, l.rate_mbps))?;
    out.set_item("links", d)?;

    Ok(())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ScenarioError", py.get_type::<ScenarioErrorPy>())?;
    m.add("SimulationInterrupted", py.get_type::<SimulationInterrupted>())?;
    m.add("PluginError", py.get_type::<PluginError>())?;
    plugins::register(m)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(routes, m)?)?;
    m.add_function(wrap_pyfunction!(model, m)?)?;
    m.add_function(wrap_pyfunction!(schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(components, m)?)?;
    m.add_function(wrap_pyfunction!(rng_stream_state, m)?)?;
    m.add_function(wrap_pyfunction!(rng_stream_draws, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controls_json, m)?)?;
    m.add_function(wrap_pyfunction!(congestion_controls_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(components_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(profiles_json, m)?)?;
    m.add_function(wrap_pyfunction!(profiles_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    Ok(())
}

/// A numeric column packed for Python: `("d", bytes)` of f64 or `("q", bytes)` of i64,
/// native byte order (the typecodes of Python's `array`). 8 bytes a value, where a list
/// of Python floats or ints costs about 32 (issue 14: the subflow series of 1 000
/// connections took ~15 MB as lists). `Result` unpacks it on first use
/// (python/mptcplab/result.py, `unpack_column`): into numpy int64 and float64, the dtypes
/// pandas gave the lists.
trait PackedValue: Copy {
    const CODE: &'static str;
    fn ne_bytes(self) -> [u8; 8];
}
impl PackedValue for f64 {
    const CODE: &'static str = "d";
    fn ne_bytes(self) -> [u8; 8] { self.to_ne_bytes() }
}
impl PackedValue for u64 {
    // Counters and byte totals, far below 2^63.
    const CODE: &'static str = "q";
    fn ne_bytes(self) -> [u8; 8] { (self as i64).to_ne_bytes() }
}
impl PackedValue for u32 {
    const CODE: &'static str = "q";
    fn ne_bytes(self) -> [u8; 8] { (self as i64).to_ne_bytes() }
}

/// Takes the column: written straight into the Python bytes, then dropped.
fn packed<'py, T: PackedValue>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyTuple> {
    let bytes = PyBytes::new_with(py, v.len() * 8, |b| {
        for (chunk, &x) in b.chunks_exact_mut(8).zip(v.iter()) {
            chunk.copy_from_slice(&x.ne_bytes());
        }
        Ok(())
    })
    .expect("bytes of a known length");
    drop(v);
    PyTuple::new(py, [PyString::new(py, T::CODE).into_any(), bytes.into_any()]).expect("a 2-tuple")
}

/// A column of names, one Python string per distinct key shared by every row that has it.
fn shared_names<'py>(py: Python<'py>, keys: &[u32], name: impl Fn(u32) -> String) -> Vec<Bound<'py, PyString>> {
    let mut seen: std::collections::HashMap<u32, Bound<'py, PyString>> = std::collections::HashMap::new();
    keys.iter().map(|&k| seen.entry(k).or_insert_with(|| PyString::new(py, &name(k))).clone()).collect()
}
