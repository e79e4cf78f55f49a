//! The catalogue of congestion controllers: what a scenario may name, each one's
//! options, and where it departs from its source. `mptcplab list --markdown` prints
//! this table, so the documentation cannot drift from the code.

pub use crate::options::{OptKind, OptValue, OptionSpec as CcOption, Opts};
use crate::options::{OptionError, Params};

use super::lia::BestPath;
use super::multipath::{Growth, Kernel};
use super::olia::{OliaBest, Paths};
use super::{AnyCc, Balia, Bbr, Cubic, Hybla, Lia, Olia, RenoCc, Scalable, Vegas, WVegas};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One controller per subflow, blind to its siblings.
    Uncoupled,
    /// Reads its siblings through `Coupling`.
    Coupled,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Uncoupled => "uncoupled",
            Kind::Coupled => "coupled",
        }
    }
}

#[derive(Debug)]
pub struct CcInfo {
    pub name: &'static str,
    pub kind: Kind,
    pub description: &'static str,
    /// The paper, RFC or kernel file the implementation follows.
    pub source: &'static str,
    /// Where the default behaviour departs from the paper, and why.
    pub departures: &'static str,
    pub options: &'static [CcOption],
}

impl CcInfo {
    pub fn option(&self, name: &str) -> Option<&'static CcOption> { self.options.iter().find(|o| o.name == name) }
}

/// Options a scenario gives a controller (`cc_options`), by name.
pub type CcParams = Params;
/// A bad controller name or option. `option` is None when the name is unknown.
pub type CcError = OptionError;

/// Options every coupled controller of the out-of-tree kernel shares.
pub const GROWTH: CcOption = CcOption {
    name: "growth",
    kind: OptKind::Choice(&["per_ack", "per_packet"]),
    default: "per_ack",
    description: "congestion-avoidance growth per ACK (out-of-tree Linux ignores `acked`) or per acked packet (the papers)",
};

pub const REGISTRY: &[CcInfo] = &[
    CcInfo {
        name: "reno",
        kind: Kind::Uncoupled,
        description: "NewReno AIMD, per subflow",
        source: "RFC 5681; Linux tcp_cong.c (tcp_reno_cong_avoid)",
        departures: "none",
        options: &[CcOption {
            name: "growth",
            kind: OptKind::Choice(&["per_packet", "per_ack"]),
            default: "per_packet",
            description: "per_packet: Linux >= 4.0 (+1 per cwnd packets acked); per_ack: Linux 3.13-3.17, the default under tcp.base_kernel = \"3.14\" (+1 per cwnd ACKs, slow start while cwnd <= ssthresh up to ssthresh + 1)",
        }],
    },
    CcInfo {
        name: "cubic",
        kind: Kind::Uncoupled,
        description: "CUBIC with HyStart, per subflow",
        source: "RFC 9438; Linux tcp_cubic.c (C = 410/1024, beta = 717/1024)",
        departures: "none (Linux fixed-point constants)",
        options: &[
            CcOption { name: "hystart", kind: OptKind::Bool, default: "true", description: "HyStart ACK-train and delay exits from slow start" },
            CcOption { name: "fast_convergence", kind: OptKind::Bool, default: "true", description: "lower W_max when a loss comes before the previous W_max" },
            CcOption { name: "hystart_round_on_ack", kind: OptKind::Bool, default: "false", description: "Linux >= 5.16 HyStart: rounds restart on every RTT sample, cwnd-limited or not, and the ACK train allows hystart_ack_delay (the upstream profile sets it)" },
        ],
    },
    CcInfo {
        name: "hybla",
        kind: Kind::Uncoupled,
        description: "Hybla: Reno growth normalised to a reference RTT, per subflow",
        source: "Caini & Firrincieli, Int. J. Satellite Commun. 2004; Linux tcp_hybla.c",
        departures: "Linux integer arithmetic: ρ = SRTT/rtt0 in 1/8 steps, floored at 1 and following the minimum SRTT only; \
            slow start adds 2^min(ρ,16)·2^(k/8) − 1 per ACK from an 8-entry table; congestion avoidance adds ⌊128ρ²/cwnd⌋/128 per ACK \
            (ρ = 1 with 64 < cwnd ≤ 128 grows 1/128 per ACK, slower than Reno; 0 above 128 falls back to +1 per cwnd ACKs); \
            per ACK, not per packet; initial cwnd = ⌊ρ⌋ (1 below 2·rtt0); cwnd_clamp 65535; Reno outside CA state Open. \
            None of the paper's pacing or bandwidth-estimated ssthresh",
        options: &[CcOption {
            name: "rtt0_ms",
            kind: OptKind::Int { min: 1, max: 4_294_967 },
            default: "25",
            description: "reference RTT in ms (Linux module parameter rtt0)",
        }],
    },
    CcInfo {
        name: "scalable",
        kind: Kind::Uncoupled,
        description: "Scalable TCP: MIMD, +1 per min(cwnd, ai_cnt) and ×7/8 on loss, per subflow",
        source: "Kelly, ACM CCR 2003; Linux tcp_scalable.c",
        departures: "paper: +0.01 per ACKed packet, ×0.875 on loss, Reno below a legacy window of 16. \
            Linux adds 1 per min(cwnd, ai_cnt) and so is Reno below ai_cnt. \
            ai_cnt < 100 (default 50) is Linux before 5.7 (the seed kernels 4.x): it counts ACKs, not packets \
            (0.02 per ACK ≈ 0.01 per packet with delayed ACKs), and an ACK in slow start only slow-starts, \
            dropping packets ACKed beyond ssthresh. ai_cnt ≥ 100 is Linux ≥ 5.7: counts ACKed packets and feeds \
            the slow-start leftover to congestion avoidance",
        options: &[CcOption {
            name: "ai_cnt",
            kind: OptKind::Int { min: 1, max: 1_000_000 },
            default: "50",
            description: "+1 packet per min(cwnd, ai_cnt) units (Linux TCP_SCALABLE_AI_CNT); < 100 counts ACKs as Linux 4.x, ≥ 100 packets as Linux ≥ 5.7",
        }],
    },
    CcInfo {
        name: "vegas",
        kind: Kind::Uncoupled,
        description: "Vegas: delay-based, keeps alpha..beta own packets queued, per subflow",
        source: "Brakmo & Peterson, IEEE JSAC 1995; Linux tcp_vegas.c",
        departures: "Linux Vegas: diff = cwnd·(minRTT − baseRTT)/baseRTT in integer packets (paper: cwnd·(RTT − baseRTT)/RTT); \
            RTT is the minimum sample of the last RTT (paper: mean), each sample + 1 µs; baseRTT is forgotten after idle; \
            Reno growth in a round with fewer than 3 RTT samples; slow start doubles every RTT (paper: every other) \
            and exits to cwnd = ⌊cwnd·baseRTT/RTT⌋ + 1 when diff > gamma; loss recovery and ssthresh as Reno (paper: 3/4 on loss); \
            Reno outside CA state Open",
        options: &[
            CcOption { name: "alpha", kind: OptKind::Int { min: 0, max: 1_000_000 }, default: "2", description: "grow cwnd by 1 per RTT while fewer than alpha own packets are queued" },
            CcOption { name: "beta", kind: OptKind::Int { min: 0, max: 1_000_000 }, default: "4", description: "shrink cwnd by 1 per RTT while more than beta own packets are queued" },
            CcOption { name: "gamma", kind: OptKind::Int { min: 0, max: 1_000_000 }, default: "1", description: "leave slow start when more than gamma own packets are queued" },
        ],
    },
    CcInfo {
        name: "bbr",
        kind: Kind::Uncoupled,
        description: "BBR v1 with pacing and delivery-rate estimation, per subflow",
        source: "Cardwell et al. 2016; Linux 4.14 tcp_bbr.c + tcp_rate.c (MPTCP v0.94)",
        departures: "TSO not modelled (its cwnd budget is kept); ACK-aggregation model (Linux >= 5.1) off by default; no 1 % pacing margin (Linux >= 4.20) by default",
        options: BBR_OPTIONS,
    },
    CcInfo {
        name: "lia",
        kind: Kind::Coupled,
        description: "Linked Increases: coupled increase, Reno decrease",
        source: "RFC 6356; out-of-tree Linux MPTCP v0.95 net/mptcp/mptcp_coupled.c (\"lia\")",
        departures: "per-ACK counting (`growth`); +1 packet per thresh+1 ACKs (Linux counter), so even one subflow grows slightly slower than Reno; \
            the best path maximises (cwnd << 32) / srtt_us² with srtt_us in 1/8 µs, which is 0 for RTT > 8.2 ms·√cwnd, and then the last subflow wins (`best_path`); \
            alpha kept ×2^12 / cwnd_total, so it is coarse for large windows; v0.95 computes alpha even for one subflow (v0.94: Reno, `kernel`)",
        options: &[
            GROWTH,
            CcOption { name: "kernel", kind: OptKind::Choice(&["v0.95", "v0.94"]), default: "v0.95", description: "v0.94 falls back to Reno (alpha = 1) with at most one established subflow; v0.95 computes alpha from the subflows that can send" },
            CcOption { name: "best_path", kind: OptKind::Choice(&["linux", "exact"]), default: "linux", description: "best path (max cwnd/rtt²) by Linux's integer quotient, which underflows at WAN RTTs, or by an exact comparison (RFC 6356)" },
        ],
    },
    CcInfo {
        name: "olia",
        kind: Kind::Coupled,
        description: "Opportunistic Linked Increases: coupled increase plus a transfer term from max-window paths to best paths",
        source: "Khalili et al., CoNEXT 2012 / IEEE/ACM ToN 2013; out-of-tree Linux MPTCP v0.95 net/mptcp/mptcp_olia.c",
        departures: "per-ACK counting (`growth`); change accumulated ×2^10 and applied as ±1 packet at ±1023; \
            l_p = max(bytes acked since the last loss, previous inter-loss distance); window of a path in Recovery is its ssthresh; \
            the path count in epsilon = ±1/(paths·count) is the subflows that can send (v0.95; v0.94: all established, `paths`); the best-path test wraps in u64 for large l_p·srtt² (`best_path`)",
        options: &[
            GROWTH,
            CcOption { name: "paths", kind: OptKind::Choice(&["considered", "established"]), default: "considered", description: "which subflows the path count in epsilon = ±1/(paths·count) counts: those that can send and have an RTT sample (v0.95 established_cnt) or all established subflows (v0.94 cnt_established)" },
            CcOption { name: "best_path", kind: OptKind::Choice(&["linux", "exact"]), default: "linux", description: "best paths (max l_p/rtt_p²) by Linux's u64 cross products, which wrap for large l_p, or exactly" },
        ],
    },
    CcInfo {
        name: "balia",
        kind: Kind::Coupled,
        description: "Balanced Linked Adaptation: coupled increase and coupled decrease",
        source: "Peng, Walid, Hwang, Low, IEEE/ACM ToN 24(1) 2016; out-of-tree Linux MPTCP v0.95 net/mptcp/mptcp_balia.c",
        departures: "per-ACK counting (`growth`); increase as +1 packet per ai+1 ACKs with ai floored; \
            alpha = max_rate / x_r floored, so min(alpha, 1.5) is 1 or 1.5 (`integer_ratio`); decrease md = ⌊cwnd/2⌋·min(alpha,1.5) floored, ssthresh = max(cwnd − md, 1) even for one subflow (v0.94: Reno, `kernel`); \
            ai/md refreshed only in slow start, after an increment and at COMPLETE_CWR/LOSS (the lazy update after set_state never fires in Linux)",
        options: &[
            GROWTH,
            CcOption { name: "kernel", kind: OptKind::Choice(&["v0.95", "v0.94"]), default: "v0.95", description: "v0.94 behaves as Reno (increase and ssthresh) with at most one established subflow; v0.95 always uses ai and md" },
            CcOption { name: "integer_ratio", kind: OptKind::Bool, default: "true", description: "floor alpha = max_rate/x_r in the decrease min(alpha, 1.5) as Linux; false uses the real ratio (the paper)" },
        ],
    },
    CcInfo {
        name: "wvegas",
        kind: Kind::Coupled,
        description: "weighted Vegas: delay-based, each subflow's backlog target is its rate share of 10 packets",
        source: "Cao, Xu, Fu, IEEE ICNP 2012; out-of-tree Linux MPTCP v0.94/v0.95 net/mptcp/mptcp_wvegas.c",
        departures: "Linux specifics: mean (not Vegas' min) RTT of the round, one threshold alpha (no beta), alpha recomputed only when diff ≥ alpha; \
            the queue drain cwnd ·= base/(2·rtt) when the queueing delay doubles, which also fires every round when it is 0 (`zero_queue_halving`); \
            runs its delay logic on plain TCP too (weight 1); Reno outside the Open state",
        options: &[
            CcOption { name: "zero_queue_halving", kind: OptKind::Bool, default: "true", description: "Linux halves cwnd every congestion-avoidance round when mean RTT = base RTT (q = 0 ≥ 2·0); false skips the drain when q = 0" },
        ],
    },
    CcInfo {
        name: "coupled_bbr",
        kind: Kind::Coupled,
        description: "Coupled BBR: BBR whose six steady PROBE_BW phases pace at alpha_i = (4 beta_i - 1)/3",
        source: "seed 004 (Han et al., IEEE TWC 2021) Sec. IV, Eq. 1-2, Algorithm 1; BBR as `bbr`",
        departures: "six alpha phases (Algorithm 1; the prose's seven is a typo); every PROBE_BW phase lasts one smoothed RTT (the seed's 8-RTT cycle; Linux: min_rtt) and alpha phases never end early (Linux ends gains < 1 early); beta recomputed on every ACK of the subflow; alpha <= 0 paces 4 packets per min_rtt",
        options: COUPLED_BBR_OPTIONS,
    },
];

const COUPLED_BBR_OPTIONS: &[CcOption] = &[
    BBR_OPTIONS[0],
    BBR_OPTIONS[1],
    BBR_OPTIONS[2],
    BBR_OPTIONS[3],
    BBR_OPTIONS[4],
    CcOption { name: "phase_length", kind: OptKind::Choice(&["srtt", "min_rtt"]), default: "srtt", description: "length of each PROBE_BW phase: the smoothed RTT (the seed's \"each RTT of a cycle\") or min_rtt (Linux BBR); with min_rtt under a standing queue the alpha phases drag the delivery-rate samples of the next probe down and the connection's bandwidth estimate collapses" },
];

const BBR_OPTIONS: &[CcOption] = &[
    CcOption { name: "lt_bw", kind: OptKind::Bool, default: "true", description: "long-term (policer) bandwidth model, on in Linux" },
    CcOption { name: "ack_aggregation", kind: OptKind::Bool, default: "false", description: "ACK-aggregation cwnd allowance (Linux >= 5.1; absent in 4.14)" },
    CcOption { name: "pacing_margin_percent", kind: OptKind::Int { min: 0, max: 10 }, default: "0", description: "pace this much below gain*bw (Linux >= 4.20 uses 1)" },
    CcOption { name: "min_rtt_strict", kind: OptKind::Bool, default: "false", description: "an equal RTT does not refresh the min-RTT filter (`<`, Linux >= 5.10); 4.14 uses `<=`" },
    CcOption { name: "tso_budget", kind: OptKind::Bool, default: "true", description: "add Linux's 3*tso_segs_goal quantization budget to the cwnd target" },
];

pub fn info(name: &str) -> Option<&'static CcInfo> { REGISTRY.iter().find(|c| c.name == name) }

/// Check `params` against the registry: known names, right types, values in range.
pub fn validate(name: &str, params: &CcParams) -> Result<&'static CcInfo, CcError> {
    let info = info(name).ok_or_else(|| crate::options::unknown("congestion control", name, REGISTRY.iter().map(|c| c.name)))?;
    crate::options::check(name, info.options, params)?;
    Ok(info)
}

/// Build a controller by name with options (validated here).
pub fn make(name: &str, params: &CcParams) -> Result<AnyCc, CcError> {
    let info = validate(name, params)?;
    let o = Opts { component: info.name, options: info.options, given: params };
    Ok(match name {
        "reno" => AnyCc::Reno(RenoCc { per_ack: o.choice("growth") == "per_ack" }),
        "cubic" => {
            let mut c = Cubic::new();
            c.hystart = o.bool("hystart");
            c.fast_convergence = o.bool("fast_convergence");
            c.hystart_round_on_ack = o.bool("hystart_round_on_ack");
            AnyCc::Cubic(c)
        }
        // Ranges are validated above, so the casts cannot truncate.
        "hybla" => AnyCc::Hybla(Hybla::new(o.int("rtt0_ms") as u32)),
        "scalable" => AnyCc::Scalable(Scalable::new(o.int("ai_cnt") as u32)),
        "vegas" => AnyCc::Vegas(Vegas::new(o.int("alpha") as u32, o.int("beta") as u32, o.int("gamma") as u32)),
        "bbr" | "coupled_bbr" => {
            let mut b = Bbr::new(name == "coupled_bbr");
            b.lt_bw_model = o.bool("lt_bw");
            b.ack_aggregation = o.bool("ack_aggregation");
            b.pacing_margin_percent = o.int("pacing_margin_percent") as u64;
            b.min_rtt_strict = o.bool("min_rtt_strict");
            b.tso_budget = o.bool("tso_budget");
            if name == "coupled_bbr" {
                b.phase_srtt = o.choice("phase_length") == "srtt";
            }
            AnyCc::Bbr(Box::new(b))
        }
        "lia" => AnyCc::Lia(Lia {
            growth: Growth::from_choice(&o.choice("growth")),
            kernel: Kernel::from_choice(&o.choice("kernel")),
            best_path: BestPath::from_choice(&o.choice("best_path")),
        }),
        "olia" => {
            let mut c = Olia::default();
            c.growth = Growth::from_choice(&o.choice("growth"));
            c.paths = if o.choice("paths") == "established" { Paths::Established } else { Paths::Considered };
            c.best_path = if o.choice("best_path") == "exact" { OliaBest::Exact } else { OliaBest::Linux };
            AnyCc::Olia(c)
        }
        "balia" => {
            let mut c = Balia::default();
            c.growth = Growth::from_choice(&o.choice("growth"));
            c.kernel = Kernel::from_choice(&o.choice("kernel"));
            c.integer_ratio = o.bool("integer_ratio");
            AnyCc::Balia(c)
        }
        "wvegas" => {
            let mut c = WVegas::default();
            c.zero_queue_halving = o.bool("zero_queue_halving");
            AnyCc::WVegas(c)
        }
        _ => unreachable!("{name} is in the registry but has no constructor"),
    })
}

/// A controller with all its defaults (tests, benchmarks).
pub fn make_default(name: &str) -> Option<AnyCc> { make(name, &CcParams::new()).ok() }

/// The catalogue as JSON (for the Python front end).
pub fn catalogue_json() -> String {
    let v: Vec<serde_json::Value> = REGISTRY
        .iter()
        .map(|c| serde_json::json!({"name": c.name, "kind": c.kind.as_str(), "description": c.description, "source": c.source, "departures": c.departures, "options": crate::options::json(c.options)}))
        .collect();
    serde_json::Value::Array(v).to_string()
}

/// The algorithm table as Markdown (`mptcplab list --markdown`).
pub fn markdown_table() -> String {
    let mut s = String::from("| name | kind | source | departures from the source | options (default) |\n|---|---|---|---|---|\n");
    for c in REGISTRY {
        let cell = |t: &str| t.replace('|', "\\|").replace('\n', " ");
        s.push_str(&format!("| `{}` | {} | {} | {} | {} |\n", c.name, c.kind.as_str(), cell(c.source), cell(c.departures), crate::options::markdown_cell(c.options)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_controller_builds_with_its_defaults_and_reports_its_name() {
        use super::super::CongestionControl;
        for c in REGISTRY {
            let cc = make_default(c.name).unwrap_or_else(|| panic!("{} does not build", c.name));
            assert_eq!(cc.name(), c.name);
            assert_eq!(cc.needs_coupling(), c.kind == Kind::Coupled, "{}", c.name);
            for o in c.options {
                // Every default parses as its own kind.
                let v = match o.kind {
                    OptKind::Bool => OptValue::Bool(o.default == "true"),
                    OptKind::Int { .. } => OptValue::Int(o.default.parse().unwrap()),
                    OptKind::Choice(_) => OptValue::Text(o.default.into()),
                    OptKind::Paths => unreachable!("no controller takes a path list"),
                };
                let mut p = CcParams::new();
                p.insert(o.name.into(), v);
                make(c.name, &p).unwrap_or_else(|e| panic!("{}.{}: {}", c.name, o.name, e.message));
            }
        }
    }

    #[test]
    fn bad_names_and_options_name_the_option_and_what_was_expected() {
        let e = make("nope", &CcParams::new()).err().unwrap();
        assert_eq!(e.option, None);
        assert!(e.message.contains("expected one of") && e.message.contains("cubic"), "{}", e.message);
        let mut p = CcParams::new();
        p.insert("warp".into(), OptValue::Bool(true));
        let e = make("cubic", &p).err().unwrap();
        assert_eq!(e.option.as_deref(), Some("warp"));
        assert!(e.message.contains("hystart"), "{}", e.message);
        let mut p = CcParams::new();
        p.insert("hystart".into(), OptValue::Int(3));
        let e = make("cubic", &p).err().unwrap();
        assert!(e.message.contains("expected true or false"), "{}", e.message);
    }

    #[test]
    fn the_markdown_table_has_a_row_per_controller() {
        let t = markdown_table();
        assert_eq!(t.lines().count(), 2 + REGISTRY.len());
        assert!(t.contains("| `cubic` | uncoupled |"));
    }
}
