//! The catalogue of congestion controllers: what a scenario may name, each one's
//! options, and where it departs from its source. `mptcplab list --markdown` prints
//! this table, so the documentation cannot drift from the code.

use std::collections::BTreeMap;

use super::lia::BestPath;
use super::multipath::{Growth, Kernel};
use super::olia::{OliaBest, Paths};
use super::{AnyCc, Balia, Cubic, Lia, Olia, Reno, WVegas};

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

#[derive(Clone, Copy, Debug)]
pub enum OptKind {
    Bool,
    Int { min: i64, max: i64 },
    Choice(&'static [&'static str]),
}

/// One named option of a controller, with its default as it would be written in TOML.
#[derive(Debug)]
pub struct CcOption {
    pub name: &'static str,
    pub kind: OptKind,
    pub default: &'static str,
    pub description: &'static str,
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

#[derive(Clone, Debug, PartialEq)]
pub enum OptValue {
    Bool(bool),
    Int(i64),
    Text(String),
}

impl OptValue {
    fn describe(&self) -> String {
        match self {
            OptValue::Bool(b) => format!("{b}"),
            OptValue::Int(i) => format!("{i}"),
            OptValue::Text(t) => format!("{t:?}"),
        }
    }
}

/// Options a scenario gives a controller (`cc_options`), by name.
pub type CcParams = BTreeMap<String, OptValue>;

/// A bad controller name or option. `option` is None when the name is unknown.
#[derive(Clone, Debug, PartialEq)]
pub struct CcError {
    pub option: Option<String>,
    pub message: String,
}

/// Typed access to validated options, falling back to the registry's defaults.
pub struct Opts<'a> {
    info: &'static CcInfo,
    given: &'a CcParams,
}

impl Opts<'_> {
    fn value(&self, name: &str) -> OptValue {
        if let Some(v) = self.given.get(name) {
            return v.clone();
        }
        let o = self.info.option(name).unwrap_or_else(|| panic!("{} has no option {name}", self.info.name));
        match o.kind {
            OptKind::Bool => OptValue::Bool(o.default == "true"),
            OptKind::Int { .. } => OptValue::Int(o.default.parse().unwrap_or_else(|_| panic!("bad default for {name}"))),
            OptKind::Choice(_) => OptValue::Text(o.default.to_string()),
        }
    }
    pub fn bool(&self, name: &str) -> bool { matches!(self.value(name), OptValue::Bool(true)) }
    pub fn int(&self, name: &str) -> i64 {
        match self.value(name) {
            OptValue::Int(i) => i,
            _ => unreachable!("option {name} validated as an integer"),
        }
    }
    pub fn choice(&self, name: &str) -> String {
        match self.value(name) {
            OptValue::Text(t) => t,
            _ => unreachable!("option {name} validated as a choice"),
        }
    }
}

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
        options: &[],
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
        ],
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
];

pub fn info(name: &str) -> Option<&'static CcInfo> { REGISTRY.iter().find(|c| c.name == name) }

/// Check `params` against the registry: known names, right types, values in range.
pub fn validate(name: &str, params: &CcParams) -> Result<&'static CcInfo, CcError> {
    let info = info(name).ok_or_else(|| CcError {
        option: None,
        message: format!("unknown congestion control {name:?}; expected one of: {}", REGISTRY.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")),
    })?;
    for (k, v) in params {
        let Some(o) = info.option(k) else {
            let names: Vec<_> = info.options.iter().map(|o| o.name).collect();
            let known = if names.is_empty() { "it has no options".to_string() } else { format!("its options are: {}", names.join(", ")) };
            return Err(CcError { option: Some(k.clone()), message: format!("{name} has no option {k:?}; {known}") });
        };
        let bad = |want: String| Err(CcError { option: Some(k.clone()), message: format!("{name} option {k}: expected {want}, got {}", v.describe()) });
        match (o.kind, v) {
            (OptKind::Bool, OptValue::Bool(_)) => {}
            (OptKind::Bool, _) => return bad("true or false".into()),
            (OptKind::Int { min, max }, OptValue::Int(i)) if (min..=max).contains(i) => {}
            (OptKind::Int { min, max }, _) => return bad(format!("an integer in [{min}, {max}]")),
            (OptKind::Choice(cs), OptValue::Text(t)) if cs.contains(&t.as_str()) => {}
            (OptKind::Choice(cs), _) => return bad(format!("one of {}", cs.iter().map(|c| format!("{c:?}")).collect::<Vec<_>>().join(", "))),
        }
    }
    Ok(info)
}

/// Build a controller by name with options (validated here).
pub fn make(name: &str, params: &CcParams) -> Result<AnyCc, CcError> {
    let info = validate(name, params)?;
    let o = Opts { info, given: params };
    Ok(match name {
        "reno" => AnyCc::Reno(Reno),
        "cubic" => {
            let mut c = Cubic::new();
            c.hystart = o.bool("hystart");
            c.fast_convergence = o.bool("fast_convergence");
            AnyCc::Cubic(c)
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

/// The algorithm table as Markdown (`mptcplab list --markdown`).
pub fn markdown_table() -> String {
    let mut s = String::from("| name | kind | source | departures from the source | options (default) |\n|---|---|---|---|---|\n");
    for c in REGISTRY {
        let opts: Vec<String> = c.options.iter().map(|o| format!("`{}` ({}): {}", o.name, o.default, o.description)).collect();
        let opts = if opts.is_empty() { "—".to_string() } else { opts.join("<br>") };
        s.push_str(&format!("| `{}` | {} | {} | {} | {} |\n", c.name, c.kind.as_str(), c.source, c.departures, opts));
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
