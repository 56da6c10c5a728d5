//! `gpusched service ls` and `service show NAME`: services as tables and `label: value`
//! lines, every user's text through `terminal_safe` (as `show` prints a job).

use gpusched_wire::{ReplicaPhase, ServeProtocol, ServiceView};

use super::fmt::{table, terminal_safe, time};
use super::service::{ListArgs, NameArgs};

pub async fn list(a: ListArgs) -> anyhow::Result<()> {
    let list = a.conn.client()?.services().await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if list.services.is_empty() {
        println!("No services; start one with `gpusched service create FILE` (docs/services.md)");
        return Ok(());
    }
    print!("{}", list_table(&list.services));
    Ok(())
}

fn list_table(services: &[ServiceView]) -> String {
    let rows: Vec<Vec<String>> = services
        .iter()
        .map(|v| {
            vec![
                v.spec.name.clone(),
                v.version.to_string(),
                format!("{}/{}", v.ready, v.desired),
                protocol(v.spec.protocol).into(),
                v.status.clone(),
            ]
        })
        .collect();
    table(
        &["NAME", "VERSION", "READY/DESIRED", "PROTOCOL", "STATUS"],
        &rows,
    )
}

pub async fn show(a: NameArgs) -> anyhow::Result<()> {
    let v = a.conn.client()?.service(&a.name).await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    print!("{}", describe(&v));
    Ok(())
}

fn protocol(p: ServeProtocol) -> &'static str {
    match p {
        ServeProtocol::Oip => "oip",
        ServeProtocol::Openai => "openai",
    }
}

fn phase(p: ReplicaPhase) -> &'static str {
    match p {
        ReplicaPhase::Waiting => "waiting",
        ReplicaPhase::Starting => "starting",
        ReplicaPhase::Ready => "ready",
        ReplicaPhase::Draining => "draining",
    }
}

/// The service's lines, then its replicas as a table.
fn describe(v: &ServiceView) -> String {
    let s = &v.spec;
    let scaling = match &s.autoscale {
        Some(a) => format!(
            "autoscale {}..{} at {} in flight per replica{}",
            a.min,
            a.max,
            a.target_in_flight,
            a.latency_p95_ms
                .map(|ms| format!(" or p95 over {ms} ms"))
                .unwrap_or_default()
        ),
        None => gpusched_wire::count(s.replicas.unwrap_or(1), "replica"),
    };
    let models: Vec<String> = s
        .served_models()
        .iter()
        .map(|m| match &m.batching {
            Some(b) => format!(
                "{} (batches of up to {}, waiting up to {} us)",
                m.name, b.max_batch_size, b.max_queue_delay_us
            ),
            None => m.name.clone(),
        })
        .collect();
    let probe = |p: &Option<gpusched_wire::Probe>, none: &str| match p {
        Some(p) => format!(
            "{} every {} s, {} failures in a row",
            p.path.as_deref().unwrap_or("TCP connect"),
            p.period_s,
            p.failure_threshold
        ),
        None => none.to_string(),
    };
    let mut lines = vec![
        ("name", s.name.clone()),
        ("user", v.user.clone()),
        ("version", v.version.to_string()),
        ("status", v.status.clone()),
        (
            "replicas",
            format!(
                "{} ready of {} wanted ({} of the current version); {scaling}",
                v.ready, v.desired, v.updated_ready
            ),
        ),
        ("in flight", v.in_flight.to_string()),
        ("protocol", protocol(s.protocol).into()),
        ("models", models.join(", ")),
        // Another user's service comes without its command (it may hold secrets).
        (
            "command",
            if s.replica.command.is_empty() {
                "(hidden: only its owner and admins see it)".to_string()
            } else {
                super::fmt::command_line(&s.replica.command)
            },
        ),
        (
            "readiness",
            probe(&s.readiness, "the port accepts a connection"),
        ),
        (
            "liveness",
            probe(&s.liveness, "none (restarted when it exits)"),
        ),
        (
            "rollout",
            format!(
                "max surge {}, max unavailable {}, drain {} s",
                s.rollout.max_surge, s.rollout.max_unavailable, s.rollout.drain_s
            ),
        ),
        ("created", time(v.created_ms)),
        ("updated", time(v.updated_ms)),
    ];
    if v.failures > 0 {
        lines.push(("failures", format!("{} in a row", v.failures)));
    }
    if let Some(t) = v.backoff_until_ms {
        lines.push(("next restart", time(t)));
    }
    let mut out: String = lines
        .into_iter()
        .map(|(k, val)| format!("{k:>12}: {}\n", terminal_safe(&val)))
        .collect();
    out.push_str(&format!("{:>12}:", "replica jobs"));
    if v.replicas_list.is_empty() {
        out.push_str(" none\n");
        return out;
    }
    out.push('\n');
    let rows: Vec<Vec<String>> = v
        .replicas_list
        .iter()
        .map(|r| {
            vec![
                r.job.to_string(),
                r.version.to_string(),
                phase(r.phase).into(),
                r.node.clone().unwrap_or_else(|| "-".into()),
                r.url.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    for line in table(&["JOB", "VERSION", "PHASE", "NODE", "URL"], &rows).lines() {
        out.push_str(&format!("{:>14}{line}\n", ""));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> ServiceView {
        serde_json::from_value(serde_json::json!({
            "spec": {"name": "resnet", "replica": {"command": ["python", "serve.py"]},
                     "replicas": 2},
            "user": "alice", "version": 3, "created_ms": 0, "updated_ms": 0,
            "desired": 2, "ready": 1, "updated_ready": 1, "failures": 0,
            "status": "rolling out version 3: 1 of 2 ready", "in_flight": 5,
            "replicas_list": [
                {"job": 41, "version": 2, "phase": "ready", "node": "n1",
                 "url": "http://10.0.0.1:40001"},
                {"job": 44, "version": 3, "phase": "starting", "node": "n2"},
                {"job": 45, "version": 3, "phase": "waiting"}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn the_list_has_one_row_per_service() {
        let t = list_table(&[view()]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("NAME    VERSION  READY/DESIRED  PROTOCOL  STATUS"));
        assert!(lines[1].starts_with("resnet  3        1/2            oip       rolling out"));
    }

    #[test]
    fn show_lists_the_spec_and_every_replica() {
        let out = describe(&view());
        assert!(out.contains("     version: 3\n"), "{out}");
        assert!(out.contains("1 ready of 2 wanted (1 of the current version); 2 replicas"));
        assert!(out.contains("      models: resnet\n"), "{out}");
        assert!(
            out.contains("   readiness: the port accepts a connection\n"),
            "{out}"
        );
        assert!(
            out.contains("41   2        ready     n1    http://10.0.0.1:40001"),
            "{out}"
        );
        assert!(out.contains("45   3        waiting   -     -"), "{out}");
        assert!(!out.contains("failures"), "{out}");
        let mut theirs = view();
        theirs.spec.replica.command.clear();
        assert!(describe(&theirs).contains("     command: (hidden: only its owner"));
    }

    #[test]
    fn users_text_cannot_reach_the_terminal_raw() {
        let mut v = view();
        v.status = "evil\x1b]0;x\x07".into();
        let out = describe(&v);
        assert!(!out.contains('\x1b'), "{out:?}");
    }
}
