//! Workflows: a DAG of steps (jobs or arrays) submitted in one request, in one round and
//! one transaction, all or nothing. The steps are checked as one batch submit checks its
//! jobs, then taken in dependency order so that each step's edges name the ids of steps
//! already accepted.

use std::collections::{BTreeMap, BTreeSet};

use gpusched_wire::workflow::{WorkflowStep, WorkflowSubmit, WorkflowSubmitted};

use super::{Fail, State, Who};
use crate::groups::UserGroups;

impl State {
    /// Accepts every step of `wf`, or none: keys unique and well-formed, every key an
    /// edge names is a step, no cycle (400, naming the cycle), and each step's job passes
    /// every check of a submit (refusals name the step).
    pub fn submit_workflow(
        &mut self,
        wf: WorkflowSubmit,
        who: &Who,
        groups: &UserGroups,
    ) -> Result<WorkflowSubmitted, Fail> {
        let order = order(&wf.steps)?;
        let mut steps: Vec<Option<WorkflowStep>> = wf.steps.into_iter().map(Some).collect();
        let mut sorted: Vec<WorkflowStep> = Vec::with_capacity(steps.len());
        for i in order {
            if let Some(s) = steps[i].take() {
                sorted.push(s);
            }
        }
        let jobs = sorted.iter().map(|s| s.job.clone()).collect();
        let keys: Vec<&str> = sorted.iter().map(|s| s.key.as_str()).collect();
        let mut jobs = self
            .check_batch(jobs, who, groups)
            .map_err(|f| name_step(f, &keys))?
            .into_iter();
        // Checked: from here nothing is refused. Each step goes in after the steps it
        // names, so their ids are known.
        let mut ids: BTreeMap<String, u64> = BTreeMap::new();
        for step in &sorted {
            let Some(mut job) = jobs.next() else { break };
            let id_of = |k: &String| ids.get(k).copied();
            job.after.extend(step.after.iter().filter_map(id_of));
            job.after_any
                .extend(step.after_any.iter().filter_map(id_of));
            job.after_notok
                .extend(step.after_notok.iter().filter_map(id_of));
            let got = self.accept(vec![job], who);
            if let Some(&id) = got.ids.first() {
                ids.insert(step.key.clone(), id);
            }
        }
        Ok(WorkflowSubmitted { ids })
    }
}

/// The steps' indices in an order where every step comes after those it names (the
/// file's order among steps free to go), or why there is none: 400 for what the schema
/// states (at least one step, the key's pattern), 409 for what it cannot (keys unique,
/// edges naming steps, no cycle), as a batch repeating a `client_token` is.
fn order(steps: &[WorkflowStep]) -> Result<Vec<usize>, Fail> {
    if steps.is_empty() {
        return Err(Fail::BadRequest(
            "`steps` is empty: a workflow needs at least one step".into(),
        ));
    }
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, s) in steps.iter().enumerate() {
        let ok = !s.key.is_empty()
            && s.key.len() <= 64
            && s.key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
        if !ok {
            return Err(Fail::BadRequest(format!(
                "step key {:?} is not 1-64 letters, digits, `_`, `-` or `.`",
                s.key
            )));
        }
        if index.insert(&s.key, i).is_some() {
            return Err(Fail::Conflict(format!(
                "step key `{}` appears twice; each step needs its own",
                s.key
            )));
        }
        if s.job.client_token.is_some() {
            return Err(Fail::Conflict(format!(
                "step `{}`: `client_token` is not taken in a workflow step (the workflow is \
                 one request); leave it out",
                s.key
            )));
        }
    }
    // Each step's predecessors by index, every key checked.
    let mut preds: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); steps.len()];
    for (i, s) in steps.iter().enumerate() {
        let lists = [
            ("after", &s.after),
            ("after_any", &s.after_any),
            ("after_notok", &s.after_notok),
        ];
        for (field, keys) in lists {
            for k in keys {
                let Some(&j) = index.get(k.as_str()) else {
                    return Err(Fail::Conflict(format!(
                        "step `{}`: `{field}` names no step `{k}`; the steps are: {}",
                        s.key,
                        index.keys().copied().collect::<Vec<_>>().join(", ")
                    )));
                };
                preds[i].insert(j);
            }
        }
    }
    // Kahn's algorithm, lowest index first among the ready.
    let mut left: Vec<usize> = preds.iter().map(BTreeSet::len).collect();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); steps.len()];
    for (i, p) in preds.iter().enumerate() {
        for &j in p {
            succs[j].push(i);
        }
    }
    let mut ready: BTreeSet<usize> = (0..steps.len()).filter(|&i| left[i] == 0).collect();
    let mut out = Vec::with_capacity(steps.len());
    while let Some(i) = ready.pop_first() {
        out.push(i);
        for &n in &succs[i] {
            left[n] -= 1;
            if left[n] == 0 {
                ready.insert(n);
            }
        }
    }
    if out.len() < steps.len() {
        let cycle = find_cycle(&preds, &left);
        let names: Vec<&str> = cycle.iter().map(|&i| steps[i].key.as_str()).collect();
        return Err(Fail::Conflict(format!(
            "steps form a cycle: {}; a step may only wait for steps that do not wait for it",
            names.join(" -> ")
        )));
    }
    Ok(out)
}

/// One cycle among the steps Kahn's algorithm could not take (`left[i] > 0`), as a path
/// that starts and ends at the same step, in the direction "runs before".
fn find_cycle(preds: &[BTreeSet<usize>], left: &[usize]) -> Vec<usize> {
    // Every stuck step has a stuck predecessor: walk back until a step repeats.
    let Some(start) = (0..left.len()).find(|&i| left[i] > 0) else {
        return Vec::new();
    };
    let mut path = vec![start];
    let mut seen: BTreeMap<usize, usize> = BTreeMap::from([(start, 0)]);
    let mut at = start;
    loop {
        let Some(&p) = preds[at].iter().find(|&&p| left[p] > 0) else {
            return path;
        };
        if let Some(&pos) = seen.get(&p) {
            let mut cycle: Vec<usize> = path[pos..].to_vec();
            cycle.push(p);
            // Walked backwards (step <- predecessor): turn it into "runs before" order.
            cycle.reverse();
            return cycle;
        }
        seen.insert(p, path.len());
        path.push(p);
        at = p;
    }
}

/// A batch refusal with its job's place ("job #2 of the batch: ...") said as the step's
/// key instead; a one-step workflow's refusal gets its key in front.
fn name_step(f: Fail, keys: &[&str]) -> Fail {
    let msg = f.message();
    let renamed = msg
        .strip_prefix("job #")
        .and_then(|r| r.split_once(" of the batch: "))
        .and_then(|(n, rest)| Some((keys.get(n.parse::<usize>().ok()?)?, rest)))
        .map(|(k, rest)| format!("step `{k}`: {rest}"));
    let renamed = match (renamed, keys) {
        (Some(r), _) => r,
        (None, [k]) => format!("step `{k}`: {msg}"),
        (None, _) => msg.to_string(),
    };
    match f {
        Fail::BadRequest(_) => Fail::BadRequest(renamed),
        Fail::NotFound(_) => Fail::NotFound(renamed),
        Fail::Conflict(_) => Fail::Conflict(renamed),
        Fail::Unavailable(_) => Fail::Unavailable(renamed),
        Fail::Forbidden(_) => Fail::Forbidden(renamed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(key: &str, after: &[&str]) -> WorkflowStep {
        WorkflowStep {
            key: key.into(),
            job: gpusched_wire::JobSubmit {
                command: vec!["true".into()],
                ..Default::default()
            },
            after: after.iter().map(|s| s.to_string()).collect(),
            after_any: vec![],
            after_notok: vec![],
        }
    }

    #[test]
    fn steps_go_after_what_they_name() {
        let s = [
            step("eval", &["train"]),
            step("prep", &[]),
            step("train", &["prep"]),
        ];
        assert_eq!(order(&s).unwrap(), [1, 2, 0]);
    }

    #[test]
    fn a_cycle_is_named_in_run_order() {
        let s = [step("a", &["b"]), step("b", &["a"]), step("c", &[])];
        let e = order(&s).unwrap_err().message().to_string();
        assert!(e.starts_with("steps form a cycle: "), "{e}");
        assert!(
            e.contains("a -> b -> a") || e.contains("b -> a -> b"),
            "{e}"
        );
        let s = [step("x", &["x"])];
        assert!(order(&s).unwrap_err().message().contains("x -> x"));
        let s = [
            step("a", &["c"]),
            step("b", &["a"]),
            step("c", &["b"]),
            step("d", &["a"]),
        ];
        assert!(
            order(&s)
                .unwrap_err()
                .message()
                .contains("a -> b -> c -> a"),
            "{:?}",
            order(&s)
        );
    }

    #[test]
    fn unknown_and_repeated_keys_are_refused() {
        let e = order(&[step("a", &["z"])])
            .unwrap_err()
            .message()
            .to_string();
        assert_eq!(e, "step `a`: `after` names no step `z`; the steps are: a");
        let e = order(&[step("a", &[]), step("a", &[])]).unwrap_err();
        assert!(matches!(e, Fail::Conflict(_)), "{e:?}");
        let e = e.message().to_string();
        assert!(e.contains("appears twice"), "{e}");
        let e = order(&[step("a b", &[])]).unwrap_err();
        assert!(matches!(e, Fail::BadRequest(_)), "{e:?}");
        let e = e.message().to_string();
        assert!(e.contains("not 1-64"), "{e}");
    }
}
