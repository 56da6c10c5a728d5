//! Checks a submission before it is accepted. Every message names the field, what was
//! wrong and what is allowed.

use gpusched_wire::{GpuInfo, JobSubmit};

/// The most GPUs one job may ask for; far above any node, it only catches typos.
pub const MAX_GPUS: u32 = 1024;
/// Walltime above a year is a mistake (a unit mix-up), not a plan.
pub const MAX_WALLTIME_S: u64 = 366 * 24 * 3600;
pub const MAX_RETRIES: u32 = 100;
pub const MAX_BATCH: usize = 100_000;

/// The GPUs of one known node, for the "could any node ever hold it" check.
pub struct KnownNode<'a> {
    pub name: &'a str,
    pub gpus: &'a [GpuInfo],
    pub cpus: u32,
    pub mem_mib: u64,
}

pub fn check_submit(job: &JobSubmit, nodes: &[KnownNode]) -> Result<(), String> {
    if job.command.is_empty() || job.command[0].is_empty() {
        return Err("`command` is empty: give the program to run and its arguments, e.g. [\"python\", \"train.py\"]".into());
    }
    if job.command.len() > 4096 {
        return Err(format!(
            "`command` has {} arguments; at most 4096",
            job.command.len()
        ));
    }
    let nul = |s: &str| s.contains('\0');
    if job.command.iter().any(|a| nul(a)) {
        return Err("`command` contains a NUL byte, which no program can receive".into());
    }
    if let Some(name) = &job.name {
        if name.chars().count() > 256 || nul(name) {
            return Err("`name` must be at most 256 characters without NUL bytes".into());
        }
    }
    if let Some(cwd) = &job.cwd {
        if !cwd.starts_with('/') || nul(cwd) {
            return Err(format!(
                "`cwd` must be an absolute path on the node, got {cwd:?}"
            ));
        }
    }
    for (k, v) in &job.env {
        if k.is_empty() || k.contains('=') || nul(k) || nul(v) {
            return Err(format!(
                "`env` key {k:?} is not a valid variable name (non-empty, no '=' or NUL)"
            ));
        }
    }
    if let Some(c) = job.cpus {
        if !(c.is_finite() && c > 0.0 && c <= 100_000.0) {
            return Err(format!("`cpus` = {c} must be above 0 and at most 100000"));
        }
    }
    if job.mem_mib.is_some_and(|m| m == 0 || m > 1 << 36) {
        return Err("`mem_mib` must be above 0 and at most 64 TiB".into());
    }
    if job.gpus == 0 {
        return Err("`gpus` must be at least 1: jobs without GPUs are not scheduled yet".into());
    }
    if job.gpus > MAX_GPUS {
        return Err(format!(
            "`gpus` = {} is absurd; one job may ask for at most {MAX_GPUS}, on one node",
            job.gpus
        ));
    }
    match job.walltime_s {
        Some(0) => return Err("`walltime_s` must be above 0 (seconds); leave it out for no limit".into()),
        Some(w) if w > MAX_WALLTIME_S => {
            return Err(format!(
                "`walltime_s` = {w} is over a year; give the limit in seconds (at most {MAX_WALLTIME_S})"
            ))
        }
        _ => {}
    }
    if job.max_retries.is_some_and(|r| r > MAX_RETRIES) {
        return Err(format!("`max_retries` must be at most {MAX_RETRIES}"));
    }
    if let Some(user) = &job.user {
        check_user_name(user).map_err(|e| format!("`user`: {e}"))?;
    }
    if job
        .client_token
        .as_ref()
        .is_some_and(|t| t.is_empty() || t.len() > 128)
    {
        return Err("`client_token` must be 1-128 characters".into());
    }
    could_ever_fit(job, nodes)
}

/// User names as Unix knows them (and a few extra characters for e-mail-like names).
pub fn check_user_name(user: &str) -> Result<(), String> {
    let ok = !user.is_empty()
        && user.len() <= 64
        && user
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "user {user:?} must be 1-64 characters of letters, digits, '.', '_', '-', '@'"
        ))
    }
}

fn could_ever_fit(job: &JobSubmit, nodes: &[KnownNode]) -> Result<(), String> {
    // CPUs and memory count for fair share; a request no node has is still a mistake.
    if let Some(c) = job.cpus {
        let most = nodes.iter().map(|n| n.cpus).max().unwrap_or(0);
        if most > 0 && c > most as f64 {
            return Err(format!(
                "`cpus` = {c}, but the largest node has {most} CPUs"
            ));
        }
    }
    if let Some(m) = job.mem_mib {
        let most = nodes.iter().map(|n| n.mem_mib).max().unwrap_or(0);
        if most > 0 && m > most {
            return Err(format!(
                "`mem_mib` = {m}, but the largest node has {most} MiB"
            ));
        }
    }
    if nodes.is_empty() {
        return Err(
            "no node has joined the cluster yet, so nothing could run this job; \
                    start an agent (`gpusched agent --server URL`) or use `gpusched up`"
                .into(),
        );
    }
    let matching = |n: &KnownNode| {
        n.gpus
            .iter()
            .filter(|g| {
                job.gpu_model
                    .as_ref()
                    .is_none_or(|m| g.model.starts_with(m.as_str()))
            })
            .count() as u32
    };
    let best = nodes.iter().map(|n| (matching(n), n.name)).max();
    let (most, name) = best.expect("nodes is not empty");
    if most >= job.gpus {
        return Ok(());
    }
    if let (Some(model), 0) = (&job.gpu_model, most) {
        let mut models: Vec<&str> = nodes
            .iter()
            .flat_map(|n| n.gpus.iter().map(|g| g.model.as_str()))
            .collect();
        models.sort();
        models.dedup();
        return Err(format!(
            "no node has GPUs of model `{model}*`; the models in this cluster are: {}",
            if models.is_empty() {
                "none".to_string()
            } else {
                models.join(", ")
            }
        ));
    }
    let of_model = job
        .gpu_model
        .as_ref()
        .map(|m| format!(" of model `{m}*`"))
        .unwrap_or_default();
    Err(format!(
        "the job asks for {} GPUs{of_model} on one node, but the largest node ({name}) has {most}; \
         ask for at most {most}",
        job.gpus
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpusched_wire::GpuSource;

    fn gpus(n: u32, model: &str) -> Vec<GpuInfo> {
        (0..n)
            .map(|index| GpuInfo {
                index,
                uuid: None,
                model: model.into(),
                mem_mib: 81920,
                source: GpuSource::Declared,
            })
            .collect()
    }

    fn job(g: u32) -> JobSubmit {
        JobSubmit {
            command: vec!["/bin/true".into()],
            gpus: g,
            ..Default::default()
        }
    }

    #[test]
    fn messages_say_what_to_fix() {
        let a = gpus(8, "A100-SXM4-80GB");
        let nodes = [KnownNode {
            name: "n1",
            gpus: &a,
            cpus: 16,
            mem_mib: 65536,
        }];
        assert!(check_submit(&job(8), &nodes).is_ok());
        let e = check_submit(&job(9), &nodes).unwrap_err();
        assert!(
            e.contains("largest node (n1) has 8") && e.contains("at most 8"),
            "{e}"
        );
        let e = check_submit(&job(0), &nodes).unwrap_err();
        assert!(e.contains("at least 1"), "{e}");
        let e = check_submit(&job(5000), &nodes).unwrap_err();
        assert!(e.contains("absurd"), "{e}");
        let mut j = job(1);
        j.gpu_model = Some("H100".into());
        let e = check_submit(&j, &nodes).unwrap_err();
        assert!(e.contains("H100") && e.contains("A100-SXM4-80GB"), "{e}");
        j.gpu_model = Some("A100".into());
        assert!(check_submit(&j, &nodes).is_ok());
        let e = check_submit(&job(1), &[]).unwrap_err();
        assert!(e.contains("gpusched up"), "{e}");
        let mut j = job(1);
        j.command.clear();
        assert!(check_submit(&j, &nodes).unwrap_err().contains("command"));
        let mut j = job(1);
        j.walltime_s = Some(0);
        assert!(check_submit(&j, &nodes).unwrap_err().contains("walltime_s"));
        let mut j = job(1);
        j.cwd = Some("relative/dir".into());
        assert!(check_submit(&j, &nodes).unwrap_err().contains("absolute"));
        let mut j = job(1);
        j.user = Some("bad user".into());
        assert!(check_submit(&j, &nodes).unwrap_err().contains("user"));
    }
}
