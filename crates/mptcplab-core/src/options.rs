//! Named options of a component (congestion control, scheduler, path manager): each
//! registry entry lists its options with kinds and defaults; a scenario's
//! `cc_options` / `scheduler_options` / `path_manager_options` table is checked against
//! that list, and the constructor reads typed values through `Opts`.

use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug)]
pub enum OptKind {
    Bool,
    Int { min: i64, max: i64 },
    Choice(&'static [&'static str]),
    /// A non-empty list of distinct path names of the connection (a TOML array of
    /// strings). `check` sees only the list; `check_paths` matches the names against
    /// the connection's paths once they are known.
    Paths,
}

/// One named option, with its default as it would be written in TOML.
#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptKind,
    pub default: &'static str,
    pub description: &'static str,
}

impl OptionSpec {
    /// The accepted values, for tables and error messages.
    pub fn values(&self) -> String {
        match self.kind {
            OptKind::Bool => "true | false".to_string(),
            OptKind::Int { min, max } => format!("integer {min}..{max}"),
            OptKind::Choice(cs) => cs.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(" | "),
            OptKind::Paths => "list of the connection's path names".to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum OptValue {
    Bool(bool),
    Int(i64),
    Text(String),
    List(Vec<String>),
}

impl OptValue {
    fn describe(&self) -> String {
        match self {
            OptValue::Bool(b) => format!("{b}"),
            OptValue::Int(i) => format!("{i}"),
            OptValue::Text(t) => format!("{t:?}"),
            OptValue::List(l) => format!("{l:?}"),
        }
    }

    /// From a scenario's JSON value.
    pub fn from_json(v: &serde_json::Value) -> Result<OptValue, String> {
        match v {
            serde_json::Value::Bool(b) => Ok(OptValue::Bool(*b)),
            serde_json::Value::String(t) => Ok(OptValue::Text(t.clone())),
            serde_json::Value::Number(n) => n.as_i64().map(OptValue::Int).ok_or_else(|| format!("expected an integer, got {n}")),
            serde_json::Value::Array(xs) => xs
                .iter()
                .map(|x| x.as_str().map(str::to_string).ok_or_else(|| format!("expected a list of strings, got {x} in it")))
                .collect::<Result<Vec<_>, _>>()
                .map(OptValue::List),
            other => Err(format!("expected a boolean, integer, string or list of strings, got {other}")),
        }
    }
}

/// Options given to a component, by name.
pub type Params = BTreeMap<String, OptValue>;

/// A bad component name or option. `option` is None when the name is unknown.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionError {
    pub option: Option<String>,
    pub message: String,
}

/// Check `params` against a component's option list: known names, right types, values
/// in range. `name` is the component's name, for messages.
pub fn check(name: &str, options: &[OptionSpec], params: &Params) -> Result<(), OptionError> {
    for (k, v) in params {
        let Some(o) = options.iter().find(|o| o.name == k) else {
            let names: Vec<_> = options.iter().map(|o| o.name).collect();
            let known = if names.is_empty() { "it has no options".to_string() } else { format!("its options are: {}", names.join(", ")) };
            return Err(OptionError { option: Some(k.clone()), message: format!("{name} has no option {k:?}; {known}") });
        };
        let bad = |want: String| Err(OptionError { option: Some(k.clone()), message: format!("{name} option {k}: expected {want}, got {}", v.describe()) });
        match (o.kind, v) {
            (OptKind::Bool, OptValue::Bool(_)) => {}
            (OptKind::Bool, _) => return bad("true or false".into()),
            (OptKind::Int { min, max }, OptValue::Int(i)) if (min..=max).contains(i) => {}
            (OptKind::Int { min, max }, _) => return bad(format!("an integer in [{min}, {max}]")),
            (OptKind::Choice(cs), OptValue::Text(t)) if cs.contains(&t.as_str()) => {}
            (OptKind::Choice(cs), _) => return bad(format!("one of {}", cs.iter().map(|c| format!("{c:?}")).collect::<Vec<_>>().join(", "))),
            (OptKind::Paths, OptValue::List(l)) => {
                if l.is_empty() {
                    return Err(OptionError { option: Some(k.clone()), message: format!("{name} option {k}: give at least one path name") });
                }
                if let Some(d) = l.iter().enumerate().find(|(i, x)| l[..*i].contains(x)).map(|(_, x)| x) {
                    return Err(OptionError { option: Some(k.clone()), message: format!("{name} option {k}: path {d:?} is listed twice") });
                }
            }
            (OptKind::Paths, _) => return bad("a list of path names, e.g. [\"wifi\", \"lte\"]".into()),
        }
    }
    Ok(())
}

/// Check every `Paths` option against the names of the connection's paths.
pub fn check_paths(name: &str, options: &[OptionSpec], params: &Params, paths: &[&str]) -> Result<(), OptionError> {
    for o in options.iter().filter(|o| matches!(o.kind, OptKind::Paths)) {
        if let Some(OptValue::List(l)) = params.get(o.name) {
            if let Some(bad) = l.iter().find(|x| !paths.contains(&x.as_str())) {
                return Err(OptionError {
                    option: Some(o.name.to_string()),
                    message: format!("{name} option {}: {bad:?} is not one of this connection's paths: {}", o.name, paths.join(", ")),
                });
            }
        }
    }
    Ok(())
}

/// An unknown component name.
pub fn unknown(kind: &str, name: &str, known: impl Iterator<Item = &'static str>) -> OptionError {
    OptionError { option: None, message: format!("unknown {kind} {name:?}; expected one of: {}", known.collect::<Vec<_>>().join(", ")) }
}

/// Typed access to checked options, falling back to the defaults.
pub struct Opts<'a> {
    pub component: &'a str,
    pub options: &'static [OptionSpec],
    pub given: &'a Params,
}

impl Opts<'_> {
    fn value(&self, name: &str) -> OptValue {
        if let Some(v) = self.given.get(name) {
            return v.clone();
        }
        let o = self.options.iter().find(|o| o.name == name).unwrap_or_else(|| panic!("{} has no option {name}", self.component));
        match o.kind {
            OptKind::Bool => OptValue::Bool(o.default == "true"),
            OptKind::Int { .. } => OptValue::Int(o.default.parse().unwrap_or_else(|_| panic!("bad default for {name}"))),
            OptKind::Choice(_) => OptValue::Text(o.default.to_string()),
            // No list default: `paths` returns None and the component picks its own.
            OptKind::Paths => OptValue::List(Vec::new()),
        }
    }
    pub fn bool(&self, name: &str) -> bool { matches!(self.value(name), OptValue::Bool(true)) }
    pub fn int(&self, name: &str) -> i64 {
        match self.value(name) {
            OptValue::Int(i) => i,
            _ => unreachable!("option {name} checked as an integer"),
        }
    }
    /// A `Paths` option, or None when the scenario does not give it.
    pub fn paths(&self, name: &str) -> Option<Vec<String>> {
        match self.given.get(name) {
            Some(OptValue::List(l)) => Some(l.clone()),
            _ => None,
        }
    }
    pub fn choice(&self, name: &str) -> String {
        match self.value(name) {
            OptValue::Text(t) => t,
            _ => unreachable!("option {name} checked as a choice"),
        }
    }
}

/// Options as a Markdown cell: `name` (default): description, one per line.
pub fn markdown_cell(options: &[OptionSpec]) -> String {
    if options.is_empty() {
        return "—".to_string();
    }
    options.iter().map(|o| format!("`{}` ({}): {}", o.name, o.default, o.description).replace('|', "\\|")).collect::<Vec<_>>().join("<br>")
}

/// Options as JSON (for the Python front end).
pub fn json(options: &[OptionSpec]) -> serde_json::Value {
    serde_json::Value::Array(options.iter().map(|o| serde_json::json!({"name": o.name, "values": o.values(), "default": o.default, "description": o.description})).collect())
}
