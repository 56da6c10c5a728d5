//! Which encoding for the agent protocol (issue 39 item 2, "measure before choosing"):
//! the CPU to encode and decode a typical desired state and report in JSON, MessagePack
//! (`rmp-serde`, fields by name) and CBOR (`ciborium`), and their sizes.
//!
//! Only self-describing formats are candidates: the protocol's messages carry optional
//! fields skipped when empty and internally tagged enums (`Outcome`, `RunEventKind`),
//! which schema-driven formats (bincode, postcard) cannot read back, and the version
//! rule needs a field one side does not know to be skippable.
//!
//! `cargo run --release -p gpusched-wire --example agent_codec [LAUNCHES] [ROUNDS]`

use std::collections::BTreeMap;
use std::time::Instant;

use gpusched_wire::gang::DistLaunch;
use gpusched_wire::{
    AttemptRef, Desired, Launch, Outcome, QueuedLaunch, Report, RunEvent, RunEventKind,
};

fn launch(job: u64) -> Launch {
    Launch {
        job,
        attempt: 1,
        name: format!("sweep[{}]", job % 10_000),
        user: "alice".into(),
        command: vec![
            "python".into(),
            "train.py".into(),
            "--lr".into(),
            "3e-4".into(),
        ],
        cwd: "/home/alice/project".into(),
        env: BTreeMap::from([
            ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
            ("HOME".into(), "/home/alice".into()),
            ("WANDB_PROJECT".into(), "sweep".into()),
        ]),
        gpus: vec![(job % 8) as u32],
        walltime_s: Some(3600),
        grace_s: 10,
        slice: None,
        resources: BTreeMap::new(),
        dist: Some(DistLaunch {
            nnodes: 1,
            node_rank: 0,
            gpus_per_node: 1,
            tasks_per_node: None,
            master_addr: None,
            master_port: None,
            hosts: Vec::new(),
        }),
        cpu_milli: 4000,
        mem_mib: 16_384,
        pids_max: None,
        image: None,
        serve: None,
        hold: false,
    }
}

fn desired(n: u64) -> Desired {
    Desired {
        gen: 12_345,
        run: (0..n).map(|i| launch(1000 + i)).collect(),
        cancel: Vec::new(),
        preempt: Vec::new(),
        reserve_ports: Vec::new(),
        epoch: 3,
        queued: (0..n)
            .map(|i| QueuedLaunch {
                after: AttemptRef {
                    job: 1000 + i,
                    attempt: 1,
                },
                launch: launch(2000 + i),
            })
            .collect(),
        steps: Vec::new(),
        power_caps: BTreeMap::new(),
        run_known: Vec::new(),
        queued_known: Vec::new(),
    }
}

fn report(n: u64) -> Report {
    let events = (0..n)
        .flat_map(|i| {
            [
                RunEvent {
                    job: 1000 + i,
                    attempt: 1,
                    at_ms: 1_765_000_000_000 + i,
                    event: RunEventKind::Started {
                        pid: 40_000 + i as u32,
                        mig_uuid: None,
                    },
                },
                RunEvent {
                    job: 1000 + i,
                    attempt: 1,
                    at_ms: 1_765_000_000_100 + i,
                    event: RunEventKind::Ended {
                        outcome: Outcome::Exited { code: 0 },
                        usage: Some(gpusched_wire::contain::Usage {
                            cpu_ms: 12,
                            mem_peak_bytes: Some(3_000_000),
                            cpu_pressure_ms: None,
                            mem_pressure_ms: None,
                        }),
                    },
                },
            ]
        })
        .collect();
    Report {
        node: "gpu-node-017".into(),
        instance: "0f3c9a7e-5d1b-4c2e-9a77-1b2c3d4e5f60".into(),
        events,
        telemetry: None,
        leaving: false,
    }
}

/// (bytes, ns to encode, ns to decode) per message, best of three runs of `rounds`.
fn measure<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
    value: &T,
    rounds: u32,
    enc: impl Fn(&T) -> Vec<u8>,
    dec: impl Fn(&[u8]) -> T,
) -> (usize, f64, f64) {
    let bytes = enc(value);
    assert_eq!(
        &dec(&bytes),
        value,
        "the encoding must read back what it wrote"
    );
    let mut best = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let t = Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(enc(std::hint::black_box(value)));
        }
        let e = t.elapsed().as_nanos() as f64 / f64::from(rounds);
        let t = Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(dec(std::hint::black_box(&bytes)));
        }
        let d = t.elapsed().as_nanos() as f64 / f64::from(rounds);
        best = (best.0.min(e), best.1.min(d));
    }
    (bytes.len(), best.0, best.1)
}

fn row<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
    what: &str,
    value: &T,
    rounds: u32,
) {
    let json = measure(
        value,
        rounds,
        |v| serde_json::to_vec(v).unwrap(),
        |b| serde_json::from_slice(b).unwrap(),
    );
    let msgpack = measure(
        value,
        rounds,
        |v| rmp_serde::to_vec_named(v).unwrap(),
        |b| rmp_serde::from_slice(b).unwrap(),
    );
    let cbor = measure(
        value,
        rounds,
        |v| {
            let mut out = Vec::new();
            ciborium::into_writer(v, &mut out).unwrap();
            out
        },
        |b| ciborium::from_reader(b).unwrap(),
    );
    for (name, (bytes, enc, dec)) in [("JSON", json), ("MessagePack", msgpack), ("CBOR", cbor)] {
        println!(
            "| {what} | {name} | {bytes} | {:.1} | {:.1} | {:.1} |",
            enc / 1000.0,
            dec / 1000.0,
            (enc + dec) / 1000.0
        );
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let launches: u64 = args
        .next()
        .map_or(8, |a| a.parse().expect("LAUNCHES: a number"));
    let rounds: u32 = args
        .next()
        .map_or(2000, |a| a.parse().expect("ROUNDS: a number"));
    println!("| message | encoding | bytes | encode us | decode us | both us |");
    println!("|---|---|---|---|---|---|");
    row(
        &format!("desired state, {launches} running + {launches} queued"),
        &desired(launches),
        rounds,
    );
    // What a compact agent is sent at a task's end (`gpusched_wire::compact`): the one
    // launch newly queued whole, the others named.
    let mut compact = desired(launches);
    let mut queued = std::mem::take(&mut compact.queued);
    compact.run_known = compact.run.drain(..).map(|l| l.attempt_ref()).collect();
    let last = queued.pop();
    compact.queued_known = queued
        .iter()
        .map(|q| gpusched_wire::QueuedKnown {
            after: q.after,
            attempt: q.launch.attempt_ref(),
        })
        .collect();
    compact.queued.extend(last);
    row(
        &format!(
            "compact desired state, 1 queued whole, {} named",
            compact.run_known.len() + compact.queued_known.len()
        ),
        &compact,
        rounds,
    );
    row(
        &format!("report, {launches} starts + {launches} ends"),
        &report(launches),
        rounds,
    );
}
