//! Heterogeneous GPUs on the live server (issue 36; docs/heterogeneous.md): how fast a
//! job runs on each GPU model of the cluster, from the core's rule
//! (`gpusched_core::speed`: the job's `--speedup`, else what jobs of its user and name
//! taught on each model, else the default per pair of models), and the preference the
//! core places it by (`LiveJob::prefer`: the cluster's models, fastest for it first).
//!
//! What is learnt: a job that ran once, on one node, to `succeeded` or `failed` (the
//! predictor's rule) records its run time on its node's model under its user and name
//! (an array's tasks under the array's name). Stored with the predictor.
//!
//! Estimates follow speeds on a cluster of several models: the predictor learns run
//! times in reference seconds (a run on a model the job does 2x on counts twice its
//! seconds), a waiting job's predicted estimate is its time on the model it would try
//! first, and a job that starts gets its time on the model it got. The conversion uses
//! the job's declared factors, else the defaults, never the learnt ones: those change
//! as jobs end, and the predictor's history must stay in one unit. A cluster of one
//! model keeps plain seconds (nothing to convert). Walltimes are limits the user gave
//! and are never scaled.

use gpusched_core::speed::{Learned, SpeedModel, Speedups};
use gpusched_wire::{JobSpeed, JobSubmit, JobView, ModelSpeed};

use super::{Fail, State};

/// The most (user and name, model) pairs kept: one-off names stop teaching past it.
pub const MAX_SPEED_PAIRS: usize = 8192;

/// Checks a submission's `speedup` and puts it in canonical form (models in order); an
/// empty one is none. 409: the schema cannot say the form.
pub(super) fn settle_speedup(j: &mut JobSubmit) -> Result<(), Fail> {
    let Some(text) = &j.speedup else {
        return Ok(());
    };
    let parsed = Speedups::parse(text).map_err(|e| Fail::Conflict(e.to_string()))?;
    j.speedup = (!parsed.is_empty()).then(|| parsed.text());
    Ok(())
}

/// What jobs of `v`'s kind are learnt under: its user and its name (an array task's
/// without its index, as the predictor keys it).
fn kind_of(v: &JobView) -> String {
    let name = v.name.split('[').next().unwrap_or(&v.name);
    format!("{}\u{1f}{name}", v.user)
}

fn declared(v: &JobView) -> Speedups {
    v.speed
        .as_ref()
        .and_then(|s| s.declared.as_deref())
        .and_then(|d| Speedups::parse(d).ok())
        .unwrap_or_default()
}

/// The GPU models of `nodes`, each once, in order (`State::gpu_models` keeps them).
pub(super) fn models_of<'n>(nodes: impl Iterator<Item = &'n super::NodeEntry>) -> Vec<String> {
    let mut models: Vec<&str> = nodes
        .filter_map(|n| n.record.register.gpus.first().map(|g| g.model.as_str()))
        .collect();
    models.sort_unstable();
    models.dedup();
    models.into_iter().map(str::to_string).collect()
}

impl State {
    /// The GPU models of the cluster's nodes, each once, in order.
    fn gpu_models(&self) -> &[String] {
        &self.gpu_models
    }

    /// `v`'s speed on each of the cluster's models, fastest first (ties by name).
    fn speeds_of(&self, v: &JobView) -> Vec<ModelSpeed> {
        let rule = SpeedModel::default();
        let (declared, kind) = (declared(v), kind_of(v));
        let mut out: Vec<ModelSpeed> = self
            .gpu_models()
            .iter()
            .map(|model| {
                let s = rule.resolve(&declared, Some((&self.learnt.speeds, &kind)), model);
                ModelSpeed {
                    model: model.clone(),
                    factor: s.factor,
                    source: s.source.name().to_string(),
                }
            })
            .collect();
        out.sort_by(|a, b| b.factor.total_cmp(&a.factor).then(a.model.cmp(&b.model)));
        out
    }

    /// The models `v` should try first, fastest for it first; none for a job that names
    /// a model, a slice (it shares a GPU where it finds one), or a cluster of one model
    /// or where every model is as fast for it.
    pub(super) fn prefer_of(&self, v: &JobView) -> Vec<String> {
        if v.gpu_model.is_some() || v.slice.is_some() || v.gpus == 0 || !self.mixed() {
            return Vec::new();
        }
        let speeds = self.speeds_of(v);
        let (Some(first), Some(last)) = (speeds.first(), speeds.last()) else {
            return Vec::new();
        };
        if first.factor == last.factor {
            return Vec::new();
        }
        speeds.into_iter().map(|s| s.model).collect()
    }

    /// `v`'s speed for the answer for one job: its declaration and its factor on each
    /// model of the cluster (a cluster of one model: only the declaration).
    pub(super) fn speed_view(&self, v: &JobView) -> Option<Box<JobSpeed>> {
        let declared = v.speed.as_ref().and_then(|s| s.declared.clone());
        let on = if self.gpu_models().len() > 1 && v.slice.is_none() {
            self.speeds_of(v)
        } else {
            Vec::new()
        };
        (declared.is_some() || !on.is_empty()).then(|| Box::new(JobSpeed { declared, on }))
    }

    /// Whether speeds shape estimates: the cluster has more than one GPU model.
    fn mixed(&self) -> bool {
        self.gpu_models().len() > 1
    }

    /// The model of the node `v` runs (or ran) on: its first node's.
    fn model_of_node(&self, v: &JobView) -> Option<String> {
        v.node
            .as_ref()
            .and_then(|n| self.nodes.get(n))
            .and_then(|n| n.record.register.gpus.first())
            .map(|g| g.model.clone())
    }

    /// `v`'s factor for estimates (declared, else default: not learnt, see above) on
    /// `model`, or on the model it would try first (its preference, else the fastest
    /// model its `--gpu-model` names) when `model` is none.
    fn factor_for(&self, v: &JobView, model: Option<&str>) -> f64 {
        let rule = SpeedModel::default();
        let declared = declared(v);
        let on = |m: &str| rule.resolve(&declared, None, m).factor;
        if let Some(m) = model {
            return on(m);
        }
        let first = self.prefer_of(v).into_iter().next().or_else(|| {
            self.gpu_models()
                .iter()
                .filter(|m| {
                    v.gpu_model
                        .as_deref()
                        .is_none_or(|w| gpusched_core::speed::names(m, w))
                })
                .max_by(|a, b| on(a).total_cmp(&on(b)))
                .cloned()
        });
        first.map_or(1.0, |m| on(&m))
    }

    /// A run of `secs` by `v` (wholly on its node's model) in reference seconds, on a
    /// cluster of several models; plain seconds otherwise.
    pub(super) fn in_reference_secs(&self, v: &JobView, secs: f64) -> f64 {
        if v.slice.is_some() || v.gpus == 0 || !self.mixed() {
            return secs;
        }
        match self.model_of_node(v) {
            Some(m) => secs * self.factor_for(v, Some(&m)),
            None => secs,
        }
    }

    /// Reference seconds `secs` as `v`'s run time on `model` (none: the model it would
    /// try first), on a cluster of several models; unchanged otherwise.
    pub(super) fn secs_on_model(&self, v: &JobView, secs: f64, model: Option<&str>) -> f64 {
        if v.slice.is_some() || v.gpus == 0 || !self.mixed() {
            return secs;
        }
        secs / self.factor_for(v, model)
    }

    /// Job `id` started on `node`: a predicted estimate becomes its time on that node's
    /// model (it was its time on the model it would try first).
    pub(super) fn estimate_on_start(&mut self, id: u64) {
        let Some(&(reference, _)) = self.learnt.predicted.get(&id) else {
            return;
        };
        let Some(v) = self.jobs.get(&id).map(|j| &j.view) else {
            return;
        };
        let Some(model) = self.model_of_node(v) else {
            return;
        };
        let secs = self.secs_on_model(v, reference, Some(&model));
        self.cluster.reset_predicted(id, secs);
    }

    /// Job `id` ran `secs` once on one node: its kind's time on that node's model.
    pub(super) fn learn_speed(&mut self, id: u64, secs: f64) {
        let Some(v) = self.jobs.get(&id).map(|j| &j.view) else {
            return;
        };
        if v.nodes > 1 || v.slice.is_some() || v.gpus == 0 {
            return;
        }
        let Some(model) = v
            .node
            .as_ref()
            .and_then(|n| self.nodes.get(n))
            .and_then(|n| n.record.register.gpus.first())
            .map(|g| g.model.clone())
        else {
            return;
        };
        let kind = kind_of(v);
        let table: &mut Learned = &mut self.learnt.speeds;
        if table.len() >= MAX_SPEED_PAIRS && table.samples(&kind, &model) == 0 {
            return;
        }
        table.observe(&kind, &model, secs);
    }
}
