//! The TOML service file of `gpusched service create|update` (docs/services.md): a
//! [`ServiceSpec`] as people write it, with human durations and the replica's job as a
//! job file writes it.
//!
//! ```toml
//! name = "resnet"
//! replicas = "1..4"             # or 2: a fixed count
//! protocol = "oip"              # or "openai"
//!
//! [replica]                     # exactly a job file's fields (`submit --file`)
//! command = "python serve.py --port $PORT"
//! gpus = 1
//!
//! [readiness]
//! path = "/v2/health/ready"
//! period = "2s"
//!
//! [[model]]
//! name = "resnet50"
//! [model.batching]
//! max_batch_size = 32
//! max_queue_delay = "500us"
//! ```
//!
//! A duration is a number of seconds or a string with units (`"2s"`, `"1m30s"`; to the
//! microsecond `"500us"`, `"2ms"` where the API keeps microseconds or milliseconds).

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use crate::duration::{parse_duration, parse_duration_us};
use crate::jobfile::JobFile;
use crate::service::{
    Autoscale, Batching, ModelConfig, Probe, Rollout, ServeProtocol, ServiceSpec, MAX_REPLICAS,
};

/// The file as written; every table refuses keys it does not know (the error names the
/// key and its line).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    replicas: Option<Replicas>,
    protocol: Option<ServeProtocol>,
    replica: JobFile,
    readiness: Option<ProbeFile>,
    liveness: Option<ProbeFile>,
    rollout: Option<RolloutFile>,
    autoscale: Option<AutoscaleFile>,
    #[serde(default)]
    model: Vec<ModelFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeFile {
    path: Option<String>,
    period: Option<Secs>,
    timeout: Option<Secs>,
    initial_delay: Option<Secs>,
    failure_threshold: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RolloutFile {
    max_surge: Option<u32>,
    max_unavailable: Option<u32>,
    drain: Option<Secs>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AutoscaleFile {
    min: Option<u32>,
    max: Option<u32>,
    target_in_flight: Option<f64>,
    latency_p95: Option<Micros>,
    up_window: Option<Secs>,
    down_window: Option<Secs>,
    idle_to_zero: Option<Secs>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelFile {
    name: String,
    batching: Option<BatchingFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchingFile {
    max_batch_size: u32,
    #[serde(default)]
    preferred_batch_sizes: Vec<u32>,
    max_queue_delay: Option<Micros>,
    priority_levels: Option<u32>,
    default_priority_level: Option<u32>,
    max_queue_size: Option<u32>,
    default_timeout: Option<Micros>,
    #[serde(default)]
    allow_timeout_override: bool,
}

/// `replicas = 2`, or `replicas = "1..4"`: autoscale between those bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replicas {
    Fixed(u32),
    Range(u32, u32),
}

impl Replicas {
    /// `2` or `1..4` (also `--replicas` and `service scale`).
    pub fn parse(s: &str) -> Result<Replicas, String> {
        let s = s.trim();
        let count = |t: &str| {
            t.trim().parse::<u32>().map_err(|_| {
                format!("replicas {s:?}: give a count (2) or autoscale bounds MIN..MAX (\"1..4\")")
            })
        };
        match s.split_once("..") {
            Some((lo, hi)) => Ok(Replicas::Range(count(lo)?, count(hi)?)),
            None => Ok(Replicas::Fixed(count(s)?)),
        }
    }
}

impl<'de> Deserialize<'de> for Replicas {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Replicas;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a count of replicas (2) or autoscale bounds (\"1..4\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Replicas, E> {
                u32::try_from(v)
                    .map(Replicas::Fixed)
                    .map_err(|_| E::custom(format!("replicas {v}: give 0 to {MAX_REPLICAS}")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Replicas, E> {
                Replicas::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A duration in whole seconds: `2`, `"2s"`, `"1m30s"`.
struct Secs(u32);

/// A duration to the microsecond: `"500us"`, `"2ms"`, `1` (a second).
struct Micros(u64);

impl<'de> Deserialize<'de> for Secs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Secs;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("seconds (2) or a duration string (\"2s\", \"1m30s\")")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Secs, E> {
                u32::try_from(v)
                    .map(Secs)
                    .map_err(|_| E::custom(format!("{v} seconds is out of range")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Secs, E> {
                let s = parse_duration(v).map_err(E::custom)?;
                u32::try_from(s)
                    .map(Secs)
                    .map_err(|_| E::custom(format!("{v:?} is too long")))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Micros {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Micros;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string (\"500us\", \"2ms\", \"1s\") or seconds (1)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Micros, E> {
                u64::try_from(v)
                    .ok()
                    .and_then(|s| s.checked_mul(1_000_000))
                    .map(Micros)
                    .ok_or_else(|| E::custom(format!("{v} seconds is out of range")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Micros, E> {
                parse_duration_us(v).map(Micros).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// The longest a batch may wait to fill (the API's bound).
const MAX_QUEUE_DELAY_US: u64 = 60_000_000;

/// Parses a service file into the spec it describes, checked by
/// [`ServiceSpec::problem`]. Errors name the field (and, for what TOML itself refuses,
/// the line). The replica's `cwd` stays unset when the file gives none: the caller
/// fills in its own directory, as `submit` does.
pub fn parse(text: &str) -> Result<ServiceSpec, String> {
    let f: File = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
    let replica = f.replica.to_submit(&|field| format!("[replica] {field}"))?;
    let (replicas, autoscale) = scaling(f.replicas, f.autoscale)?;
    let spec = ServiceSpec {
        name: f.name,
        replica,
        replicas,
        protocol: f.protocol.unwrap_or_default(),
        models: f.model.into_iter().map(model).collect::<Result<_, _>>()?,
        readiness: f.readiness.map(probe),
        liveness: f.liveness.map(probe),
        rollout: f.rollout.map(rollout).unwrap_or_default(),
        autoscale,
    };
    match spec.problem() {
        Some(p) => Err(p),
        None => Ok(spec),
    }
}

/// `replicas` and `[autoscale]` together: a range in `replicas` is the autoscaler's
/// bounds (the table may add the other knobs, and repeat the bounds only if they agree);
/// a count next to the table is the number the service starts with.
fn scaling(
    replicas: Option<Replicas>,
    table: Option<AutoscaleFile>,
) -> Result<(Option<u32>, Option<Autoscale>), String> {
    let (count, range) = match replicas {
        None => (None, None),
        Some(Replicas::Fixed(n)) => (Some(n), None),
        Some(Replicas::Range(lo, hi)) => (None, Some((lo, hi))),
    };
    let Some(t) = table else {
        return Ok((count, range.map(|(min, max)| autoscale_with(min, max))));
    };
    let (lo, hi) = range.unwrap_or_default();
    let bound = |what: &str, table: Option<u32>, range: Option<u32>| match (table, range) {
        (Some(a), Some(b)) if a != b => Err(format!(
            "[autoscale] {what} = {a} disagrees with replicas = \"{lo}..{hi}\"; give the \
             bounds once"
        )),
        (a, b) => a.or(b).ok_or_else(|| {
            format!(
                "[autoscale] has no {what}: set min and max in it, or write replicas = \
                 \"MIN..MAX\""
            )
        }),
    };
    let min = bound("min", t.min, range.map(|r| r.0))?;
    let max = bound("max", t.max, range.map(|r| r.1))?;
    let mut a = autoscale_with(min, max);
    if let Some(x) = t.target_in_flight {
        a.target_in_flight = x;
    }
    if let Some(Micros(us)) = t.latency_p95 {
        if us < 1_000 || us % 1_000 != 0 {
            return Err(format!(
                "[autoscale] latency_p95 is kept in whole milliseconds (at least \"1ms\"); \
                 got {us} us"
            ));
        }
        a.latency_p95_ms = Some(us / 1_000);
    }
    if let Some(Secs(s)) = t.up_window {
        a.up_window_s = s;
    }
    if let Some(Secs(s)) = t.down_window {
        a.down_window_s = s;
    }
    if let Some(Secs(s)) = t.idle_to_zero {
        a.idle_to_zero_s = s;
    }
    Ok((count, Some(a)))
}

/// The API's autoscaler with these bounds and its defaults for the rest.
pub fn autoscale_with(min: u32, max: u32) -> Autoscale {
    Autoscale {
        min,
        max,
        target_in_flight: 4.0,
        latency_p95_ms: None,
        up_window_s: 0,
        down_window_s: 60,
        idle_to_zero_s: 300,
    }
}

fn probe(p: ProbeFile) -> Probe {
    let d = Probe::default();
    Probe {
        path: p.path,
        period_s: p.period.map_or(d.period_s, |s| s.0),
        timeout_s: p.timeout.map_or(d.timeout_s, |s| s.0),
        failure_threshold: p.failure_threshold.unwrap_or(d.failure_threshold),
        initial_delay_s: p.initial_delay.map_or(d.initial_delay_s, |s| s.0),
    }
}

fn rollout(r: RolloutFile) -> Rollout {
    let d = Rollout::default();
    Rollout {
        max_surge: r.max_surge.unwrap_or(d.max_surge),
        max_unavailable: r.max_unavailable.unwrap_or(d.max_unavailable),
        drain_s: r.drain.map_or(d.drain_s, |s| s.0),
    }
}

fn model(m: ModelFile) -> Result<ModelConfig, String> {
    let batching = match m.batching {
        None => None,
        Some(b) => {
            let delay = b.max_queue_delay.map_or(0, |d| d.0);
            if delay > MAX_QUEUE_DELAY_US {
                return Err(format!(
                    "model {}: [model.batching] max_queue_delay is at most 60s (a batch that \
                     waits longer is a request timing out); got {} ms",
                    m.name,
                    delay / 1_000
                ));
            }
            Some(Batching {
                max_batch_size: b.max_batch_size,
                preferred_batch_sizes: b.preferred_batch_sizes,
                max_queue_delay_us: delay,
                priority_levels: b.priority_levels.unwrap_or(0),
                default_priority_level: b.default_priority_level,
                max_queue_size: b.max_queue_size.unwrap_or(1024),
                default_timeout_us: b.default_timeout.map_or(0, |d| d.0),
                allow_timeout_override: b.allow_timeout_override,
            })
        }
    };
    Ok(ModelConfig {
        name: m.name,
        batching,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = r#"
name = "resnet"
replicas = 2
protocol = "oip"

[replica]
command = "python serve.py --port 8000"
gpus = 1
mem = "16G"
env = { MODEL_DIR = "/models" }

[readiness]
path = "/v2/health/ready"
period = "5s"
timeout = 2
initial_delay = "1m"
failure_threshold = 2

[liveness]
path = "/v2/health/live"

[rollout]
max_surge = 2
max_unavailable = 1
drain = "10s"

[autoscale]
min = 1
max = 8
target_in_flight = 16
latency_p95 = "250ms"
up_window = "30s"
down_window = "5m"
idle_to_zero = "10m"

[[model]]
name = "resnet50"
[model.batching]
max_batch_size = 32
preferred_batch_sizes = [8, 16]
max_queue_delay = "500us"
priority_levels = 2
default_priority_level = 2
max_queue_size = 100
default_timeout = "2ms"
allow_timeout_override = true

[[model]]
name = "resnet18"
"#;

    #[test]
    fn a_full_file_reads_every_field() {
        let s = parse(FULL).unwrap();
        assert_eq!(s.name, "resnet");
        assert_eq!(s.replicas, Some(2));
        assert_eq!(s.replica.command, ["python", "serve.py", "--port", "8000"]);
        assert_eq!((s.replica.gpus, s.replica.mem_mib), (Some(1), Some(16384)));
        assert_eq!(s.replica.env["MODEL_DIR"], "/models");
        assert_eq!(
            s.readiness,
            Some(Probe {
                path: Some("/v2/health/ready".into()),
                period_s: 5,
                timeout_s: 2,
                failure_threshold: 2,
                initial_delay_s: 60,
            })
        );
        let live = s.liveness.unwrap();
        assert_eq!((live.period_s, live.failure_threshold), (2, 3));
        assert_eq!(
            s.rollout,
            Rollout {
                max_surge: 2,
                max_unavailable: 1,
                drain_s: 10
            }
        );
        let a = s.autoscale.unwrap();
        assert_eq!((a.min, a.max, a.target_in_flight), (1, 8, 16.0));
        assert_eq!(a.latency_p95_ms, Some(250));
        assert_eq!(
            (a.up_window_s, a.down_window_s, a.idle_to_zero_s),
            (30, 300, 600)
        );
        assert_eq!(s.models.len(), 2);
        let b = s.models[0].batching.as_ref().unwrap();
        assert_eq!(b.max_batch_size, 32);
        assert_eq!(b.preferred_batch_sizes, [8, 16]);
        assert_eq!((b.max_queue_delay_us, b.default_timeout_us), (500, 2_000));
        assert_eq!((b.priority_levels, b.default_priority_level), (2, Some(2)));
        assert_eq!(b.max_queue_size, 100);
        assert!(b.allow_timeout_override);
        assert_eq!(s.models[1].batching, None);
    }

    #[test]
    fn a_minimal_file_takes_the_apis_defaults() {
        let s = parse("name = \"echo\"\n[replica]\ncommand = \"python -m http.server\"\n").unwrap();
        assert_eq!(s.replicas, None);
        assert_eq!(s.protocol, ServeProtocol::Oip);
        assert_eq!(s.rollout, Rollout::default());
        assert!(s.readiness.is_none() && s.autoscale.is_none() && s.models.is_empty());
        assert!(s.replica.cwd.is_none());
        // Same as the API's JSON with the same fields left out.
        let json: ServiceSpec = serde_json::from_value(serde_json::json!({
            "name": "echo", "replica": {"command": ["python", "-m", "http.server"]}
        }))
        .unwrap();
        assert_eq!(s, json);
    }

    #[test]
    fn a_range_of_replicas_is_autoscaling() {
        let s = parse("name = \"m\"\nreplicas = \"0..3\"\n[replica]\ncommand = \"x\"\n").unwrap();
        let a = s.autoscale.unwrap();
        assert_eq!(
            (a.min, a.max, a.target_in_flight, a.idle_to_zero_s),
            (0, 3, 4.0, 300)
        );
        assert_eq!(s.replicas, None);
        // The table adds knobs; bounds given twice must agree.
        let s = parse(
            "name = \"m\"\nreplicas = \"1..3\"\n[replica]\ncommand = \"x\"\n\
             [autoscale]\ntarget_in_flight = 2.5\nmax = 3\n",
        )
        .unwrap();
        let a = s.autoscale.unwrap();
        assert_eq!((a.min, a.max, a.target_in_flight), (1, 3, 2.5));
        let e = parse(
            "name = \"m\"\nreplicas = \"1..3\"\n[replica]\ncommand = \"x\"\n[autoscale]\nmax = 4\n",
        )
        .unwrap_err();
        assert!(
            e.contains("[autoscale] max = 4 disagrees") && e.contains("1..3"),
            "{e}"
        );
        let e =
            parse("name = \"m\"\n[replica]\ncommand = \"x\"\n[autoscale]\nmax = 4\n").unwrap_err();
        assert!(e.contains("[autoscale] has no min"), "{e}");
        // Bounds the spec refuses are reported with the spec's words.
        let e =
            parse("name = \"m\"\nreplicas = \"3..2\"\n[replica]\ncommand = \"x\"\n").unwrap_err();
        assert!(e.contains("min 3 max 2"), "{e}");
        assert_eq!(Replicas::parse(" 2 "), Ok(Replicas::Fixed(2)));
        assert_eq!(Replicas::parse("1..4"), Ok(Replicas::Range(1, 4)));
        assert!(Replicas::parse("1-4").unwrap_err().contains("MIN..MAX"));
    }

    fn refused(text: &str) -> String {
        parse(text).unwrap_err()
    }

    #[test]
    fn unknown_keys_are_refused_with_the_key_and_its_line() {
        let e = refused("name = \"m\"\n[replica]\ncommand = \"x\"\ngpu = 1\n");
        assert!(
            e.contains("line 4") && e.contains("unknown field `gpu`"),
            "{e}"
        );
        let e = refused("name = \"m\"\nreplica_count = 2\n[replica]\ncommand = \"x\"\n");
        assert!(e.contains("line 2") && e.contains("`replica_count`"), "{e}");
        let e = refused("name = \"m\"\n[replica]\ncommand = \"x\"\n[readiness]\nperiod_s = 2\n");
        assert!(e.contains("line 5") && e.contains("`period_s`"), "{e}");
        let e = refused(
            "name = \"m\"\n[replica]\ncommand = \"x\"\n[[model]]\nname = \"a\"\n\
             [model.batching]\nmax_batch_size = 4\nmax_queue_delay_us = 5\n",
        );
        assert!(
            e.contains("line 8") && e.contains("`max_queue_delay_us`"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_name_their_field() {
        let e = refused("name = \"m\"\n");
        assert!(e.contains("missing field `replica`"), "{e}");
        let e = refused("name = \"m\"\nprotocol = \"grpc\"\n[replica]\ncommand = \"x\"\n");
        assert!(
            e.contains("line 2") && e.contains("grpc") && e.contains("openai"),
            "{e}"
        );
        let e =
            refused("name = \"m\"\n[replica]\ncommand = \"x\"\n[readiness]\nperiod = \"soon\"\n");
        assert!(e.contains("line 5") && e.contains("\"soon\""), "{e}");
        let e = refused("name = \"m\"\n[replica]\ncommand = \"x\"\n[rollout]\ndrain = -1\n");
        assert!(e.contains("line 5") && e.contains("out of range"), "{e}");
        let e = refused("name = \"m\"\nreplicas = -1\n[replica]\ncommand = \"x\"\n");
        assert!(e.contains("line 2") && e.contains("replicas -1"), "{e}");
        let e = refused("name = \"m\"\n[replica]\ngpus = 1\n");
        assert_eq!(e, "no command given: set [replica] command");
        let e = refused("name = \"m\"\n[replica]\ncommand = \"x\"\nwalltime = 0\n");
        assert!(e.starts_with("[replica] walltime is 0"), "{e}");
        let e = refused(
            "name = \"m\"\n[replica]\ncommand = \"x\"\n[[model]]\nname = \"a\"\n\
             [model.batching]\nmax_batch_size = 4\nmax_queue_delay = \"2m\"\n",
        );
        assert!(e.contains("model a") && e.contains("at most 60s"), "{e}");
        let e = refused(
            "name = \"m\"\n[replica]\ncommand = \"x\"\n[autoscale]\nmin = 0\nmax = 2\n\
             latency_p95 = \"500us\"\n",
        );
        assert!(
            e.contains("latency_p95") && e.contains("milliseconds"),
            "{e}"
        );
        // TOML's own errors keep their line.
        let e = refused("name = \"m\n");
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn the_specs_own_problems_are_reported() {
        let e = refused("name = \"Bad_Name\"\n[replica]\ncommand = \"x\"\n");
        assert!(e.contains("lowercase"), "{e}");
        let e = refused("name = \"m\"\n[replica]\ncommand = \"x\"\narray = 4\n");
        assert!(e.contains("cannot have an array"), "{e}");
        let e = refused("name = \"m\"\n[replica]\ncommand = \"x\"\nafter = [3]\n");
        assert!(e.contains("dependencies"), "{e}");
        let e = refused(
            "name = \"m\"\nprotocol = \"openai\"\n[replica]\ncommand = \"x\"\n[[model]]\n\
             name = \"llama\"\n[model.batching]\nmax_batch_size = 4\n",
        );
        assert!(
            e.contains("batching is for the Open Inference Protocol"),
            "{e}"
        );
        let e = refused("name = \"m\"\n[replica]\ncommand = \"x\"\n[rollout]\nmax_surge = 0\n");
        assert!(
            e.contains("max_surge and max_unavailable are both 0"),
            "{e}"
        );
        let e = refused("name = \"m\"\nreplicas = 1000\n[replica]\ncommand = \"x\"\n");
        assert!(e.contains("at most 256 replicas"), "{e}");
    }
}
