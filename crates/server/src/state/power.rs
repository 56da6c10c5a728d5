//! The power budget, the GPU caps and consolidation on the live server (docs/power.md).
//! The rules are the core's (`gpusched_core::power`, `live::power`); this tells the core
//! the budgets and each node's figures every round, keeps the times the core's rule
//! reads (since when each node ran nothing), and calls the power hook on its decisions.
//! Nothing here is stored: after a restart every node counts as up and idle from then.

use std::collections::{BTreeMap, BTreeSet};

use gpusched_core::live::PowerSetup;
use gpusched_core::power::GpuWatts;

use super::State;

/// What the server keeps between rounds for consolidation and its report.
#[derive(Debug, Default)]
pub(crate) struct PowerTrack {
    /// Online nodes that run nothing → since when (seconds).
    idle_since: BTreeMap<String, f64>,
    /// Nodes taken down (the hook's `down`), with their GPUs: what `up` could bring.
    down: BTreeMap<String, u32>,
    /// When the idle time was last counted.
    last_s: Option<f64>,
    /// Node-seconds online nodes ran nothing (down or not) since the server started.
    pub idle_node_seconds: f64,
    /// Node-seconds nodes were down.
    pub down_node_seconds: f64,
    /// What idle nodes' GPUs drew idle over those seconds (joules): what powering them
    /// down saves, GPUs only.
    pub idle_joules: f64,
}

impl State {
    /// Each GPU's figures on `model` under `--gpu-power-cap`.
    fn gpu_watts(&self, model: &str) -> GpuWatts {
        GpuWatts::of(model, self.cfg.power.gpu_cap_w)
    }

    /// The power limit each GPU of `node` should have, milliwatts (empty without
    /// `--gpu-power-cap`): what its desired state carries.
    pub(super) fn power_caps_of(&self, node: &str) -> BTreeMap<u32, u32> {
        if self.cfg.power.gpu_cap_w.is_none() {
            return BTreeMap::new();
        }
        let Some(n) = self.cluster.nodes().iter().find(|n| n.name == node) else {
            return BTreeMap::new();
        };
        n.gpus
            .iter()
            .map(|g| (g.index, self.gpu_watts(&g.model).cap_w * 1000))
            .collect()
    }

    /// Every round, before the pass: the idle times counted, consolidation's downs and
    /// ups decided and their hooks called, and the core told the budgets, each node's
    /// figures and the nodes that are down.
    pub(super) fn tend_power(&mut self) {
        let now = self.now.secs();
        let online: Vec<String> = self
            .cluster
            .nodes()
            .iter()
            .map(|n| n.name.clone())
            .collect();
        let idle: BTreeSet<String> = self.cluster.idle_nodes().into_iter().collect();
        let idle_w: BTreeMap<String, u64> = self
            .cluster
            .power_draws()
            .into_iter()
            .map(|(name, d)| (name, u64::from(d.gpus) * u64::from(d.watts.idle_w)))
            .collect();
        let t = &mut self.power;
        if let Some(last) = t.last_s {
            let dt = (now - last).max(0.0);
            for name in &idle {
                t.idle_node_seconds += dt;
                if !t.down.contains_key(name) {
                    t.idle_joules += dt * idle_w.get(name).copied().unwrap_or(0) as f64;
                }
            }
            t.down_node_seconds += dt * t.down.len() as f64;
        }
        t.last_s = Some(now);
        t.idle_since.retain(|n, _| idle.contains(n));
        for name in &idle {
            t.idle_since.entry(name.clone()).or_insert(now);
        }
        if let Some(after) = self.cfg.power.consolidate_after {
            self.consolidate(&online, now, after.as_secs_f64());
        }
        if self.cfg.power.budget().is_none()
            && self.cfg.power.gpu_cap_w.is_none()
            && self.cfg.power.consolidate_after.is_none()
        {
            // Without any power setting the core's pass is exactly as before.
            return;
        }
        let watts = self
            .cluster
            .nodes()
            .iter()
            .map(|n| (n.name.clone(), self.gpu_watts(&n.model)))
            .collect();
        self.cluster.set_power(PowerSetup {
            budget: self.cfg.power.budget(),
            watts,
            down: self.power.down.keys().cloned().collect(),
        });
    }

    /// Takes down the nodes idle past `after` and brings one up when waiting work needs
    /// it (`gpusched_core::power`), calling the hook on each.
    fn consolidate(&mut self, online: &[String], now: f64, after: f64) {
        let down_names: BTreeSet<String> = self.power.down.keys().cloned().collect();
        let going = gpusched_core::live::nodes_to_power_down(
            &self.power.idle_since,
            online,
            &down_names,
            now,
            after,
        );
        for name in going {
            let gpus = self
                .cluster
                .nodes()
                .iter()
                .find(|n| n.name == name)
                .map_or(0, |n| n.gpus.len() as u32);
            tracing::info!(
                node = name,
                "consolidation: the node ran nothing for {after} s; down"
            );
            self.power.down.insert(name.clone(), gpus);
            if let Some(h) = &self.cfg.power.hook {
                h.call("down", &name);
            }
        }
        let down: Vec<(String, u32)> = self
            .power
            .down
            .iter()
            .map(|(n, &g)| (n.clone(), g))
            .collect();
        if let Some(name) = self.cluster.node_to_power_up(&down) {
            tracing::info!(
                node = name,
                "consolidation: waiting work needs the node; up"
            );
            self.power.down.remove(&name);
            self.power.idle_since.insert(name.clone(), now);
            self.sched_due = true;
            if let Some(h) = &self.cfg.power.hook {
                h.call("up", &name);
            }
        }
    }

    /// The power series of `/metrics`.
    pub fn power_level(&self) -> crate::metrics::PowerLevel {
        let (calls, failures) = self.cfg.power.hook.as_ref().map_or((0, 0), |h| {
            use std::sync::atomic::Ordering::Relaxed;
            (h.stats.calls.load(Relaxed), h.stats.failures.load(Relaxed))
        });
        let mut view = self.cluster.power_view();
        view.budget_w = self.cfg.power.budget_w;
        view.node_budget_w = self.cfg.power.node_budget_w;
        let c = &self.cfg.power;
        crate::metrics::PowerLevel {
            on: !c.budget().is_none() || c.gpu_cap_w.is_some() || c.consolidate_after.is_some(),
            view,
            idle_nodes: self.cluster.idle_nodes().len() as u64,
            down_nodes: self.power.down.len() as u64,
            idle_node_seconds: self.power.idle_node_seconds,
            down_node_seconds: self.power.down_node_seconds,
            idle_joules: self.power.idle_joules,
            hook_calls: calls,
            hook_failures: failures,
        }
    }
}
