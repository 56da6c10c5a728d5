//! The words of pending reasons and end reasons, as pure functions of their numbers, so
//! each is tested on its singular and plural ("1 free GPU", "2 free GPUs").

use std::collections::BTreeMap;

use gpusched_core::live::WaitReason;
use gpusched_core::room::{Lack, RoomWait};
use gpusched_wire::{agree, count, JobView};

/// The words of the core's reason why pending job `v` waits.
pub fn wait(why: &WaitReason, v: &JobView, policy: &str, now_s: f64) -> String {
    let model = v.gpu_model.as_deref();
    match why {
        WaitReason::Held { unmet } => {
            // The stored note of a held job says who held it.
            let by = if v.reason.is_empty() {
                "held"
            } else {
                v.reason.as_str()
            };
            let mut why = format!("{by}; release with `gpusched release {}`", v.id);
            if !unmet.is_empty() {
                why = format!("{why}; then {}", super::deps::waiting_words(unmet));
            }
            why
        }
        WaitReason::Dependency { unmet } => super::deps::waiting_words(unmet),
        WaitReason::Following { after, node } => format!(
            "queued on {node} behind job {after}: starts on its GPUs as soon as it ends \
             (a short job of the same kind; see --follow-under)"
        ),
        WaitReason::Reclaimed { node } => format!(
            "reclaimed queue `{}`'s quota on {node}: starts there first once the preempted \
             jobs have left",
            v.queue
        ),
        WaitReason::SliceQueueAtCap { held_milli, max } => queue_at_limit_slices(
            &v.queue,
            &gpusched_wire::milli_text((*held_milli).min(u64::from(u32::MAX)) as u32),
            *max,
        ),
        WaitReason::NoSliceRoom { mig } => {
            let kind = if *mig {
                "an idle instance, or free slices on a GPU whose agent may re-layout it"
            } else {
                "a GPU with that much compute and memory free"
            };
            let ask = v.slice.as_ref().map(|a| a.describe()).unwrap_or_default();
            format!(
                "waiting for {ask}{}: no online node has {kind} now",
                of_model(model)
            )
        }
        WaitReason::LargerThanQueue { max, gpus } => larger_than_queue(&v.queue, *max, *gpus),
        WaitReason::QueueAtCap { held, max } => queue_at_limit(&v.queue, *held, *max),
        WaitReason::UserAtCap { held, cap } => user_at_cap(&v.user, &v.queue, *held, *cap),
        WaitReason::PowerBudget { budget_w, would_w } => power_budget(*budget_w, *would_w),
        WaitReason::NodePowerBudget { node_w, gpus } => node_power_budget(*node_w, *gpus),
        WaitReason::NoImageRuntime => no_image_runtime(v.image.as_deref().unwrap_or("")),
        WaitReason::NoEligibleNode { refusals, more } => no_eligible_node(v, refusals, *more),
        WaitReason::ReservationGone { name } => format!(
            "reservation {name} no longer exists; cancel the job and submit it again without \
             --reservation (or with another)"
        ),
        WaitReason::ReservationClosed { name, start, end } => {
            reservation_closed(name, *start, *end, now_s)
        }
        WaitReason::KeptOutByReservation {
            name,
            start,
            open,
            walltime,
        } => kept_out_by_reservation(name, *start, *open, *walltime, now_s),
        WaitReason::EligibleBusy {
            eligible,
            gpus,
            free_max,
        } => eligible_busy(v, *eligible, *gpus, *free_max),
        WaitReason::NoNodeCanHold { gpus, model } => no_node_can_hold(*gpus, model.as_deref()),
        WaitReason::OutOfService { nodes } => out_of_service(nodes),
        // A replica needs a node whose agent serves replicas, which its own view does not
        // list among its resources (`live_map::SERVES`).
        WaitReason::NoNodeHasRoom if v.service.is_some() => format!(
            "{}; only agents of protocol 5 or later serve replicas (upgrade older ones)",
            no_node_has_room(v.gpus, v.cpu_milli, v.mem_mib, &v.resources).replacen(
                "no online node has",
                "no online node whose agent serves replicas has",
                1
            )
        ),
        WaitReason::NoNodeHasRoom if v.interactive => format!(
            "{}; only agents of protocol {} or later hold interactive allocations (upgrade \
             older ones)",
            no_node_has_room(v.gpus, v.cpu_milli, v.mem_mib, &v.resources).replacen(
                "no online node has",
                "no online node whose agent holds interactive allocations has",
                1
            ),
            gpusched_wire::agent::HOLD_PROTOCOL
        ),
        WaitReason::NoNodeHasRoom => no_node_has_room(v.gpus, v.cpu_milli, v.mem_mib, &v.resources),
        WaitReason::WaitingForRoom { node, wait } => waiting_for_room(node, wait),
        WaitReason::WaitingForGpus {
            gpus,
            model,
            free_max,
            waiting,
        } => waiting_for_free(*gpus, model.as_deref(), *free_max, *waiting),
        WaitReason::Reserved { head, node, shadow } => {
            let in_secs = shadow.map(|t| (t - now_s).max(0.0).round() as u64);
            reserved(*head, node, in_secs)
        }
        WaitReason::GangNeverFits {
            nodes,
            per_node,
            model,
            mixed,
            room,
            have,
        } => gang_never_fits(*nodes, *per_node, model.as_deref(), *mixed, *room, *have),
        WaitReason::WaitingForNodes {
            nodes,
            per_node,
            model,
            free_nodes,
            waiting,
        } => waiting_for_nodes(*nodes, *per_node, model.as_deref(), *free_nodes, *waiting),
        WaitReason::Behind { ahead } => behind(*ahead, policy),
        WaitReason::Next => "next to start (the scheduler runs on the next change)".to_string(),
    }
}

/// Nodes that could hold the job are all out of service: say which and why.
pub fn out_of_service(nodes: &[(String, String)]) -> String {
    let each: Vec<String> = nodes
        .iter()
        .map(|(name, why)| {
            if why.starts_with("drained") || why.starts_with("unreachable") {
                format!("{name} is {why}")
            } else {
                format!("{name}'s {why}")
            }
        })
        .collect();
    let unreachable = nodes.iter().any(|(_, why)| why.starts_with("unreachable"));
    let other = nodes.iter().any(|(_, why)| !why.starts_with("unreachable"));
    let hint = match (unreachable, other) {
        (true, false) => "an unreachable node takes work again once its agent is heard from",
        (true, true) => {
            "an unreachable node takes work again once its agent is heard from; an admin's \
             `gpusched resume NODE` puts a drained one back"
        }
        _ => "an admin's `gpusched resume NODE` puts a node back",
    };
    format!("no node can hold it now: {} ({hint})", each.join("; "))
}

/// ` of model A100*`, or nothing when any model will do.
pub fn of_model(model: Option<&str>) -> String {
    model.map(|m| format!(" of model {m}*")).unwrap_or_default()
}

/// A whole-GPU job held by its queue's `max`.
pub fn queue_at_limit(queue: &str, held: u32, max: u32) -> String {
    format!(
        "queue `{queue}` is at its limit: its jobs hold {held} of its {}",
        count(max, "GPU")
    )
}

/// A slice job held by its queue's `max` (`held` is already a text, e.g. `1.25`).
pub fn queue_at_limit_slices(queue: &str, held: &str, max: u32) -> String {
    format!(
        "queue `{queue}` is at its limit: its jobs hold {held} of its {} (parts of GPUs \
         count by their fraction, rounded up)",
        count(max, "GPU")
    )
}

/// A user whose jobs in a queue hold its `max_gpus_per_user`: their next job waits while
/// other users' jobs start.
pub fn user_at_cap(user: &str, queue: &str, held: u64, cap: u32) -> String {
    format!(
        "{user}'s jobs hold {held} of the {} one user may hold in queue `{queue}` \
         (max_gpus_per_user)",
        count(cap, "GPU")
    )
}

/// Watts as people read a budget: `850 W`, `12 kW`, `12.6 kW`.
pub fn watts_text(w: u64) -> String {
    if w < 1000 {
        format!("{w} W")
    } else if w.is_multiple_of(1000) {
        format!("{} kW", w / 1000)
    } else {
        format!("{:.1} kW", w as f64 / 1000.0)
    }
}

/// A job the cluster's power budget holds back (`gpusched serve --power-budget`).
pub fn power_budget(budget_w: u64, would_w: u64) -> String {
    format!(
        "power budget {}: starting this job would draw {} at the nodes' caps; it starts once \
         running jobs end and free the power",
        watts_text(budget_w),
        watts_text(would_w)
    )
}

/// A job every node's power budget keeps out (`gpusched serve --node-power-budget`).
pub fn node_power_budget(node_w: u64, gpus: u32) -> String {
    format!(
        "node power budget {}: no node with {} free may start that many more under it; it \
         starts once jobs end on one",
        watts_text(node_w),
        count(gpus, "GPU")
    )
}

/// A job that asks for more than its queue may ever hold: it could never start.
pub fn larger_than_queue(queue: &str, max: u32, gpus: u32) -> String {
    format!(
        "the job asks for {} but queue `{queue}` may hold at most {} (its `max`), so it \
         could never start; ask for at most {max} or submit to another queue",
        count(gpus, "GPU"),
        count(max, "GPU")
    )
}

/// No online node has enough GPUs (of the model) at all.
/// The job runs in a container image and no node's agent runs images.
pub fn no_image_runtime(image: &str) -> String {
    format!(
        "no node runs container images (this job's is {image}): start agents with podman, \
         apptainer or docker installed (--image-runtime, docs/containers.md)"
    )
}

pub fn no_node_can_hold(gpus: u32, model: Option<&str>) -> String {
    format!(
        "no online node can hold {}{}; waiting for such a node to come back",
        count(gpus, "GPU"),
        of_model(model)
    )
}

/// No online node has the job's GPUs together with its CPUs, memory and generic
/// resources, even idle.
pub fn no_node_has_room(
    gpus: u32,
    cpu_milli: u64,
    mem_mib: u64,
    resources: &BTreeMap<String, u64>,
) -> String {
    let mut parts = vec![count(gpus, "GPU")];
    if cpu_milli > 0 {
        parts.push(format!("{} CPUs", cpus(cpu_milli)));
    }
    if mem_mib > 0 {
        parts.push(format!("{mem_mib} MiB of memory"));
    }
    if !resources.is_empty() {
        parts.push(gpusched_wire::resource::describe(resources));
    }
    format!(
        "no online node has {} together; waiting for such a node to come back",
        parts.join(" with ")
    )
}

/// Thousandths of CPUs as users write them: `4`, `0.5`.
pub fn cpus(milli: u64) -> String {
    gpusched_wire::milli_text(milli.min(u64::from(u32::MAX)) as u32)
}

/// Nodes have the job's GPUs free, but not its CPUs, memory or generic resources:
/// what the one that comes closest lacks.
pub fn waiting_for_room(node: &str, wait: &RoomWait) -> String {
    let mut what = Vec::new();
    let mut detail = Vec::new();
    for lack in &wait.lacks {
        match lack {
            Lack::Cpus {
                asked_milli,
                free_milli,
            } => {
                what.push("CPUs".to_string());
                detail.push(format!(
                    "asks {} CPUs, {} free",
                    cpus(*asked_milli),
                    cpus(*free_milli)
                ));
            }
            Lack::Memory {
                asked_mib,
                free_mib,
            } => {
                what.push("memory".to_string());
                detail.push(format!(
                    "asks {asked_mib} MiB of memory, {free_mib} MiB free"
                ));
            }
            // A replica on a node whose agent is older than protocol 5.
            Lack::Generic { name, .. } if name == crate::live_map::SERVES => {
                what.push("an agent that serves replicas".to_string());
                detail.push(
                    "its agent is older than agent protocol 5, which replicas need; upgrade \
                     it"
                    .to_string(),
                );
            }
            // An interactive allocation on a node whose agent does not hold them.
            Lack::Generic { name, .. } if name == crate::live_map::HOLDS => {
                what.push("an agent that holds interactive allocations".to_string());
                detail.push(format!(
                    "its agent is older than agent protocol {}, which interactive \
                     allocations need; upgrade it",
                    gpusched_wire::agent::HOLD_PROTOCOL
                ));
            }
            Lack::Generic { name, asked, free } => {
                what.push(format!("`{name}`"));
                detail.push(format!("asks {name}={asked}, {free} free"));
            }
        }
    }
    let others = match wait.nodes {
        0 | 1 => String::new(),
        n => format!(
            "; {} {} its GPUs free but not the rest",
            count(n as u64, "node"),
            agree(n as u64, "has", "have")
        ),
    };
    format!(
        "waiting for {} on {node} ({}){others}",
        what.join("/"),
        detail.join("; ")
    )
}

/// Nodes that could hold it exist but none has enough free GPUs now.
pub fn waiting_for_free(gpus: u32, model: Option<&str>, free_max: u32, waiting: usize) -> String {
    format!(
        "waiting for {}{} on one node (at most {free_max} free on a node now; {} waiting)",
        count(gpus, "free GPU"),
        of_model(model),
        count(waiting as u64, "job")
    )
}

/// The nodes of a gang, as in "4 nodes with 8 GPUs of model A100* each".
fn gang_nodes(nodes: u32, per_node: u32, model: Option<&str>) -> String {
    format!(
        "{} with {}{} each",
        count(nodes, "node"),
        count(per_node, "GPU"),
        of_model(model)
    )
}

/// A gang no set of online nodes could ever hold.
pub fn gang_never_fits(
    nodes: u32,
    per_node: u32,
    model: Option<&str>,
    mixed: bool,
    room: bool,
    have: u32,
) -> String {
    let same = if mixed || nodes < 2 {
        ""
    } else {
        ", all of one GPU model"
    };
    let room = if room {
        " (with the job's CPUs, memory and resources on each)"
    } else {
        ""
    };
    format!(
        "needs {}{same}{room}; the cluster has {}; waiting for more to come online (or \
         ask for fewer nodes{})",
        gang_nodes(nodes, per_node, model),
        count(have, "such node"),
        if mixed || nodes < 2 {
            ""
        } else {
            ", or allow --mixed-models"
        }
    )
}

/// A gang waiting for enough nodes with its GPUs free.
pub fn waiting_for_nodes(
    nodes: u32,
    per_node: u32,
    model: Option<&str>,
    free_nodes: u32,
    waiting: usize,
) -> String {
    format!(
        "waiting for {} free at once ({} {} them now; {} waiting)",
        gang_nodes(nodes, per_node, model),
        free_nodes,
        agree(u64::from(free_nodes), "has", "have"),
        count(waiting as u64, "job")
    )
}

/// Resources are free but jobs ahead of it in the policy's order start first.
pub fn behind(ahead: usize, policy: &str) -> String {
    format!(
        "behind {} that {} first under the `{policy}` policy",
        count(ahead as u64, "job"),
        agree(ahead as u64, "comes", "come")
    )
}

/// A job held by the blocked head job's backfill reservation (free in `in_secs`, when
/// walltimes say).
pub fn reserved(head: u64, node: &str, in_secs: Option<u64>) -> String {
    let when = match in_secs {
        Some(secs) => format!("expected free in about {}", count(secs, "second")),
        None => "no running job there has a walltime, so nobody knows when".to_string(),
    };
    format!(
        "GPUs are free, but job {head} reserved them on {node} under `backfill` ({when}); \
         a job goes ahead of it only if its walltime (`-t`) ends before then or it fits on \
         GPUs job {head} will not need"
    )
}

/// A job whose node was lost once too often.
pub fn no_retries_left(lost: u32, node: &str, why: &str, max_retries: u32) -> String {
    format!(
        "lost {}, the last on {node}: {why}; no retries left (max_retries = {max_retries})",
        count(lost, "time")
    )
}

/// No online node is one the job's rules admit: each node and the rule that keeps it off.
pub fn no_eligible_node(
    v: &JobView,
    refusals: &[(String, gpusched_core::eligible::Refusal)],
    more: usize,
) -> String {
    let what = v.rules.as_ref().map(|r| r.describe()).unwrap_or_default();
    if refusals.is_empty() {
        return format!("{what}: no node is online; it starts when one its rules admit registers");
    }
    let mut each: Vec<String> = refusals.iter().map(|(n, r)| format!("{n} {r}")).collect();
    if more > 0 {
        each.push(format!("{more} more"));
    }
    format!(
        "{what}: no online node is one it may use ({}); it starts once such a node is online; to run elsewhere, cancel it and submit with other rules",
        each.join("; ")
    )
}

/// Nodes the job's rules admit exist, but none has its GPUs free.
pub fn eligible_busy(v: &JobView, eligible: u32, gpus: u32, free_max: u32) -> String {
    let what = v.rules.as_ref().map(|r| r.describe()).unwrap_or_default();
    format!(
        "{what}: no node it may use has {} free (the most free on one of the {} it may use \
         is {free_max})",
        count(u64::from(gpus), "GPU"),
        count(u64::from(eligible), "node"),
    )
}

/// A job of a reservation whose window is not open.
pub fn reservation_closed(name: &str, start: f64, end: f64, now_s: f64) -> String {
    let secs = |t: f64| gpusched_wire::duration::format_duration(t.max(0.0).round() as u64);
    if now_s < start {
        format!(
            "runs in reservation {name}, whose window opens in {}",
            secs(start - now_s)
        )
    } else {
        format!(
            "reservation {name}'s window closed {} ago; cancel the job, or submit it again \
             without --reservation",
            secs(now_s - end)
        )
    }
}

/// A job kept off a reservation's nodes, the only ones that could hold it now.
pub fn kept_out_by_reservation(
    name: &str,
    start: f64,
    open: bool,
    walltime: bool,
    now_s: f64,
) -> String {
    if open {
        return format!(
            "the nodes that could hold it are in reservation {name}'s window now; it starts \
             when GPUs outside it are free, or once the window closes"
        );
    }
    let left = gpusched_wire::duration::format_duration((start - now_s).max(0.0).round() as u64);
    if walltime {
        format!(
            "the nodes that could hold it are reserved by {name} in {left}, before its \
             walltime would end; it starts elsewhere or after the window (a shorter \
             --walltime may let it in now)"
        )
    } else {
        format!(
            "the nodes that could hold it are reserved by {name} in {left}; a job without a \
             walltime never starts on a reserved node before its window (give --walltime)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_reasons_name_what_is_missing_and_where() {
        let wait = RoomWait {
            node: gpusched_core::NodeId(0),
            lacks: vec![
                Lack::Cpus {
                    asked_milli: 4000,
                    free_milli: 1500,
                },
                Lack::Memory {
                    asked_mib: 8192,
                    free_mib: 1024,
                },
            ],
            nodes: 1,
        };
        assert_eq!(
            waiting_for_room("n1", &wait),
            "waiting for CPUs/memory on n1 (asks 4 CPUs, 1.5 free; asks 8192 MiB of memory, \
             1024 MiB free)"
        );
        let wait = RoomWait {
            node: gpusched_core::NodeId(0),
            lacks: vec![Lack::Generic {
                name: "fpga".into(),
                asked: 1,
                free: 0,
            }],
            nodes: 2,
        };
        assert_eq!(
            waiting_for_room("n1", &wait),
            "waiting for `fpga` on n1 (asks fpga=1, 0 free); 2 nodes have its GPUs free but \
             not the rest"
        );
        let fpga: BTreeMap<String, u64> = [("fpga".to_string(), 1)].into();
        assert_eq!(
            no_node_has_room(0, 500, 0, &fpga),
            "no online node has 0 GPUs with 0.5 CPUs with fpga=1 together; waiting for such a \
             node to come back"
        );
    }

    #[test]
    fn gang_reasons_say_how_many_nodes_and_how_many_exist() {
        assert_eq!(
            gang_never_fits(4, 8, Some("A100"), false, false, 2),
            "needs 4 nodes with 8 GPUs of model A100* each, all of one GPU model; the cluster \
             has 2 such nodes; waiting for more to come online (or ask for fewer nodes, or \
             allow --mixed-models)"
        );
        assert_eq!(
            gang_never_fits(2, 1, None, true, true, 1),
            "needs 2 nodes with 1 GPU each (with the job's CPUs, memory and resources on \
             each); the cluster has 1 such node; waiting for more to come online (or ask for \
             fewer nodes)"
        );
        assert_eq!(
            waiting_for_nodes(2, 4, None, 1, 3),
            "waiting for 2 nodes with 4 GPUs each free at once (1 has them now; 3 jobs waiting)"
        );
        assert_eq!(
            waiting_for_nodes(3, 1, None, 0, 1),
            "waiting for 3 nodes with 1 GPU each free at once (0 have them now; 1 job waiting)"
        );
    }

    #[test]
    fn a_job_with_rules_says_which_hold_it() {
        let v: JobView = serde_json::from_value(serde_json::json!({
            "id": 7, "user": "ann", "queue": "batch", "gpus": 4, "state": "pending",
            "submit_ms": 0, "command": ["true"], "priority": 0, "reason": "",
            "attempt": 1, "max_retries": 0, "name": "", "cwd": "/", "gpu_indices": [],
            "cancel_requested": false,
            "rules": {"partitions": ["h100"], "constraint": "ib"}
        }))
        .unwrap_or_else(|e| panic!("a view with rules: {e}"));
        use gpusched_core::eligible::Refusal;
        assert_eq!(
            eligible_busy(&v, 2, 4, 1),
            "partition h100, constraint ib: no node it may use has 4 GPUs free (the most \
             free on one of the 2 nodes it may use is 1)"
        );
        assert_eq!(
            eligible_busy(&v, 1, 1, 0),
            "partition h100, constraint ib: no node it may use has 1 GPU free (the most \
             free on one of the 1 node it may use is 0)"
        );
        let refusals = vec![
            ("n1".to_string(), Refusal::Partition),
            ("n2".to_string(), Refusal::Constraint),
        ];
        assert_eq!(
            no_eligible_node(&v, &refusals, 3),
            "partition h100, constraint ib: no online node is one it may use (n1 outside its \
             partitions; n2 without its constraint's features; 3 more); it starts once such \
             a node is online; to run elsewhere, cancel it and submit with other rules"
        );
    }

    #[test]
    fn the_cores_reasons_keep_their_words() {
        let v: JobView = serde_json::from_value(serde_json::json!({
            "id": 7, "user": "ann", "queue": "batch", "gpus": 2, "state": "pending",
            "submit_ms": 0, "command": ["true"], "priority": 0, "reason": "",
            "attempt": 1, "max_retries": 0, "name": "", "cwd": "/", "gpu_indices": [],
            "cancel_requested": false
        }))
        .unwrap_or_else(|e| panic!("a minimal view: {e}"));
        use gpusched_core::live::After;
        assert_eq!(
            wait(
                &WaitReason::Dependency {
                    unmet: vec![(After::Ok, 3)]
                },
                &v,
                "fifo",
                0.0
            ),
            "dependency: waiting for job 3 to succeed"
        );
        assert_eq!(
            wait(
                &WaitReason::Dependency {
                    unmet: vec![(After::Ok, 3), (After::Ok, 4)]
                },
                &v,
                "fifo",
                0.0
            ),
            "dependency: waiting for jobs 3, 4 to succeed"
        );
        assert_eq!(
            wait(
                &WaitReason::Held {
                    unmet: vec![(After::Any, 5)]
                },
                &v,
                "fifo",
                0.0
            ),
            "held; release with `gpusched release 7`; then dependency: waiting for job 5 \
             to end (however it ends)"
        );
        assert_eq!(
            wait(
                &WaitReason::Following {
                    after: 3,
                    node: "n1".into()
                },
                &v,
                "fifo",
                0.0
            ),
            "queued on n1 behind job 3: starts on its GPUs as soon as it ends (a short job \
             of the same kind; see --follow-under)"
        );
        assert_eq!(
            wait(&WaitReason::UserAtCap { held: 2, cap: 2 }, &v, "fifo", 0.0),
            user_at_cap("ann", "batch", 2, 2)
        );
        assert_eq!(
            wait(
                &WaitReason::PowerBudget {
                    budget_w: 12_000,
                    would_w: 12_600
                },
                &v,
                "fifo",
                0.0
            ),
            "power budget 12 kW: starting this job would draw 12.6 kW at the nodes' caps; it \
             starts once running jobs end and free the power"
        );
        assert_eq!(
            wait(
                &WaitReason::NodePowerBudget {
                    node_w: 850,
                    gpus: 2
                },
                &v,
                "fifo",
                0.0
            ),
            "node power budget 850 W: no node with 2 GPUs free may start that many more under \
             it; it starts once jobs end on one"
        );
        assert_eq!(
            wait(&WaitReason::Behind { ahead: 2 }, &v, "sjf", 0.0),
            behind(2, "sjf")
        );
    }

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(
            waiting_for_free(1, None, 0, 1),
            "waiting for 1 free GPU on one node (at most 0 free on a node now; 1 job waiting)"
        );
        assert_eq!(
            waiting_for_free(2, Some("A100"), 1, 3),
            "waiting for 2 free GPUs of model A100* on one node (at most 1 free on a node \
             now; 3 jobs waiting)"
        );
        assert_eq!(
            behind(1, "fifo"),
            "behind 1 job that comes first under the `fifo` policy"
        );
        assert_eq!(
            behind(2, "fifo"),
            "behind 2 jobs that come first under the `fifo` policy"
        );
        assert!(no_retries_left(1, "n1", "gone", 0).starts_with("lost 1 time, the last on n1"));
        assert!(no_retries_left(4, "n1", "gone", 3).starts_with("lost 4 times,"));
        assert_eq!(
            no_node_can_hold(1, None),
            "no online node can hold 1 GPU; waiting for such a node to come back"
        );
        assert!(no_node_can_hold(8, Some("H100")).contains("hold 8 GPUs of model H100*;"));
        assert_eq!(
            queue_at_limit("a", 1, 1),
            "queue `a` is at its limit: its jobs hold 1 of its 1 GPU"
        );
        assert!(queue_at_limit("a", 0, 2).ends_with("hold 0 of its 2 GPUs"));
        assert!(queue_at_limit_slices("a", "0.5", 1).contains("hold 0.5 of its 1 GPU (parts"));
        assert_eq!(
            larger_than_queue("batch", 1, 4),
            "the job asks for 4 GPUs but queue `batch` may hold at most 1 GPU (its `max`), so \
             it could never start; ask for at most 1 or submit to another queue"
        );
    }
}
