//! The checks: what the transcript cannot show deterministically, as verdicts.

use std::net::TcpListener;
use std::time::Duration;

use gpusched_wire::RunEventKind;

use super::fake::{acked_events, acked_samples, all_reports, lock, pid_of, port_of, xids};
use super::harness::{yes, Harness};
use super::{Check, WAIT};

impl Harness {
    pub(super) async fn check(&mut self, c: Check) -> String {
        match c {
            Check::CompactSeen(name) => {
                let w = lock(&self.world);
                let Some(f) = w.servers.iter().find(|f| f.name == name) else {
                    return format!("no server {name}");
                };
                let s = &f.seen;
                let some = |n: u32| if n > 0 { "some" } else { "none" };
                format!(
                    "{name} saw: answers naming held launches {}, of them in MessagePack {}; \
                     asks for everything again {}; reports in MessagePack {}, in JSON {}",
                    some(s.named),
                    some(s.msgpack_answers.min(s.named)),
                    some(s.whole_asks),
                    some(s.msgpack_reports),
                    some(s.json_reports),
                )
            }
            Check::PortHeld(job) => {
                let Some(port) = port_of(&lock(&self.world), job) else {
                    return format!("no port reported for {job}#1");
                };
                let name = self.port_name(port);
                let held = if port_free(port) { "free" } else { "held" };
                format!("port {name} of {job}#1: {held}")
            }
            Check::Alive(job) => {
                let pid = pid_of(&lock(&self.world), job);
                let state = match pid {
                    None => "never started",
                    Some(pid) if alive(pid) => "alive",
                    Some(_) => "gone",
                };
                format!("{job}#1's process: {state}")
            }
            Check::IdleSamples => {
                let w = lock(&self.world);
                let bad = acked_samples(&w).into_iter().find_map(|t| {
                    let indices: Vec<u32> = t.gpus.iter().map(|g| g.index).collect();
                    let odd = indices != [0, 1]
                        || t.gpus.iter().any(|g| {
                            !g.temp_c.is_some_and(|c| (30..=40).contains(&c))
                                || !g.power_mw.is_some_and(|p| (50_000..=70_000).contains(&p))
                                || g.energy_mj.is_none()
                                || !g.xids.is_empty()
                                || g.lost
                        });
                    odd.then(|| format!("{t:?}"))
                });
                let all = all_reports(&w).all(|(r, _)| r.telemetry.is_some());
                match bad {
                    Some(t) => format!("a sample unlike an idle GPU: {t}"),
                    None => format!(
                        "samples of GPUs 0 and 1 at 30-40 C and 50-70 W, energy read, no Xid, \
                         none lost; every report carried samples: {}",
                        yes(all)
                    ),
                }
            }
            Check::OneReportAPass(n) => {
                let url = self.metrics_url();
                let passes = |lines: &[crate::metrics::Line]| {
                    metric(lines, "gpusched_agent_telemetry_pass_seconds_count", None)
                };
                let p0 = passes(&scrape(&url).await);
                let r0 = all_reports(&lock(&self.world)).count();
                let deadline = tokio::time::Instant::now() + WAIT;
                let p1 = loop {
                    let p = passes(&scrape(&url).await);
                    if p >= p0 + f64::from(n) {
                        break p;
                    }
                    if tokio::time::Instant::now() > deadline {
                        self.fail(format!("not {n} sampling passes in {WAIT:?}"));
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                };
                let reports = (all_reports(&lock(&self.world)).count() - r0) as f64;
                let passes = p1 - p0;
                if reports >= 1.0 && reports <= passes + 1.0 {
                    format!("over {n} passes of the sampler: reports, never more than one a pass")
                } else {
                    format!("{reports} reports in {passes} passes of the sampler")
                }
            }
            Check::StartCarriedSamples(job) => {
                let w = lock(&self.world);
                let report = all_reports(&w).find(|(r, ok)| {
                    *ok && r
                        .events
                        .iter()
                        .any(|e| e.job == job && matches!(e.event, RunEventKind::Started { .. }))
                });
                match report {
                    None => format!("no acknowledged report carried {job}#1's start"),
                    Some((r, _)) => format!(
                        "the report of {job}#1's start carried samples: {}",
                        yes(r.telemetry.is_some())
                    ),
                }
            }
            Check::XidsAcked(gpu) => {
                let codes: Vec<String> = xids(&lock(&self.world), gpu, true)
                    .iter()
                    .map(u64::to_string)
                    .collect();
                format!("GPU {gpu}'s Xids acknowledged: {}", codes.join(" "))
            }
            Check::Metrics => {
                let lines = scrape(&self.metrics_url()).await;
                let gpu = |name: &str, gpu: &str| metric(&lines, name, Some(("gpu", gpu)));
                format!(
                    "metrics: GPU 1 at {} C with Xid {}; GPU 0 busy: {}; jobs running {}; \
                     spawns {}; reports of events counted: {}",
                    gpu("DCGM_FI_DEV_GPU_TEMP", "1"),
                    gpu("DCGM_FI_DEV_XID_ERRORS", "1"),
                    yes(gpu("DCGM_FI_DEV_GPU_UTIL", "0") >= 90.0),
                    metric(&lines, "gpusched_agent_jobs_running", None),
                    metric(&lines, "gpusched_agent_spawn_seconds_count", None),
                    yes(metric(
                        &lines,
                        "gpusched_agent_reports_total",
                        Some(("kind", "events"))
                    ) >= 1.0)
                )
            }
            Check::ProbeFailures(readiness, liveness) => {
                let lines = scrape(&self.metrics_url()).await;
                let failed = |kind: &str| {
                    metric(
                        &lines,
                        "gpusched_agent_probe_failures_total",
                        Some(("kind", kind)),
                    )
                };
                format!(
                    "probe failures counted: at least {readiness} of readiness: {}; at least \
                     {liveness} of liveness: {}",
                    yes(failed("readiness") >= readiness as f64),
                    yes(failed("liveness") >= liveness as f64)
                )
            }
            Check::FollowedInOrder(from, to) => {
                let w = lock(&self.world);
                let at = |job: u64, started: bool| {
                    acked_events(&w).find_map(|e| {
                        let kind = match e.event {
                            RunEventKind::Started { .. } => true,
                            RunEventKind::Ended { .. } => false,
                            _ => return None,
                        };
                        (e.job == job && kind == started).then_some(e.at_ms)
                    })
                };
                let early: Vec<String> = (from + 1..=to)
                    .filter(|&job| {
                        !(at(job, true) >= at(job - 1, false) && at(job, true).is_some())
                    })
                    .map(|job| job.to_string())
                    .collect();
                if early.is_empty() {
                    format!(
                        "{}..={to} each started no earlier than the one ahead ended",
                        from + 1
                    )
                } else {
                    format!("started before the one ahead ended: {}", early.join(" "))
                }
            }
            Check::Batched(attempts) => {
                let reports = all_reports(&lock(&self.world))
                    .filter(|(r, _)| !r.events.is_empty())
                    .count();
                if reports < attempts {
                    format!("the events of {attempts} attempts came in fewer reports than attempts")
                } else {
                    format!("the events of {attempts} attempts came in {reports} reports")
                }
            }
            Check::CheckpointDirs => {
                let ckpts = self.dir.path().join("jobs").join("checkpoints");
                let left: Vec<_> = std::fs::read_dir(&ckpts)
                    .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
                    .unwrap_or_default();
                let odd: Vec<String> = left
                    .iter()
                    .filter(|n| {
                        !n.to_string_lossy().starts_with(crate::spare_dirs::PREFIX)
                            || std::fs::read_dir(ckpts.join(n)).map_or(0, |d| d.count()) > 0
                    })
                    .map(|n| n.to_string_lossy().into_owned())
                    .collect();
                if odd.is_empty() && left.len() <= crate::spare_dirs::KEPT {
                    "checkpoint directories: none left under a job's name, the spares empty".into()
                } else {
                    format!("checkpoint directories left: {} ({odd:?})", left.len())
                }
            }
            Check::EndedWithin(job, from_ms, to_ms) => {
                let ended = acked_events(&lock(&self.world)).find_map(|e| {
                    (e.job == job && matches!(e.event, RunEventKind::Ended { .. }))
                        .then_some(e.at_ms)
                });
                let Some(at) = ended else {
                    return format!("{job}#1 did not end");
                };
                let after = at.saturating_sub(self.down_at);
                if (from_ms..=to_ms).contains(&after) {
                    format!("{job}#1 ended {from_ms}-{to_ms} ms into the silence")
                } else {
                    format!("{job}#1 ended {after} ms into the silence")
                }
            }
        }
    }
}

/// Whether the process lives (a zombie does not).
pub(super) fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    !matches!(state, Some('Z' | 'X') | None)
}

pub(super) fn port_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

pub(super) async fn scrape(url: &str) -> Vec<crate::metrics::Line> {
    let text = reqwest::get(url).await.unwrap().text().await.unwrap();
    crate::metrics::parse(&text)
}

pub(super) fn metric(
    lines: &[crate::metrics::Line],
    name: &str,
    label: Option<(&str, &str)>,
) -> f64 {
    lines
        .iter()
        .find(|(n, l, _)| {
            n == name && label.is_none_or(|(k, v)| l.get(k).map(String::as_str) == Some(v))
        })
        .unwrap_or_else(|| panic!("no metric {name} {label:?}"))
        .2
}
