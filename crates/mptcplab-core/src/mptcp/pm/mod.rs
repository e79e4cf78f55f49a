//! Path managers: decide which subflows to open. They return actions; the connection
//! carries them out (reference `path-managers.md`).

use crate::options::{OptKind, OptionSpec};

mod in_kernel;
pub use in_kernel::{InKernel, MPTCP_PM_ADDR_MAX};

/// What a path manager asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmAction {
    /// Open a subflow (MP_JOIN) on the connection's path number `path`.
    OpenSubflow { path: usize, backup: bool },
    /// Set the backup flag (MP_PRIO B-bit) of the subflows on path `path` that are already
    /// open, e.g. the initial subflow.
    SetBackup { path: usize, backup: bool },
}

pub trait PathManager {
    fn name(&self) -> &'static str;
    /// The initial subflow is fully established. `paths` is the number of paths
    /// (local address, remote address pairs) the connection may use; `initial` is the one
    /// the initial subflow runs on.
    fn on_established(&mut self, paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>);
    /// When the path manager next wants `handle_timeout` (None: never). The engine asks
    /// once when it builds the connection and again after each `handle_timeout`.
    fn poll_timeout(&self) -> Option<crate::units::SimTime> { None }
    fn handle_timeout(&mut self, _now: crate::units::SimTime, _out: &mut Vec<PmAction>) {}
}

/// Out-of-tree Linux `mptcp_fullmesh.c`: one subflow per (local address, remote address)
/// pair, i.e. one per path here (`num_subflows` = 1). Reference §5.1.
#[derive(Default)]
pub struct FullMesh;

impl PathManager for FullMesh {
    fn name(&self) -> &'static str { "fullmesh" }
    fn on_established(&mut self, paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>) {
        for p in 0..paths {
            if p != initial {
                out.push(PmAction::OpenSubflow { path: p, backup: backup.get(p).copied().unwrap_or(false) });
            }
        }
    }
}

/// Out-of-tree `default` PM: no extra subflows (plain TCP behaves like this too).
#[derive(Default)]
pub struct SingleSubflow;

impl PathManager for SingleSubflow {
    fn name(&self) -> &'static str { "default" }
    fn on_established(&mut self, _: usize, _: usize, _: &[bool], _: &mut Vec<PmAction>) {}
}

/// Out-of-tree Linux `mptcp_ndiffports.c` (v0.94/v0.95, reference §5.2): once the
/// initial subflow is established, the client opens subflows over the same address pair
/// with other source ports until the connection has `subflows` of them, the initial one
/// included (`create_subflow_worker`: `num_subflows > mptcp_subflow_count(mpcb)`; module
/// parameter `num_subflows`, default 2). It uses no other address, sends no ADD_ADDR,
/// and the server side opens nothing.
///
/// The kernel opens them with `loc.low_prio = 0`; here they take the path's `backup`
/// flag like every other subflow, so a scenario's backup path means the same thing
/// under every path manager.
pub struct NDiffPorts {
    /// Subflows in total (`num_subflows`).
    pub subflows: u32,
}

impl PathManager for NDiffPorts {
    fn name(&self) -> &'static str { "ndiffports" }
    fn on_established(&mut self, _paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>) {
        let b = backup.get(initial).copied().unwrap_or(false);
        for _ in 1..self.subflows {
            out.push(PmAction::OpenSubflow { path: initial, backup: b });
        }
    }
}

/// PCDC (seed `000_d384ca3f1012c6b1.txt` Sec. 2.1 and 3; reference `path-managers.md`
/// §5.5): only the subset SP* = {sp_i | Ω_i ≥ 0} carries data. Ω is measured offline
/// (`mptcplab.pcdc.measure_omega`) and SP* reaches this PM as a list of paths. Like
/// fullmesh it opens one subflow per path, so every subflow stays established; the paths
/// outside SP* open as backup subflows (MP_PRIO B-bit). That is the seed's standby: a
/// standby subflow carries no data while an SP* subflow can send, and takes the data
/// once every SP* subflow is potentially failed (`pf`, set at its first RTO). Among
/// several standby subflows the scheduler picks as it picks among backups (minRTT:
/// lowest SRTT), not by Ω: a simplification of the seed's "best unused subflow".
///
/// Ω measurement (§5.5: "from T to 2T subflow i does not carry data, it stays
/// established"): options `withhold` and `withhold_at_ms` turn the subflows of the
/// withheld paths into backups at that time (MP_PRIO), so they stop taking new data.
pub struct Pcdc {
    /// `data[p]`: path p is in SP*.
    pub data: Vec<bool>,
    /// Paths that stop carrying data at `withhold_at`.
    pub withhold: Vec<usize>,
    pub withhold_at: Option<crate::units::SimTime>,
}

impl PathManager for Pcdc {
    fn name(&self) -> &'static str { "pcdc" }
    fn on_established(&mut self, paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>) {
        // A path outside SP* is standby; a path in SP* keeps the scenario's own backup flag.
        let standby = |p: usize| !self.data.get(p).copied().unwrap_or(true);
        if standby(initial) && !backup.get(initial).copied().unwrap_or(false) {
            out.push(PmAction::SetBackup { path: initial, backup: true });
        }
        for p in (0..paths).filter(|&p| p != initial) {
            out.push(PmAction::OpenSubflow { path: p, backup: standby(p) || backup.get(p).copied().unwrap_or(false) });
        }
    }
    fn poll_timeout(&self) -> Option<crate::units::SimTime> { self.withhold_at }
    fn handle_timeout(&mut self, _now: crate::units::SimTime, out: &mut Vec<PmAction>) {
        if self.withhold_at.take().is_some() {
            for &p in &self.withhold {
                if let Some(d) = self.data.get_mut(p) {
                    *d = false;
                }
                out.push(PmAction::SetBackup { path: p, backup: true });
            }
        }
    }
}

pub enum AnyPm {
    FullMesh(FullMesh),
    Pcdc(Pcdc),
    Single(SingleSubflow),
    NDiffPorts(NDiffPorts),
    InKernel(InKernel),
    Dyn(Box<dyn PathManager + Send>),
}

impl PathManager for AnyPm {
    fn name(&self) -> &'static str {
        match self {
            AnyPm::FullMesh(p) => p.name(),
            AnyPm::Pcdc(p) => p.name(),
            AnyPm::Single(p) => p.name(),
            AnyPm::NDiffPorts(p) => p.name(),
            AnyPm::InKernel(p) => p.name(),
            AnyPm::Dyn(p) => p.name(),
        }
    }
    fn on_established(&mut self, paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>) {
        match self {
            AnyPm::FullMesh(p) => p.on_established(paths, initial, backup, out),
            AnyPm::Pcdc(p) => p.on_established(paths, initial, backup, out),
            AnyPm::Single(p) => p.on_established(paths, initial, backup, out),
            AnyPm::NDiffPorts(p) => p.on_established(paths, initial, backup, out),
            AnyPm::InKernel(p) => p.on_established(paths, initial, backup, out),
            AnyPm::Dyn(p) => p.on_established(paths, initial, backup, out),
        }
    }
    fn poll_timeout(&self) -> Option<crate::units::SimTime> {
        match self {
            AnyPm::Pcdc(p) => p.poll_timeout(),
            AnyPm::Dyn(p) => p.poll_timeout(),
            _ => None,
        }
    }
    fn handle_timeout(&mut self, now: crate::units::SimTime, out: &mut Vec<PmAction>) {
        match self {
            AnyPm::Pcdc(p) => p.handle_timeout(now, out),
            AnyPm::Dyn(p) => p.handle_timeout(now, out),
            _ => {}
        }
    }
}

pub struct PmInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// Named options (`path_manager_options` in a scenario).
    pub options: &'static [crate::options::OptionSpec],
}

pub const REGISTRY: &[PmInfo] = &[
    PmInfo { name: "fullmesh", description: "One subflow per (local address, remote address) pair, i.e. per path (out-of-tree mptcp_fullmesh.c)", options: &[] },
    PmInfo { name: "default", description: "Only the initial subflow (out-of-tree `default` PM)", options: &[] },
    PmInfo {
        name: "ndiffports",
        description: "Several subflows over the initial path, differing only in source port (out-of-tree mptcp_ndiffports.c)",
        options: &[OptionSpec {
            name: "subflows",
            kind: OptKind::Int { min: 1, max: crate::mptcp::conn::MAX_SUBFLOWS as i64 },
            default: "2",
            description: "subflows in total, the initial one included (kernel module parameter num_subflows)",
        }],
    },
    PmInfo {
        name: "in_kernel",
        description: "Upstream Linux in-kernel path manager (pm_kernel.c, ip mptcp endpoint/limits): every path's client address is a `subflow` endpoint, in path order; once the initial subflow is fully established, subflows open to the server's address from the next endpoints until `subflows_limit` extra subflows exist",
        options: &[
            OptionSpec {
                name: "subflows_limit",
                kind: OptKind::Int { min: 0, max: MPTCP_PM_ADDR_MAX as i64 },
                default: "2",
                description: "subflows beyond the initial one (`ip mptcp limits set subflows N`, kernel default 2, at most MPTCP_PM_ADDR_MAX = 8; the kernel backend sets 8)",
            },
            OptionSpec {
                name: "add_addr_accepted",
                kind: OptKind::Int { min: 0, max: MPTCP_PM_ADDR_MAX as i64 },
                default: "0",
                description: "server addresses announced by ADD_ADDR that the client connects to (`ip mptcp limits set add_addr_accepted N`, kernel default 0, at most 8); the modelled server has one address and announces none, as the kernel backend, so this opens nothing",
            },
            OptionSpec {
                name: "fullmesh",
                kind: OptKind::Bool,
                default: "false",
                description: "every endpoint has the `fullmesh` flag: subflows to every known server address instead of only the initial one (with the single server address: the same subflows)",
            },
        ],
    },
    PmInfo {
        name: "pcdc",
        description: "PCDC (seed 000): one subflow per path; only SP* = {Ω_i ≥ 0} carries data, the others stay established as standby (backup) subflows",
        options: &[
            OptionSpec {
                name: "sp",
                kind: OptKind::Paths,
                default: "all paths",
                description: "SP*, the paths that carry data (mptcplab.pcdc.sp_star of measured Ω); the others open as backup subflows and take over after one RTO of every SP* subflow",
            },
            OptionSpec {
                name: "withhold",
                kind: OptKind::Paths,
                default: "none",
                description: "Ω measurement: paths whose subflows stop carrying data (become backup, stay established) at withhold_at_ms",
            },
            OptionSpec {
                name: "withhold_at_ms",
                kind: OptKind::Int { min: 0, max: 1_000_000_000 },
                default: "0",
                description: "Ω measurement: when the withheld paths stop carrying data (T of seed 000 Eq. 5), in ms",
            },
        ],
    },
];

/// Check a path manager name and its options. `paths` are the names of the
/// connection's paths, in order; options naming paths must name these.
pub fn check(name: &str, params: &crate::options::Params, paths: &[&str]) -> Result<&'static PmInfo, crate::options::OptionError> {
    let info = REGISTRY.iter().find(|s| s.name == name).ok_or_else(|| crate::options::unknown("path manager", name, REGISTRY.iter().map(|s| s.name)))?;
    crate::options::check(name, info.options, params)?;
    crate::options::check_paths(name, info.options, params, paths)?;
    if name == "in_kernel" && paths.len() > MPTCP_PM_ADDR_MAX {
        return Err(crate::options::OptionError {
            option: None,
            message: format!("in_kernel: a network namespace holds at most 8 endpoints (MPTCP_PM_ADDR_MAX) and each path is one; this connection has {} paths", paths.len()),
        });
    }
    Ok(info)
}

/// Build a path manager. `paths`: the names of the connection's paths, in order.
pub fn make(name: &str, params: &crate::options::Params, paths: &[&str]) -> Result<AnyPm, crate::options::OptionError> {
    let info = check(name, params, paths)?;
    let o = crate::options::Opts { component: info.name, options: info.options, given: params };
    Ok(match name {
        "fullmesh" => AnyPm::FullMesh(FullMesh),
        "default" => AnyPm::Single(SingleSubflow),
        // `check` bounds the value to 1..=MAX_SUBFLOWS.
        "ndiffports" => AnyPm::NDiffPorts(NDiffPorts { subflows: o.int("subflows") as u32 }),
        // `check` bounds both limits to 0..=8.
        "in_kernel" => AnyPm::InKernel(InKernel { subflows_max: o.int("subflows_limit") as u32, add_addr_accept_max: o.int("add_addr_accepted") as u32, fullmesh: o.bool("fullmesh") }),
        // `check` matched every name in `sp` against `paths`; no `sp` = SP* is every path.
        "pcdc" => AnyPm::Pcdc(Pcdc {
            data: match o.paths("sp") {
            Some(sp) => paths.iter().map(|p| sp.iter().any(|x| x == p)).collect(),
            None => vec![true; paths.len()],
        }, withhold: {
            let w = o.paths("withhold").unwrap_or_default();
            paths.iter().enumerate().filter(|(_, p)| w.iter().any(|x| x == *p)).map(|(i, _)| i).collect()
        }, withhold_at: o.paths("withhold").map(|_| crate::units::SimTime::from_ms(o.int("withhold_at_ms") as u64)) }),
        _ => unreachable!("{name} is in the registry but has no constructor"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fullmesh_opens_one_subflow_per_other_path() {
        // §5.1: 2 client x 2 server addresses = 4 paths -> 3 joins besides the initial one.
        let mut out = vec![];
        FullMesh.on_established(4, 2, &[false; 4], &mut out);
        let paths: Vec<usize> = out.iter().map(|a| match a { PmAction::OpenSubflow { path, .. } | PmAction::SetBackup { path, .. } => *path }).collect();
        assert_eq!(paths, vec![0, 1, 3]);
    }

    #[test]
    fn ndiffports_opens_the_missing_subflows_on_the_initial_path() {
        // §5.2: num_subflows 4 -> 3 joins besides the initial subflow, all on its path.
        let mut pm = make("ndiffports", &[("subflows".to_string(), crate::options::OptValue::Int(4))].into_iter().collect(), &[]).unwrap();
        let mut out = vec![];
        pm.on_established(3, 1, &[false, true, false], &mut out);
        assert_eq!(out, vec![PmAction::OpenSubflow { path: 1, backup: true }; 3]);
        // The kernel default, 2 subflows in total: one join.
        let mut out = vec![];
        make("ndiffports", &Default::default(), &[]).unwrap().on_established(1, 0, &[false], &mut out);
        assert_eq!(out, vec![PmAction::OpenSubflow { path: 0, backup: false }]);
        // One subflow: nothing to open.
        let mut out = vec![];
        NDiffPorts { subflows: 1 }.on_established(1, 0, &[false], &mut out);
        assert!(out.is_empty());
        assert!(check("ndiffports", &[("subflows".to_string(), crate::options::OptValue::Int(0))].into_iter().collect(), &[]).is_err());
    }

    fn params(sp: &[&str]) -> crate::options::Params {
        [("sp".to_string(), crate::options::OptValue::List(sp.iter().map(|s| s.to_string()).collect()))].into_iter().collect()
    }

    #[test]
    fn pcdc_opens_paths_outside_sp_star_as_backup_and_demotes_an_excluded_initial_path() {
        // §5.5: SP* = {a, c} of paths a, b, c -> b opens as backup (standby).
        let mut pm = make("pcdc", &params(&["a", "c"]), &["a", "b", "c"]).unwrap();
        let mut out = vec![];
        pm.on_established(3, 0, &[false; 3], &mut out);
        assert_eq!(out, vec![PmAction::OpenSubflow { path: 1, backup: true }, PmAction::OpenSubflow { path: 2, backup: false }]);
        // The initial subflow on b (not in SP*) becomes standby before it sends data.
        let mut out = vec![];
        pm.on_established(3, 1, &[false; 3], &mut out);
        assert_eq!(out, vec![PmAction::SetBackup { path: 1, backup: true }, PmAction::OpenSubflow { path: 0, backup: false }, PmAction::OpenSubflow { path: 2, backup: false }]);
        // A scenario's backup path in SP* stays backup.
        let mut out = vec![];
        pm.on_established(3, 0, &[false, false, true], &mut out);
        assert_eq!(out[1], PmAction::OpenSubflow { path: 2, backup: true });
    }

    #[test]
    fn pcdc_without_sp_opens_what_fullmesh_opens() {
        for initial in 0..3 {
            let (mut a, mut b) = (vec![], vec![]);
            make("pcdc", &Default::default(), &["a", "b", "c"]).unwrap().on_established(3, initial, &[false, true, false], &mut a);
            FullMesh.on_established(3, initial, &[false, true, false], &mut b);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn pcdc_rejects_unknown_duplicate_empty_and_non_list_sp() {
        let e = check("pcdc", &params(&["a", "x"]), &["a", "b"]).err().unwrap();
        assert_eq!(e.option.as_deref(), Some("sp"));
        assert!(e.message.contains("\"x\" is not one of this connection's paths: a, b"), "{}", e.message);
        assert!(check("pcdc", &params(&["a", "a"]), &["a", "b"]).err().unwrap().message.contains("listed twice"));
        assert!(check("pcdc", &params(&[]), &["a", "b"]).err().unwrap().message.contains("at least one"));
        let text: crate::options::Params = [("sp".to_string(), crate::options::OptValue::Text("a".into()))].into_iter().collect();
        assert!(check("pcdc", &text, &["a"]).err().unwrap().message.contains("a list of path names"));
    }
}

#[cfg(test)]
mod pcdc_timeout_tests {
    use super::*;

    #[test]
    fn pcdc_withholds_the_named_paths_once_at_the_given_time() {
        let p: crate::options::Params = [
            ("withhold".to_string(), crate::options::OptValue::List(vec!["b".into()])),
            ("withhold_at_ms".to_string(), crate::options::OptValue::Int(10_000)),
        ]
        .into_iter()
        .collect();
        let mut pm = make("pcdc", &p, &["a", "b"]).unwrap();
        assert_eq!(pm.poll_timeout(), Some(crate::units::SimTime::from_secs(10)));
        let mut out = vec![];
        pm.on_established(2, 0, &[false, false], &mut out);
        assert_eq!(out, vec![PmAction::OpenSubflow { path: 1, backup: false }], "b carries data until T");
        out.clear();
        pm.handle_timeout(crate::units::SimTime::from_secs(10), &mut out);
        assert_eq!(out, vec![PmAction::SetBackup { path: 1, backup: true }]);
        assert_eq!(pm.poll_timeout(), None);
        // Without `withhold` there is no timeout.
        assert_eq!(make("pcdc", &Default::default(), &["a"]).unwrap().poll_timeout(), None);
    }
}
