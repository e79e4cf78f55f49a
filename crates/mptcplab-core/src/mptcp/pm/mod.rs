//! Path managers: decide which subflows to open. They return actions; the connection
//! carries them out (reference `path-managers.md`).

use crate::options::{OptKind, OptionSpec};

/// What a path manager asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmAction {
    /// Open a subflow (MP_JOIN) on the connection's path number `path`.
    OpenSubflow { path: usize, backup: bool },
}

pub trait PathManager {
    fn name(&self) -> &'static str;
    /// The initial subflow is fully established. `paths` is the number of paths
    /// (local address, remote address pairs) the connection may use; `initial` is the one
    /// the initial subflow runs on.
    fn on_established(&mut self, paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>);
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

pub enum AnyPm {
    FullMesh(FullMesh),
    Single(SingleSubflow),
    NDiffPorts(NDiffPorts),
    Dyn(Box<dyn PathManager + Send>),
}

impl PathManager for AnyPm {
    fn name(&self) -> &'static str {
        match self {
            AnyPm::FullMesh(p) => p.name(),
            AnyPm::Single(p) => p.name(),
            AnyPm::NDiffPorts(p) => p.name(),
            AnyPm::Dyn(p) => p.name(),
        }
    }
    fn on_established(&mut self, paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>) {
        match self {
            AnyPm::FullMesh(p) => p.on_established(paths, initial, backup, out),
            AnyPm::Single(p) => p.on_established(paths, initial, backup, out),
            AnyPm::NDiffPorts(p) => p.on_established(paths, initial, backup, out),
            AnyPm::Dyn(p) => p.on_established(paths, initial, backup, out),
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
];

/// Check a path manager name and its options.
pub fn check(name: &str, params: &crate::options::Params) -> Result<&'static PmInfo, crate::options::OptionError> {
    let info = REGISTRY.iter().find(|s| s.name == name).ok_or_else(|| crate::options::unknown("path manager", name, REGISTRY.iter().map(|s| s.name)))?;
    crate::options::check(name, info.options, params)?;
    Ok(info)
}

pub fn make(name: &str, params: &crate::options::Params) -> Result<AnyPm, crate::options::OptionError> {
    let info = check(name, params)?;
    let o = crate::options::Opts { component: info.name, options: info.options, given: params };
    Ok(match name {
        "fullmesh" => AnyPm::FullMesh(FullMesh),
        "default" => AnyPm::Single(SingleSubflow),
        // `check` bounds the value to 1..=MAX_SUBFLOWS.
        "ndiffports" => AnyPm::NDiffPorts(NDiffPorts { subflows: o.int("subflows") as u32 }),
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
        let paths: Vec<usize> = out.iter().map(|PmAction::OpenSubflow { path, .. }| *path).collect();
        assert_eq!(paths, vec![0, 1, 3]);
    }

    #[test]
    fn ndiffports_opens_the_missing_subflows_on_the_initial_path() {
        // §5.2: num_subflows 4 -> 3 joins besides the initial subflow, all on its path.
        let mut pm = make("ndiffports", &[("subflows".to_string(), crate::options::OptValue::Int(4))].into_iter().collect()).unwrap();
        let mut out = vec![];
        pm.on_established(3, 1, &[false, true, false], &mut out);
        assert_eq!(out, vec![PmAction::OpenSubflow { path: 1, backup: true }; 3]);
        // The kernel default, 2 subflows in total: one join.
        let mut out = vec![];
        make("ndiffports", &Default::default()).unwrap().on_established(1, 0, &[false], &mut out);
        assert_eq!(out, vec![PmAction::OpenSubflow { path: 0, backup: false }]);
        // One subflow: nothing to open.
        let mut out = vec![];
        NDiffPorts { subflows: 1 }.on_established(1, 0, &[false], &mut out);
        assert!(out.is_empty());
        assert!(check("ndiffports", &[("subflows".to_string(), crate::options::OptValue::Int(0))].into_iter().collect()).is_err());
    }
}
