//! The upstream Linux in-kernel path manager (`net/mptcp/pm_kernel.c`, formerly
//! `pm_netlink.c`; configured with `ip mptcp endpoint` / `ip mptcp limits`), reference
//! `path-managers.md` §5.4.
//!
//! Model: each of the connection's paths is one client address, and every one is an
//! endpoint with the `subflow` flag, in path order (endpoint ids ascending), with the
//! `backup` flag when the path is a backup path and the `fullmesh` flag when the option
//! says so. The server has one address and announces none (no `signal` endpoint), as
//! the kernel backend builds it. When the initial subflow is fully established
//! (`mptcp_pm_nl_fully_established` → `mptcp_pm_create_subflow_or_signal_addr`):
//! - the endpoint of the initial subflow's address is accounted as used (the
//!   `MPTCP_PM_MPC_ENDPOINT_ACCOUNTED` block clears its bit in `id_avail_bitmap`);
//! - while `subflows < subflows_max` (`ip mptcp limits set subflows N`, default 2),
//!   the next available `subflow` endpoint in list order (`select_local_address`)
//!   opens subflows to the remote addresses `fill_remote_addresses_vec` lists: the
//!   initial subflow's remote address, or with `fullmesh` every remote address of the
//!   existing subflows — here the same single address. Each counts one in `subflows`.
//!
//! All of them open at once (a `while` loop), not one per established join.

use super::{PathManager, PmAction};

/// `MPTCP_PM_ADDR_MAX` (pm_kernel.c): endpoints per network namespace, and the largest
/// value `ip mptcp limits` accepts.
pub const MPTCP_PM_ADDR_MAX: usize = 8;

pub struct InKernel {
    /// `subflows_max`: subflows beyond the initial one.
    pub subflows_max: u32,
    /// `add_addr_accept_max`: remote addresses announced by ADD_ADDR that are acted upon.
    pub add_addr_accept_max: u32,
    /// Every endpoint carries `MPTCP_PM_ADDR_FLAG_FULLMESH`.
    pub fullmesh: bool,
}

impl PathManager for InKernel {
    fn name(&self) -> &'static str { "in_kernel" }

    fn on_established(&mut self, paths: usize, initial: usize, backup: &[bool], out: &mut Vec<PmAction>) {
        // The peer's addresses known to the connection: the initial one only (no ADD_ADDR
        // in this model, so `add_addr_accept_max` has nothing to accept).
        let remotes = 1usize;
        let mut subflows = 0u32;
        for p in (0..paths).filter(|&p| p != initial) {
            if subflows >= self.subflows_max {
                break;
            }
            // fill_remote_addresses_vec: one subflow to the MPC remote address, or with
            // fullmesh one per remote address while `subflows < subflows_max`.
            let n = if self.fullmesh { remotes } else { 1 };
            for _ in 0..n {
                if subflows >= self.subflows_max {
                    break;
                }
                subflows += 1;
                out.push(PmAction::OpenSubflow { path: p, backup: backup.get(p).copied().unwrap_or(false) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{check, make};
    use super::*;
    use crate::options::{OptValue, Params};

    fn params(kv: &[(&str, OptValue)]) -> Params { kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect() }

    fn opened(pm_params: &Params, paths: usize, initial: usize, backup: &[bool]) -> Vec<PmAction> {
        let names: Vec<String> = (0..paths).map(|i| format!("p{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut pm = make("in_kernel", pm_params, &names).unwrap();
        let mut out = vec![];
        pm.on_established(paths, initial, backup, &mut out);
        out
    }

    #[test]
    fn the_default_limit_opens_two_subflows_beyond_the_initial_one_in_endpoint_order() {
        // Endpoints p0..p3, initial on p1 (its endpoint is accounted, not reused):
        // subflows 2 -> p0 and p2, not p3.
        let out = opened(&Params::new(), 4, 1, &[false; 4]);
        assert_eq!(out, vec![PmAction::OpenSubflow { path: 0, backup: false }, PmAction::OpenSubflow { path: 2, backup: false }]);
    }

    #[test]
    fn the_limit_caps_the_subflows_and_a_higher_limit_opens_every_endpoint() {
        // Reference §5.4 test: limit 2, three endpoints besides the initial address -> 3
        // subflows in total.
        let two = params(&[("subflows_limit", OptValue::Int(2))]);
        assert_eq!(opened(&two, 4, 0, &[false; 4]).len(), 2);
        let eight = params(&[("subflows_limit", OptValue::Int(8))]);
        assert_eq!(opened(&eight, 4, 0, &[false; 4]).len(), 3);
        let zero = params(&[("subflows_limit", OptValue::Int(0))]);
        assert!(opened(&zero, 4, 0, &[false; 4]).is_empty());
        // fullmesh towards the single server address: the same subflows.
        let fm = params(&[("subflows_limit", OptValue::Int(8)), ("fullmesh", OptValue::Bool(true))]);
        assert_eq!(opened(&fm, 4, 0, &[false; 4]), opened(&eight, 4, 0, &[false; 4]));
    }

    #[test]
    fn backup_endpoints_open_backup_subflows() {
        let out = opened(&Params::new(), 3, 0, &[false, true, false]);
        assert_eq!(out, vec![PmAction::OpenSubflow { path: 1, backup: true }, PmAction::OpenSubflow { path: 2, backup: false }]);
    }

    #[test]
    fn limits_above_the_kernel_maximum_and_too_many_endpoints_are_refused() {
        let e = check("in_kernel", &params(&[("subflows_limit", OptValue::Int(9))]), &["a"]).err().unwrap();
        assert_eq!(e.option.as_deref(), Some("subflows_limit"));
        assert!(e.message.contains("[0, 8]"), "{}", e.message);
        let e = check("in_kernel", &params(&[("add_addr_accepted", OptValue::Int(-1))]), &["a"]).err().unwrap();
        assert_eq!(e.option.as_deref(), Some("add_addr_accepted"));
        let e = check("in_kernel", &params(&[("fullmesh", OptValue::Int(1))]), &["a"]).err().unwrap();
        assert_eq!(e.option.as_deref(), Some("fullmesh"));
        let nine: Vec<String> = (0..9).map(|i| format!("p{i}")).collect();
        let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
        let e = check("in_kernel", &Params::new(), &nine).err().unwrap();
        assert_eq!(e.option, None);
        assert!(e.message.contains("at most 8"), "{}", e.message);
    }
}
