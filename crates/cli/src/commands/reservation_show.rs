//! `gpusched reservation ls` and `reservation show NAME`: reservations as a table and as
//! `label: value` lines (as `show` prints a job), times in local time with how far away
//! they are. The text is made by pure functions of the answer, `now` and the zone.

use gpusched_wire::reservation::{ReservationState, ReservationView};

use super::fmt::{now_ms, table, terminal_safe};
use super::reservation::{ListArgs, NameArgs};
use super::reservation_time::{approx, local_time, relative, Local, Zone};

pub async fn list(a: ListArgs) -> anyhow::Result<()> {
    let list = a.conn.client()?.reservations().await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if list.reservations.is_empty() {
        println!(
            "No reservations; an admin creates one with `gpusched reservation create` \
             (docs/reservations.md)"
        );
        return Ok(());
    }
    print!("{}", list_table(&list.reservations, now_ms(), &Local));
    Ok(())
}

pub async fn show(a: NameArgs) -> anyhow::Result<()> {
    let v = a.conn.client()?.reservation(&a.name).await?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    print!("{}", lines(&v, now_ms(), &Local));
    Ok(())
}

/// The `ls` table, soonest window first (then by name).
pub fn list_table(list: &[ReservationView], now_ms: u64, zone: &dyn Zone) -> String {
    let mut sorted: Vec<&ReservationView> = list.iter().collect();
    sorted.sort_by(|a, b| (a.spec.start_ms, &a.spec.name).cmp(&(b.spec.start_ms, &b.spec.name)));
    let rows: Vec<Vec<String>> = sorted
        .iter()
        .map(|v| {
            let mut start = local_time(v.spec.start_ms, zone);
            let mut end = local_time(v.end_ms, zone);
            match v.state {
                ReservationState::Waiting => {
                    start = format!("{start} ({})", relative(v.spec.start_ms, now_ms));
                }
                ReservationState::Active => {
                    end = format!("{end} (ends {})", relative(v.end_ms, now_ms));
                }
                ReservationState::Ended => {}
            }
            vec![
                v.spec.name.clone(),
                state_name(v.state).into(),
                start,
                end,
                nodes_short(&v.nodes),
                v.gpus.to_string(),
                for_short(v),
                v.jobs.len().to_string(),
            ]
        })
        .collect();
    table(
        &[
            "NAME", "STATE", "START", "END", "NODES", "GPUS", "FOR", "JOBS",
        ],
        &rows,
    )
}

/// The `show` lines, every value through [`terminal_safe`] (names are users' text).
pub fn lines(v: &ReservationView, now_ms: u64, zone: &dyn Zone) -> String {
    let s = &v.spec;
    let holds = match s.gpus {
        Some(k) => {
            let mut asked = gpusched_wire::count(k, "GPU");
            if let Some(m) = &s.gpu_model {
                asked.push_str(&format!(" of model {m}"));
            }
            if let Some(f) = &s.features {
                asked.push_str(&format!(" on nodes with {f}"));
            }
            format!(
                "{} on {} (asked: {asked}; the server picked the nodes)",
                gpusched_wire::count(v.gpus, "GPU"),
                gpusched_wire::count(v.nodes.len() as u64, "node")
            )
        }
        None => format!(
            "{} on {} (named)",
            gpusched_wire::count(v.gpus, "GPU"),
            gpusched_wire::count(v.nodes.len() as u64, "node")
        ),
    };
    let who = if s.maintenance {
        "no job: a maintenance window (its nodes drain as it opens)".to_string()
    } else if s.users.is_empty() && s.queues.is_empty() {
        "admins' jobs only".to_string()
    } else {
        let mut parts = Vec::new();
        if !s.users.is_empty() {
            parts.push(format!("users {}", s.users.join(", ")));
        }
        if !s.queues.is_empty() {
            parts.push(format!("queues {}", s.queues.join(", ")));
        }
        format!("jobs of {}", parts.join(" or of "))
    };
    let jobs = if v.jobs.is_empty() {
        "none".to_string()
    } else {
        v.jobs
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let fields = [
        ("name", s.name.clone()),
        ("state", state_name(v.state).into()),
        (
            "start",
            format!(
                "{} local time ({})",
                local_time(s.start_ms, zone),
                relative(s.start_ms, now_ms)
            ),
        ),
        (
            "end",
            format!(
                "{} local time ({})",
                local_time(v.end_ms, zone),
                relative(v.end_ms, now_ms)
            ),
        ),
        ("duration", approx(s.duration_s.saturating_mul(1000))),
        ("holds", holds),
        ("nodes", v.nodes.join(", ")),
        ("for", who),
        ("jobs", jobs),
        (
            "created",
            format!(
                "by {} at {} local time",
                v.created_by,
                local_time(v.created_ms, zone)
            ),
        ),
    ];
    fields
        .iter()
        .map(|(k, v)| format!("{k:>12}: {}\n", terminal_safe(v)))
        .collect()
}

/// One line after `Created` / `Updated`: `reservation workshop: 16 GPUs on 2 nodes
/// (n1,n2), 2026-12-11 09:00 to 2026-12-11 13:00 local time (opens in 2d 21h), for
/// alice,bob`.
pub fn summary(v: &ReservationView, now_ms: u64, zone: &dyn Zone) -> String {
    let when = match v.state {
        ReservationState::Waiting => format!("opens {}", relative(v.spec.start_ms, now_ms)),
        ReservationState::Active => format!("open, ends {}", relative(v.end_ms, now_ms)),
        ReservationState::Ended => format!("ended {}", relative(v.end_ms, now_ms)),
    };
    let line = format!(
        "reservation {}: {} on {} ({}), {} to {} local time ({when}), for {}",
        v.spec.name,
        gpusched_wire::count(v.gpus, "GPU"),
        gpusched_wire::count(v.nodes.len() as u64, "node"),
        first_few(&v.nodes),
        local_time(v.spec.start_ms, zone),
        local_time(v.end_ms, zone),
        for_short(v)
    );
    terminal_safe(&line).into_owned()
}

fn state_name(s: ReservationState) -> &'static str {
    match s {
        ReservationState::Waiting => "waiting",
        ReservationState::Active => "active",
        ReservationState::Ended => "ended",
    }
}

/// How many nodes and the first few: `2 (n1,n2)`, past three `8 (n1,n2 +6)`.
fn nodes_short(nodes: &[String]) -> String {
    match nodes.len() {
        0 => "0".into(),
        n => format!("{n} ({})", first_few(nodes)),
    }
}

/// All of up to three names, else the first two and how many more: `n1,n2 +6`.
fn first_few(nodes: &[String]) -> String {
    if nodes.len() <= 3 {
        nodes.join(",")
    } else {
        format!("{} +{}", nodes[..2].join(","), nodes.len() - 2)
    }
}

/// Whose jobs may run in it: `alice,bob`, `queue ml`, `alice; queues ml,cv`,
/// `maintenance`, or `admins` when it names no one.
fn for_short(v: &ReservationView) -> String {
    let s = &v.spec;
    if s.maintenance {
        return "maintenance".into();
    }
    let mut parts = Vec::new();
    if !s.users.is_empty() {
        parts.push(s.users.join(","));
    }
    match s.queues.len() {
        0 => {}
        1 => parts.push(format!("queue {}", s.queues[0])),
        _ => parts.push(format!("queues {}", s.queues.join(","))),
    }
    if parts.is_empty() {
        "admins".into()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::super::reservation_time::Fixed;
    use super::*;
    use gpusched_wire::reservation::ReservationList;

    /// 2026-12-08 12:00:00 UTC.
    const NOW: u64 = 1_796_731_200_000;
    const H: u64 = 3_600_000;

    /// Three reservations as the server would list them (not in start order): a
    /// maintenance window open now, a workshop on Friday, one for a queue that ended.
    fn fixture() -> ReservationList {
        serde_json::from_value(serde_json::json!({"reservations": [
            {
                "spec": {"name": "workshop", "start_ms": NOW + 69 * H, "duration_s": 4 * 3600,
                         "gpus": 16, "gpu_model": "a100", "users": ["alice", "bob"]},
                "nodes": ["a1", "a2"], "gpus": 16, "state": "waiting",
                "end_ms": NOW + 73 * H, "created_by": "root", "created_ms": NOW - 2 * H,
                "jobs": [41, 42]
            },
            {
                "spec": {"name": "fw-upgrade", "start_ms": NOW - H, "duration_s": 3 * 3600,
                         "nodes": ["n1", "n2", "n3", "n4", "n5"], "maintenance": true},
                "nodes": ["n1", "n2", "n3", "n4", "n5"], "gpus": 40, "state": "active",
                "end_ms": NOW + 2 * H + 30 * 60_000, "created_by": "ops",
                "created_ms": NOW - 30 * H
            },
            {
                "spec": {"name": "deadline", "start_ms": NOW - 10 * H, "duration_s": 8 * 3600,
                         "nodes": ["h1"], "queues": ["ml", "cv"], "users": ["carol"]},
                "nodes": ["h1"], "gpus": 8, "state": "ended",
                "end_ms": NOW - 2 * H, "created_by": "root", "created_ms": NOW - 50 * H,
                "jobs": []
            }
        ]}))
        .unwrap()
    }

    #[test]
    fn ls_is_a_table_soonest_first_in_local_time() {
        let t = list_table(&fixture().reservations, NOW, &Fixed(3600));
        assert_eq!(
            t,
            "\
NAME        STATE    START                         END                                NODES         GPUS  FOR                  JOBS
deadline    ended    2026-12-08 03:00              2026-12-08 11:00                   1 (h1)        8     carol; queues ml,cv  0
fw-upgrade  active   2026-12-08 12:00              2026-12-08 15:30 (ends in 2h 30m)  5 (n1,n2 +3)  40    maintenance          0
workshop    waiting  2026-12-11 10:00 (in 2d 21h)  2026-12-11 14:00                   2 (a1,a2)     16    alice,bob            2
"
        );
    }

    #[test]
    fn show_has_one_line_per_fact() {
        let list = fixture().reservations;
        let t = lines(&list[0], NOW, &Fixed(0));
        assert_eq!(
            t,
            "        name: workshop
       state: waiting
       start: 2026-12-11 09:00 local time (in 2d 21h)
         end: 2026-12-11 13:00 local time (in 3d 1h)
    duration: 4h
       holds: 16 GPUs on 2 nodes (asked: 16 GPUs of model a100; the server picked the nodes)
       nodes: a1, a2
         for: jobs of users alice, bob
        jobs: 41, 42
     created: by root at 2026-12-08 10:00 local time
"
        );
        let t = lines(&list[1], NOW, &Fixed(0));
        assert!(t.contains("    holds: 40 GPUs on 5 nodes (named)\n"), "{t}");
        assert!(t.contains("for: no job: a maintenance window"), "{t}");
        assert!(
            t.contains("start: 2026-12-08 11:00 local time (1h ago)\n"),
            "{t}"
        );
        assert!(t.contains("jobs: none\n"), "{t}");
        let t = lines(&list[2], NOW, &Fixed(0));
        assert!(
            t.contains("for: jobs of users carol or of queues ml, cv\n"),
            "{t}"
        );
    }

    #[test]
    fn create_and_update_say_it_in_one_line() {
        let list = fixture().reservations;
        assert_eq!(
            summary(&list[0], NOW, &Fixed(0)),
            "reservation workshop: 16 GPUs on 2 nodes (a1,a2), 2026-12-11 09:00 to 2026-12-11 13:00 \
             local time (opens in 2d 21h), for alice,bob"
        );
        assert!(
            summary(&list[1], NOW, &Fixed(0)).contains("(open, ends in 2h 30m), for maintenance")
        );
    }

    #[test]
    fn users_text_never_reaches_the_terminal_raw() {
        let mut v = fixture().reservations.remove(0);
        v.created_by = "evil\x1b]0;x\x07".into();
        let t = lines(&v, NOW, &Fixed(0));
        assert!(!t.contains('\x1b') && !t.contains('\x07'), "{t:?}");
        assert!(!summary(&v, NOW, &Fixed(0)).contains('\x1b'));
    }
}
