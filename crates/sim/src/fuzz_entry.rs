//! Entry points of the fuzz targets in `fuzz/` (one per target), kept here so that the
//! replay tests below run the very code the fuzzer ran, on every `cargo test`.
//! Each takes arbitrary bytes and must return without panicking; what a reader accepts
//! must also be something the simulator can run (the invariants asserted below).

use gpusched_core::sharing::{ShareCluster, ShareNode};

use crate::trace::{self, muri, openb, Format};

/// The four trace formats. The first byte picks a forced format (as `--format` does)
/// or detection from the header; the rest is the file.
pub fn trace(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let format = match pick % 5 {
        0 => None,
        1 => Some(Format::Muri),
        2 => Some(Format::Philly),
        3 => Some(Format::GpuschedCsv),
        _ => Some(Format::GpuschedJsonl),
    };
    let Ok(w) = trace::parse("fuzz", text, format) else {
        return;
    };
    assert!(!w.jobs.is_empty());
    let mut last = 0.0;
    for j in &w.jobs {
        let (submit, run) = (j.spec.submit, j.work.duration());
        assert!(
            submit.is_finite() && submit >= last,
            "submit {submit} after {last}"
        );
        assert!(
            run.is_finite() && run > 0.0,
            "line {}: run time {run}",
            j.line
        );
        assert!(j.spec.estimate.is_none_or(|e| e.is_finite() && e >= 0.0));
        assert!(j.spec.gpus >= 1);
        assert!((j.spec.user.0 as usize) < w.users.len().max(1));
        assert!((j.spec.queue.0 as usize) < w.queues.len().max(1));
        last = submit;
    }
}

/// A Muri cluster spec (`--cluster-spec`).
pub fn cluster_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(c) = muri::parse_cluster_spec("fuzz", text, "V100") {
        assert!(c.total_gpus() >= 1);
        assert!(u64::from(c.total_gpus()) <= gpusched_core::cluster::MAX_GPUS);
    }
}

/// The openb node list (first byte even) or pod list (odd), each then put to use the way
/// the sharing experiment does: nodes build a cluster, pods are checked against one.
pub fn openb(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if pick % 2 == 0 {
        if let Ok(nodes) = openb::parse_nodes("fuzz", text) {
            let _ = ShareCluster::new(&nodes);
        }
    } else if let Ok(pods) = openb::parse_pods("fuzz", text) {
        let node = ShareNode {
            name: "n".into(),
            cpu_milli: 96_000,
            mem_mib: 1 << 20,
            gpus: 8,
            model: "V100M32".into(),
        };
        let Ok(cluster) = ShareCluster::new(&[node]) else {
            unreachable!("a plain 8-GPU node is valid");
        };
        for p in &pods {
            if let Ok(req) = cluster.compile(p) {
                let _ = cluster.fits(0, &req);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use gpusched_wire::fuzz_entry::replay_inputs;

    #[test]
    fn replay_trace() {
        for (path, data) in replay_inputs("trace") {
            eprintln!("{}", path.display());
            super::trace(&data);
        }
    }

    #[test]
    fn replay_cluster_spec() {
        for (path, data) in replay_inputs("cluster_spec") {
            eprintln!("{}", path.display());
            super::cluster_spec(&data);
        }
    }

    #[test]
    fn replay_openb() {
        for (path, data) in replay_inputs("openb") {
            eprintln!("{}", path.display());
            super::openb(&data);
        }
    }
}
