//! The launch environment of a distributed job's part: which processes the agent
//! starts on this node, each with its ranks and GPUs, and the variables every one of
//! them gets (`MASTER_ADDR`, `MASTER_PORT`, `NNODES`, `NODE_RANK`, `GPUS_PER_NODE`,
//! `WORLD_SIZE`, `GPUSCHED_HOSTFILE`; with `tasks_per_node` K also `RANK`,
//! `LOCAL_RANK`, `LOCAL_WORLD_SIZE` and a slice of the GPUs). Pure: the launcher
//! supplies the node's address, the port and the hostfile's path.

use std::path::Path;

use gpusched_wire::{DistHost, DistLaunch, Launch};

/// One process to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proc {
    /// The global `RANK` with `tasks_per_node`; `None` for the one process of a part
    /// without it (a launcher such as torchrun makes the ranks).
    pub rank: Option<u32>,
    /// Node-local GPU indices it sees, in the launch's order.
    pub gpus: Vec<u32>,
    /// Its own variables (`RANK`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`).
    pub env: Vec<(String, String)>,
}

/// What the launcher starts for one part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Variables every process gets.
    pub env: Vec<(String, String)>,
    /// In local rank order; never empty.
    pub procs: Vec<Proc>,
    /// The hostfile's text (`addr slots=N` per node, rank order); `None` when the job
    /// gets no distributed environment.
    pub hostfile: Option<String>,
}

/// Whether `launch` gets the distributed environment: every job the server sent one
/// for, and, from an older server, every job with GPUs (as a job of one node).
pub fn wants_env(launch: &Launch) -> bool {
    launch.dist.is_some() || !launch.gpus.is_empty()
}

/// The dist of `launch`, or the one of a job of one node with one process.
fn dist_of(launch: &Launch) -> DistLaunch {
    launch.dist.clone().unwrap_or(DistLaunch {
        nnodes: 1,
        node_rank: 0,
        gpus_per_node: launch.gpus.len() as u32,
        tasks_per_node: None,
        master_addr: None,
        master_port: None,
        hosts: Vec::new(),
    })
}

/// The plan for `launch` on a node reachable at `own_addr`. `master_port` is the
/// job's port (the server's for a gang, the agent's own pick for a job of one node);
/// `hostfile` is where the hostfile will be written. `Err` says what is wrong with the
/// launch, for a `SpawnFailed` outcome.
pub fn plan(
    launch: &Launch,
    own_addr: &str,
    master_port: Option<u16>,
    hostfile: &Path,
) -> Result<Plan, String> {
    if !wants_env(launch) {
        return Ok(Plan {
            env: Vec::new(),
            procs: vec![Proc {
                rank: None,
                gpus: Vec::new(),
                env: Vec::new(),
            }],
            hostfile: None,
        });
    }
    let d = dist_of(launch);
    if d.nnodes == 0 || d.node_rank >= d.nnodes {
        return Err(format!(
            "the server sent node rank {} of {} nodes; the job's parts do not add up \
             (report this as a gpusched bug)",
            d.node_rank, d.nnodes
        ));
    }
    let Some(port) = d.master_port.or(master_port) else {
        return Err(format!(
            "the server sent no MASTER_PORT for part {} of a job of {} nodes (report this as \
             a gpusched bug)",
            d.node_rank, d.nnodes
        ));
    };
    let master = d
        .master_addr
        .clone()
        .unwrap_or_else(|| own_addr.to_string());
    let tasks = match d.tasks_per_node {
        Some(0) => return Err("tasks_per_node must be at least 1".to_string()),
        other => other,
    };
    let per_node_ranks = tasks.unwrap_or(d.gpus_per_node);
    let world = d.nnodes.saturating_mul(per_node_ranks);
    let hostfile_text = hosts_text(&d, own_addr);
    let env = vec![
        ("MASTER_ADDR".to_string(), master),
        ("MASTER_PORT".to_string(), port.to_string()),
        ("NNODES".to_string(), d.nnodes.to_string()),
        ("NODE_RANK".to_string(), d.node_rank.to_string()),
        ("GPUS_PER_NODE".to_string(), d.gpus_per_node.to_string()),
        ("WORLD_SIZE".to_string(), world.to_string()),
        (
            "GPUSCHED_HOSTFILE".to_string(),
            hostfile.to_string_lossy().into_owned(),
        ),
    ];
    let procs = match tasks {
        None => vec![Proc {
            rank: None,
            gpus: launch.gpus.clone(),
            env: Vec::new(),
        }],
        Some(k) => split(launch, d.node_rank, k)?,
    };
    Ok(Plan {
        env,
        procs,
        hostfile: Some(hostfile_text),
    })
}

/// The hostfile of `launch` (`None`: it gets no distributed environment): the
/// server's hosts for a gang, else this node with its slots.
pub fn hostfile_text(launch: &Launch, own_addr: &str) -> Option<String> {
    wants_env(launch).then(|| hosts_text(&dist_of(launch), own_addr))
}

/// Whether the hostfile is the node's own (a job of one node): the same text for every
/// such job of the same size, so one file serves them all.
pub fn is_one_node(launch: &Launch) -> bool {
    launch.dist.as_ref().is_none_or(|d| d.hosts.is_empty())
}

fn hosts_text(d: &DistLaunch, own_addr: &str) -> String {
    let hosts: Vec<DistHost> = if d.hosts.is_empty() {
        vec![DistHost {
            addr: own_addr.to_string(),
            slots: d.tasks_per_node.unwrap_or(d.gpus_per_node).max(1),
        }]
    } else {
        d.hosts.clone()
    };
    hosts
        .iter()
        .map(|h| format!("{} slots={}\n", h.addr, h.slots))
        .collect()
}

/// K processes, each with a contiguous slice of the part's GPUs.
fn split(launch: &Launch, node_rank: u32, k: u32) -> Result<Vec<Proc>, String> {
    let n = launch.gpus.len();
    let k_us = k as usize;
    if k > 1 && launch.slice.is_some() {
        return Err(format!(
            "a job on part of a GPU runs one process; it asked for {k} tasks per node"
        ));
    }
    if n > 0 && !n.is_multiple_of(k_us) {
        return Err(format!(
            "the part's {n} GPUs cannot be split evenly among {k} processes; ask for a \
             --tasks-per-node that divides the GPUs per node"
        ));
    }
    let each = n / k_us;
    Ok((0..k)
        .map(|local| {
            let rank = node_rank.saturating_mul(k).saturating_add(local);
            let from = local as usize * each;
            Proc {
                rank: Some(rank),
                gpus: launch.gpus[from..from + each].to_vec(),
                env: vec![
                    ("RANK".to_string(), rank.to_string()),
                    ("LOCAL_RANK".to_string(), local.to_string()),
                    ("LOCAL_WORLD_SIZE".to_string(), k.to_string()),
                ],
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn launch(gpus: &[u32], dist: Option<DistLaunch>) -> Launch {
        Launch {
            user: "nobody".into(),
            job: 4,
            attempt: 1,
            name: "t".into(),
            command: vec!["true".into()],
            cwd: "/".into(),
            env: BTreeMap::new(),
            gpus: gpus.to_vec(),
            walltime_s: None,
            grace_s: 1,
            slice: None,
            resources: Default::default(),
            dist,
            cpu_milli: 0,
            mem_mib: 0,
            pids_max: None,
            image: None,
            serve: None,
            hold: false,
        }
    }

    fn gang(node_rank: u32, tasks: Option<u32>) -> DistLaunch {
        DistLaunch {
            nnodes: 2,
            node_rank,
            gpus_per_node: 4,
            tasks_per_node: tasks,
            master_addr: Some("10.0.0.1".into()),
            master_port: Some(29400),
            hosts: vec![
                DistHost {
                    addr: "10.0.0.1".into(),
                    slots: tasks.unwrap_or(4),
                },
                DistHost {
                    addr: "10.0.0.2".into(),
                    slots: tasks.unwrap_or(4),
                },
            ],
        }
    }

    fn get<'a>(env: &'a [(String, String)], k: &str) -> &'a str {
        env.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("{k} not set in {env:?}"))
    }

    #[test]
    fn a_job_of_one_node_uses_its_own_address_and_port() {
        let p = plan(
            &launch(&[3, 1], None),
            "192.0.2.7",
            Some(40000),
            Path::new("/h"),
        )
        .unwrap();
        assert_eq!(get(&p.env, "MASTER_ADDR"), "192.0.2.7");
        assert_eq!(get(&p.env, "MASTER_PORT"), "40000");
        assert_eq!(get(&p.env, "NNODES"), "1");
        assert_eq!(get(&p.env, "NODE_RANK"), "0");
        assert_eq!(get(&p.env, "GPUS_PER_NODE"), "2");
        assert_eq!(get(&p.env, "WORLD_SIZE"), "2");
        assert_eq!(get(&p.env, "GPUSCHED_HOSTFILE"), "/h");
        assert_eq!(p.hostfile.as_deref(), Some("192.0.2.7 slots=2\n"));
        assert_eq!(p.procs.len(), 1);
        assert_eq!(p.procs[0].gpus, [3, 1]);
        assert_eq!(p.procs[0].rank, None);
    }

    #[test]
    fn a_second_part_gets_the_masters_address_and_every_host() {
        let p = plan(
            &launch(&[4, 5, 6, 7], Some(gang(1, None))),
            "10.0.0.2",
            None,
            Path::new("/h"),
        )
        .unwrap();
        assert_eq!(get(&p.env, "MASTER_ADDR"), "10.0.0.1");
        assert_eq!(get(&p.env, "MASTER_PORT"), "29400");
        assert_eq!(get(&p.env, "NNODES"), "2");
        assert_eq!(get(&p.env, "NODE_RANK"), "1");
        assert_eq!(get(&p.env, "WORLD_SIZE"), "8");
        assert_eq!(
            p.hostfile.as_deref(),
            Some("10.0.0.1 slots=4\n10.0.0.2 slots=4\n")
        );
        assert!(p.procs[0].env.is_empty());
    }

    #[test]
    fn tasks_per_node_splits_the_gpus_in_contiguous_groups_with_global_ranks() {
        let p = plan(
            &launch(&[4, 5, 6, 7], Some(gang(1, Some(2)))),
            "x",
            None,
            Path::new("/h"),
        )
        .unwrap();
        assert_eq!(get(&p.env, "WORLD_SIZE"), "4");
        let got: Vec<(Option<u32>, Vec<u32>, &str, &str)> = p
            .procs
            .iter()
            .map(|pr| {
                (
                    pr.rank,
                    pr.gpus.clone(),
                    get(&pr.env, "LOCAL_RANK"),
                    get(&pr.env, "LOCAL_WORLD_SIZE"),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (Some(2), vec![4, 5], "0", "2"),
                (Some(3), vec![6, 7], "1", "2")
            ]
        );
        assert_eq!(get(&p.procs[1].env, "RANK"), "3");
    }

    #[test]
    fn bad_launches_are_refused_with_what_to_do() {
        let err = plan(
            &launch(&[0, 1, 2], Some(gang(0, Some(2)))),
            "x",
            None,
            Path::new("/h"),
        )
        .unwrap_err();
        assert!(
            err.contains("3 GPUs") && err.contains("2 processes"),
            "{err}"
        );
        let mut no_port = gang(1, None);
        no_port.master_port = None;
        let err = plan(&launch(&[0], Some(no_port)), "x", None, Path::new("/h")).unwrap_err();
        assert!(err.contains("MASTER_PORT"), "{err}");
        let err = plan(
            &launch(&[0], Some(gang(2, None))),
            "x",
            Some(1),
            Path::new("/h"),
        )
        .unwrap_err();
        assert!(err.contains("node rank 2 of 2"), "{err}");
    }

    #[test]
    fn a_job_without_gpus_or_dist_gets_no_distributed_environment() {
        let l = launch(&[], None);
        assert!(!wants_env(&l));
        let p = plan(&l, "x", None, Path::new("/h")).unwrap();
        assert!(p.env.is_empty() && p.hostfile.is_none());
        assert_eq!(p.procs.len(), 1);
    }
}
