//! The catalogue of congestion controllers: what a scenario may name, each one's
//! options, and where it departs from its source. `mptcplab list --markdown` prints
//! this table, so the documentation cannot drift from the code.

use std::collections::BTreeMap;

use super::{AnyCc, Bbr, Cubic, Reno};

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
#[derive(Clone, Copy, Debug)]
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
        name: "bbr",
        kind: Kind::Uncoupled,
        description: "BBR v1 with pacing and delivery-rate estimation, per subflow",
        source: "Cardwell et al. 2016; Linux 4.14 tcp_bbr.c + tcp_rate.c (MPTCP v0.94)",
        departures: "TSO not modelled (its cwnd budget is kept); ACK-aggregation model (Linux >= 5.1) off by default; no 1 % pacing margin (Linux >= 4.20) by default",
        options: BBR_OPTIONS,
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
        _ => unreachable!("{name} is in the registry but has no constructor"),
    })
}

/// A controller with all its defaults (tests, benchmarks).
pub fn make_default(name: &str) -> Option<AnyCc> { make(name, &CcParams::new()).ok() }

/// The catalogue as JSON (for the Python front end).
pub fn catalogue_json() -> String {
    let v: Vec<serde_json::Value> = REGISTRY
        .iter()
        .map(|c| {
            let opts: Vec<serde_json::Value> = c
                .options
                .iter()
                .map(|o| {
                    let values = match o.kind {
                        OptKind::Bool => "true | false".to_string(),
                        OptKind::Int { min, max } => format!("integer {min}..{max}"),
                        OptKind::Choice(cs) => cs.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(" | "),
                    };
                    serde_json::json!({"name": o.name, "values": values, "default": o.default, "description": o.description})
                })
                .collect();
            serde_json::json!({"name": c.name, "kind": c.kind.as_str(), "description": c.description, "source": c.source, "departures": c.departures, "options": opts})
        })
        .collect();
    serde_json::Value::Array(v).to_string()
}

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
