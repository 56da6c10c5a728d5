//! Entry points of the fuzz targets in `fuzz/` (one per target), kept here so that the
//! replay tests below run the very code the fuzzer ran, on every `cargo test`.
//! Each takes arbitrary bytes and must return without panicking.

use gpusched_wire::{
    BatchSubmit, GpuInfo, GpuSource, JobSubmit, MigInfo, Register, Report, TokenCreate,
};

use crate::queues::Queues;
use crate::state::validate::{check_fits, check_submit, check_user_name, KnownNode};

/// Nodes in the fuzz cluster declare no generic resources.
static EMPTY_RESOURCES: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();

/// API request bodies, decoded as the HTTP layer decodes them (`serde_json::from_slice`)
/// and checked as the state task checks them (the static checks, then whether the
/// cluster could ever hold it), against a small cluster of one
/// whole-GPU node and one MIG node. The first byte picks the route's body type.
pub fn api_body(data: &[u8]) {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let whole = gpus(8, "A100-SXM4-80GB", None);
    let mig = gpus(
        2,
        "A100-SXM4-40GB",
        Some(MigInfo {
            dynamic: true,
            instances: Vec::new(),
        }),
    );
    let nodes = [
        KnownNode {
            name: "n1",
            gpus: &whole,
            cpus: 64,
            mem_mib: 512 * 1024,
            resources: &EMPTY_RESOURCES,
        },
        KnownNode {
            name: "n2",
            gpus: &mig,
            cpus: 32,
            mem_mib: 256 * 1024,
            resources: &EMPTY_RESOURCES,
        },
    ];
    match pick % 5 {
        0 => {
            if let Ok(job) = serde_json::from_slice::<JobSubmit>(body) {
                let _ = check_submit(&job).and_then(|()| check_fits(&job, &nodes));
            }
        }
        1 => {
            if let Ok(batch) = serde_json::from_slice::<BatchSubmit>(body) {
                for job in &batch.jobs {
                    if check_submit(job)
                        .and_then(|()| check_fits(job, &nodes))
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
        2 => {
            if let Ok(t) = serde_json::from_slice::<TokenCreate>(body) {
                let _ = check_user_name(&t.user);
            }
        }
        3 => {
            let _ = serde_json::from_slice::<Register>(body);
        }
        _ => {
            let _ = serde_json::from_slice::<Report>(body);
        }
    }
}

fn gpus(n: u32, model: &str, mig: Option<MigInfo>) -> Vec<GpuInfo> {
    (0..n)
        .map(|index| GpuInfo {
            index,
            uuid: None,
            model: model.into(),
            mem_mib: if mig.is_some() { 40_960 } else { 81_920 },
            source: GpuSource::Declared,
            mig: mig.clone(),
        })
        .collect()
}

/// The queue file (`--queues`), then the questions the server asks of it.
pub fn queue_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(q) = Queues::parse(text, "fuzz.toml") {
        assert!(!q.defs.is_empty());
        let groups = ["ml".to_string()];
        let _ = q.pick_for("alice", &groups);
        for name in q.defs.keys() {
            let _ = q.allows(name, "alice", &groups);
        }
    }
}

#[cfg(test)]
mod tests {
    use gpusched_wire::fuzz_entry::replay_inputs;

    #[test]
    fn replay_api_body() {
        for (path, data) in replay_inputs("api_body") {
            eprintln!("{}", path.display());
            super::api_body(&data);
        }
    }

    #[test]
    fn replay_queue_file() {
        for (path, data) in replay_inputs("queue_file") {
            eprintln!("{}", path.display());
            super::queue_file(&data);
        }
    }
}
