//! Unit-carrying scenario values. Each keeps the user's text (so a scenario round-trips
//! unchanged) and the parsed value. Deserialisation fails with a message that says what
//! was expected; serde_path_to_error adds the field path.

use crate::units::{self, Bandwidth, QueueLimit, SimTime};
use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Metadata, Schema, SchemaObject, StringValidation};
use schemars::JsonSchema;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

macro_rules! unit_type {
    ($name:ident, $value:ty, $parse:path, $what:expr, $example:expr, $pattern:expr) => {
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            pub text: String,
            pub value: $value,
        }

        impl $name {
            pub fn parse(s: &str) -> Result<Self, String> {
                $parse(s).map(|value| $name { text: s.to_string(), value }).map_err(|e| e.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(&self.text) }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "{} as a string with a unit, e.g. {}", $what, $example)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> { $name::parse(v).map_err(E::custom) }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("the bare number {v} has no unit; write {} as a string such as {}", $what, $example)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(format!("the bare number {v} has no unit; write {} as a string such as {}", $what, $example)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("the bare number {v} has no unit; write {} as a string such as {}", $what, $example)))
                    }
                }
                d.deserialize_any(V)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> String { stringify!($name).to_string() }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                Schema::Object(SchemaObject {
                    instance_type: Some(InstanceType::String.into()),
                    string: Some(Box::new(StringValidation { pattern: Some($pattern.to_string()), ..Default::default() })),
                    metadata: Some(Box::new(Metadata {
                        description: Some(format!("{} with an explicit unit, e.g. {}", $what, $example)),
                        examples: vec![serde_json::Value::String($example.trim_matches('"').to_string())],
                        ..Default::default()
                    })),
                    ..Default::default()
                })
            }
        }
    };
}

unit_type!(Duration, SimTime, units::parse_duration, "a duration", "\"20 ms\"", r"^\s*[0-9.]+(e[0-9]+)?\s*(ns|us|µs|ms|s|min)\s*$");
unit_type!(Rate, Bandwidth, units::parse_rate, "a rate", "\"100 Mbit/s\"", r"^\s*[0-9.]+(e[0-9]+)?\s*(bit/s|bps|kbit/s|Kbit/s|kbps|Mbit/s|Mbps|Gbit/s|Gbps)\s*$");
unit_type!(Size, u64, units::parse_size, "a size", "\"200 KB\"", r"^\s*[0-9.]+(e[0-9]+)?\s*(B|KB|kB|MB|GB|KiB|MiB|GiB)\s*$");
unit_type!(Queue, QueueLimit, units::parse_queue, "a queue limit", "\"100 pkt\"", r"^\s*[0-9.]+(e[0-9]+)?\s*(pkt|pkts|packets|packet|B|KB|kB|MB|GB|KiB|MiB|GiB)\s*$");
