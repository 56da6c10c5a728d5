//! What a scrape of `/metrics` reads from the state (one command to the state task, like
//! every other read), and what the actor asks before it times a pass.

use std::collections::BTreeMap;

use super::{State, Who};
use gpusched_wire::JobState;

use crate::metrics::{QueueLevel, View};

impl State {
    /// The state's levels now: nodes as an admin sees them (the renderer hides holders
    /// under `--private-jobs`), queues, and jobs counted by queue and state.
    pub fn metrics_view(&self) -> View {
        let admin = Who {
            user: "metrics".into(),
            admin: true,
        };
        // One pass over the jobs in memory (the live ones), borrowing: a scrape must not
        // cost the state task an allocation per job. Ended jobs are counted by queue and
        // state as they leave memory (`ended.rs`).
        let mut counts: BTreeMap<(&str, JobState), u64> = BTreeMap::new();
        for j in self.jobs.values() {
            *counts
                .entry((j.view.queue.as_str(), j.view.state))
                .or_default() += 1;
        }
        for ((q, s), n) in &self.ended.counts {
            *counts.entry((q.as_str(), *s)).or_default() += n;
        }
        let jobs = counts
            .into_iter()
            .map(|((q, s), n)| ((q.to_string(), s), n))
            .collect();
        let used = self.queue_usage();
        let queues = self
            .queues
            .defs
            .iter()
            .map(|(name, d)| QueueLevel {
                name: name.clone(),
                used: used.get(name.as_str()).copied().unwrap_or(0),
                quota: d.quota,
                max: d.max,
            })
            .collect();
        let services = self
            .list_services(&admin)
            .services
            .into_iter()
            .map(|s| crate::metrics::ServiceLevel {
                name: s.spec.name,
                version: s.version,
                desired: s.desired,
                ready: s.ready,
                updated_ready: s.updated_ready,
                failures: s.failures,
                in_flight: s.in_flight,
            })
            .collect();
        View {
            services,
            nodes: self.node_list(&admin),
            queues,
            jobs,
            private: self.cfg.private_jobs,
            metrics: self.cfg.metrics.clone(),
            power: self.power_level(),
            checkpoint_slowest_s: self.checkpoint_cost.slowest_s(),
            rr_quantum_s: self.cfg.takes_turns().then(|| self.rr_quantum()),
        }
    }

    /// Whether the next `schedule` runs a pass (the actor times only those).
    pub fn pass_due(&self) -> bool {
        self.sched_due
    }
}

#[cfg(test)]
mod tests {
    use gpusched_core::JobState as Core;
    use gpusched_wire::JobSubmit;

    use super::*;
    use crate::metrics::{render, Format};

    fn line<'a>(out: &'a str, series: &str) -> &'a str {
        out.lines()
            .find(|l| l.starts_with(series))
            .unwrap_or_else(|| panic!("no {series} in\n{out}"))
    }

    /// The state's hooks feed the counters, and the view shows what the state holds.
    #[test]
    fn a_job_submitted_and_started_shows_in_the_metrics() {
        let mut st = crate::state::tests::one_gpu_state();
        let who = Who {
            user: "ann".into(),
            admin: false,
        };
        let job = JobSubmit {
            command: vec!["/bin/true".into()],
            ..Default::default()
        };
        st.submit(vec![job], &who, &crate::groups::UserGroups::default())
            .unwrap_or_else(|e| panic!("submitted: {}", e.message()));
        assert!(st.pass_due());
        st.schedule();
        assert!(!st.pass_due());
        assert_eq!(st.jobs[&1].view.state, JobState::Starting);
        assert!(st.set_state(1, &[Core::Running]));
        let view = st.metrics_view();
        assert_eq!(view.jobs[&("default".to_string(), JobState::Running)], 1);
        let out = render(&view, Format::Text).expect("rendered");
        assert_eq!(
            line(&out, "gpusched_gpu_job_info{"),
            r#"gpusched_gpu_job_info{node="n1",gpu="0",job_id="1",user="ann",kind="whole"} 1"#
        );
        // Counted at the commit (the actor settles the round), not before.
        assert_eq!(
            line(&out, "gpusched_jobs_submitted_total"),
            "gpusched_jobs_submitted_total 0"
        );
        st.cfg.metrics.settle_round();
        let out = render(&st.metrics_view(), Format::Text).expect("rendered");
        assert_eq!(
            line(&out, "gpusched_jobs_submitted_total"),
            "gpusched_jobs_submitted_total 1"
        );
        assert_eq!(
            line(&out, "gpusched_jobs_started_total"),
            "gpusched_jobs_started_total 1"
        );
        assert_eq!(
            line(&out, "gpusched_job_wait_seconds_count"),
            r#"gpusched_job_wait_seconds_count{queue="default"} 1"#
        );
    }
}
