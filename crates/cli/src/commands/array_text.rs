//! How arrays read in tables and in `show`: the spec after the name, the counts of
//! their tasks in words.

use gpusched_wire::{ArrayCounts, JobView};

/// `8 running, 9990 pending, 2 succeeded`: the states that have tasks, busiest first.
pub fn counts(c: &ArrayCounts) -> String {
    let parts = [
        (c.running, "running"),
        (c.starting, "starting"),
        (c.pending, "pending"),
        (c.succeeded, "succeeded"),
        (c.failed, "failed"),
        (c.timed_out, "timed out"),
        (c.cancelled, "cancelled"),
    ];
    let out: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, s)| format!("{n} {s}"))
        .collect();
    if out.is_empty() {
        "no tasks".into()
    } else {
        out.join(", ")
    }
}

/// A job's name in a table: an array's with its spec (`train[0-9999%8]`).
pub fn name(j: &JobView) -> String {
    match &j.array {
        Some(a) => format!("{}[{}]", j.name, a.text()),
        None => j.name.clone(),
    }
}

/// What `show` adds for an array or one of its tasks.
pub fn show_lines(j: &JobView) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(a) = &j.array {
        out.push((
            "array",
            format!(
                "{} ({}{})",
                a.text(),
                gpusched_wire::count(a.len(), "task"),
                a.max_running
                    .map_or(String::new(), |k| format!(", at most {k} at once"))
            ),
        ));
        if let Some(c) = &j.array_counts {
            out.push(("tasks", counts(c)));
        }
        out.push((
            "see",
            format!(
                "`gpusched queue --tasks {}` lists started tasks; `gpusched show {}.N` one task",
                j.id, j.id
            ),
        ));
    }
    if let Some(t) = &j.array_task {
        out.push((
            "task of",
            format!("array {}, index {}", t.array_id, t.index),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_name_only_the_states_with_tasks() {
        let c = ArrayCounts {
            running: 8,
            pending: 9990,
            succeeded: 2,
            ..Default::default()
        };
        assert_eq!(counts(&c), "8 running, 9990 pending, 2 succeeded");
        assert_eq!(counts(&ArrayCounts::default()), "no tasks");
    }
}
