//! `logs`: where to read a job's output (which agent, which attempt, which process).

use gpusched_wire::JobView;

use super::{Fail, State, Who};

/// Where to fetch a job's logs from.
pub struct LogTarget {
    pub url: String,
    /// The agent's log secret (from its registration).
    pub token: Option<String>,
    pub job: u64,
    pub attempt: u32,
    /// The process (global `RANK`) of a job with `tasks_per_node`, for the agent.
    pub rank: Option<u32>,
}

/// Which output of a job `logs` asks for: an attempt (default the current one), and a
/// part by node name and/or a process by global rank (default part 0's first process).
#[derive(Clone, Debug, Default)]
pub struct LogAsk {
    pub attempt: Option<u32>,
    pub node: Option<String>,
    pub rank: Option<u32>,
}

impl State {
    /// Where to read the output of one attempt of a job (the current one by default);
    /// only its owner and admins may.
    pub fn log_target(&self, id: u64, ask: &LogAsk, who: &Who) -> Result<LogTarget, Fail> {
        let job = self.owned_job(id, who, "read its output")?;
        let v = &job.view;
        let attempt = ask.attempt.unwrap_or(v.attempt);
        // 0 is malformed (the schema says so); a later attempt than the job has had is
        // one that does not exist (yet), like an unknown id.
        if attempt == 0 || attempt > v.attempt {
            let msg = format!(
                "job {id} has had {}; --attempt must be between 1 and {}",
                gpusched_wire::count(v.attempt, "attempt"),
                v.attempt
            );
            return Err(if attempt == 0 {
                Fail::BadRequest(msg)
            } else {
                Fail::NotFound(msg)
            });
        }
        let node_name = if attempt == v.attempt {
            v.node.as_ref()
        } else {
            job.attempt_nodes.get(&attempt)
        };
        let node_name = match (node_name, attempt == v.attempt) {
            (Some(first), true) => Some(part_for_logs(v, first, ask)?),
            (Some(first), false) if ask.node.as_ref().is_some_and(|n| n != first) => {
                return Err(Fail::NotFound(format!(
                    "this server keeps only the first node of earlier attempts: attempt \
                     {attempt} of job {id} ran there on {first}; read the other nodes' \
                     output on those hosts, or give --node {first}"
                )))
            }
            (first, _) => first,
        };
        let Some(node_name) = node_name else {
            return Err(Fail::NotFound(if attempt == v.attempt {
                format!(
                    "job {id} has not started yet (it is {}), so it has no logs; \
                     `gpusched logs -f {id}` waits for it to start",
                    v.state.name()
                )
            } else {
                format!(
                    "attempt {attempt} of job {id} never reached a node (or ran before this \
                     server recorded where attempts ran), so there are no logs to show"
                )
            }));
        };
        let node = self.nodes.get(node_name).ok_or_else(|| {
            Fail::Unavailable(format!(
                "job {id} ran on {node_name}, which this server no longer knows"
            ))
        })?;
        let url = node.record.register.log_url.clone().ok_or_else(|| {
            Fail::Unavailable(format!(
                "the agent on {node_name} serves no logs (it has no log URL)"
            ))
        })?;
        if !node.online() {
            return Err(Fail::Unavailable(format!(
                "{node_name} is offline; job {id}'s logs are on that host under the agent's \
                 state directory, jobs/{id}.{attempt}/"
            )));
        }
        Ok(LogTarget {
            url,
            token: node.record.register.log_token.clone(),
            job: id,
            attempt,
            // Only a job with `tasks_per_node` has several processes per node.
            rank: ask.rank.filter(|_| v.tasks_per_node.is_some()),
        })
    }
}

/// The node of the part whose output `ask` names (by node and/or rank) in the job's
/// current attempt; `first` is part 0's. A node or rank the job does not have is 404,
/// with what it has.
fn part_for_logs<'a>(v: &'a JobView, first: &'a String, ask: &LogAsk) -> Result<&'a String, Fail> {
    let id = v.id;
    let nodes: Vec<&String> = if v.parts.is_empty() {
        vec![first]
    } else {
        v.parts.iter().map(|p| &p.node).collect()
    };
    let by_node = match &ask.node {
        None => None,
        Some(n) => Some(nodes.iter().copied().find(|x| *x == n).ok_or_else(|| {
            Fail::NotFound(format!(
                "job {id} has no part on {n}; its attempt {} runs on {}",
                v.attempt,
                nodes
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?),
    };
    let by_rank = match ask.rank {
        None => None,
        Some(r) => {
            // Rank R is process R % K of node rank R / K.
            let k = v.tasks_per_node.unwrap_or(1).max(1);
            let ranks = nodes.len() as u64 * u64::from(k);
            let node = nodes.get((r / k) as usize).copied().ok_or_else(|| {
                Fail::NotFound(format!(
                    "job {id} has no rank {r}; its ranks are 0 to {} ({} x {k} per node)",
                    ranks - 1,
                    gpusched_wire::count(nodes.len() as u32, "node"),
                ))
            })?;
            Some(node)
        }
    };
    match (by_node, by_rank) {
        (Some(n), Some(r)) if n != r => Err(Fail::NotFound(format!(
            "rank {} of job {id} runs on {r}, not on {n}; give one of --node and --rank, or \
             both naming the same node",
            ask.rank.unwrap_or(0)
        ))),
        (Some(n), _) | (None, Some(n)) => Ok(n),
        (None, None) => Ok(first),
    }
}
