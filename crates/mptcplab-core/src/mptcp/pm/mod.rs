//! Path managers: decide which subflows to open. They return actions; the connection
//! carries them out (reference `path-managers.md`).

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

pub enum AnyPm {
    FullMesh(FullMesh),
    Single(SingleSubflow),
    Dyn(Box<dyn PathManager + Send>),
}

impl PathManager for AnyPm {
    fn name(&self) -> &'static str {
        match self {
            AnyPm::FullMesh(p) => p.name(),
            AnyPm::Single(p) => p.name(),
            AnyPm::Dyn(p) => p.name(),
        }
    }
    fn on_established(&mut self, paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>) {
        match self {
            AnyPm::FullMesh(p) => p.on_established(paths, initial, backup, out),
            AnyPm::Single(p) => p.on_established(paths, initial, backup, out),
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
];

/// Check a path manager name and its options.
pub fn check(name: &str, params: &crate::options::Params) -> Result<&'static PmInfo, crate::options::OptionError> {
    let info = REGISTRY.iter().find(|s| s.name == name).ok_or_else(|| crate::options::unknown("path manager", name, REGISTRY.iter().map(|s| s.name)))?;
    crate::options::check(name, info.options, params)?;
    Ok(info)
}

pub fn make(name: &str, params: &crate::options::Params) -> Result<AnyPm, crate::options::OptionError> {
    let info = check(name, params)?;
    let _o = crate::options::Opts { component: info.name, options: info.options, given: params };
    Ok(match name {
        "fullmesh" => AnyPm::FullMesh(FullMesh),
        "default" => AnyPm::Single(SingleSubflow),
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
}
