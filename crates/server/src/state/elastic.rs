//! Elastic jobs on the live server (issue 37 item 2; docs/elastic.md): a submission with
//! `gpus_max` runs on `gpus` to `gpus_max` whole GPUs of one node. The core decides
//! every size (`gpusched_core::live::elastic`): how many it starts on, which loans go
//! back to a waiting job, when it grows. The server checks the form, keeps the range in
//! the job's placement rules (JSON: no schema change), and carries out a resize as a
//! preemption: the job is asked to checkpoint and stop, is requeued without using a
//! retry, and restarts on the GPUs the core gives it, which it reads from
//! `CUDA_VISIBLE_DEVICES` (and `GPUSCHED_GPUS`) as at any start.

use gpusched_core::elastic::{Elastic, DEFAULT_SERIAL};
use gpusched_core::live::ElasticResize;
use gpusched_wire::{JobElastic, JobSubmit, JobView};

use super::State;

/// A submission's elastic fields against each other and its other fields: a conflict
/// (409) when wrong, as a gang's disagreeing fields are, since each field alone is what
/// the schema allows.
pub fn check(j: &JobSubmit) -> Result<(), String> {
    let Some(max) = j.gpus_max else {
        if j.scaling_serial.is_some() {
            return Err(
                "`scaling_serial` is for elastic jobs: give `gpus_max` too (the CLI's \
                 --gpus MIN-MAX), or leave it out"
                    .into(),
            );
        }
        return Ok(());
    };
    let min = j.gpus.unwrap_or(1);
    let refuse = |what: &str| {
        Err(format!(
            "`gpus_max` makes a job elastic on one node, which {what} is not; leave \
             `gpus_max` out, or submit it as a single-node job of whole GPUs"
        ))
    };
    if j.nodes.is_some_and(|n| n > 1) || j.gpus_per_node.is_some_and(|g| g > 0) || j.split {
        return refuse("a gang (`nodes`, `gpus_per_node`, `split`)");
    }
    if j.gpu_share.is_some() || j.gpu_mem.is_some() || j.mig.is_some() {
        return refuse("part of a GPU (`gpu_share`, `gpu_mem`, `mig`)");
    }
    if j.interactive {
        return refuse("an interactive allocation");
    }
    if j.tasks_per_node.is_some_and(|k| k > 1) {
        return refuse(
            "a job of several processes per node (`tasks_per_node`, which must divide its GPUs)",
        );
    }
    let serial = j.scaling_serial.unwrap_or(DEFAULT_SERIAL);
    Elastic { min, max, serial }
        .checked()
        .map_err(|e| format!("`gpus` {min} to `gpus_max` {max}: {e}"))?;
    if max > super::validate::MAX_GPUS {
        return Err(format!(
            "`gpus_max` = {max} is absurd; one job may ask for at most {}",
            super::validate::MAX_GPUS
        ));
    }
    Ok(())
}

/// The view's elastic part from the submission's fields.
pub(crate) fn view(gpus_max: Option<u32>, serial: Option<f64>) -> Option<Box<JobElastic>> {
    gpus_max.map(|gpus_max| {
        Box::new(JobElastic {
            gpus_max,
            scaling_serial: serial.unwrap_or(DEFAULT_SERIAL),
        })
    })
}

/// The view's elastic part from the stored fields (serial in thousandths).
pub(crate) fn from_stored(gpus_max: Option<u32>, milli: Option<u32>) -> Option<Box<JobElastic>> {
    view(gpus_max, milli.map(|m| f64::from(m) / 1000.0))
}

/// The serial fraction as stored, in thousandths.
pub(crate) fn serial_milli(e: &JobElastic) -> u32 {
    (e.scaling_serial * 1000.0).round() as u32
}

/// The core's range of a job.
pub(crate) fn range(v: &JobView) -> Option<Elastic> {
    let e = v.elastic.as_deref()?;
    Some(Elastic {
        min: v.gpus.max(1),
        max: e.gpus_max,
        serial: e.scaling_serial,
    })
}

impl State {
    /// The round's elastic resize: its victims take the preemption path (checkpoint
    /// signal, grace, requeued without using a retry) and restart on the GPUs the core
    /// gives them then.
    pub(super) fn apply_elastic(&mut self, e: ElasticResize) {
        for &(victim, size) in &e.victims {
            let why = match e.claimant {
                Some(c) => format!(
                    "elastic resize: giving GPUs back on {} for job {c}, restarting on {size}",
                    e.node
                ),
                None => format!(
                    "elastic resize: growing into idle GPUs on {}, restarting on {size}",
                    e.node
                ),
            };
            self.ask_to_stop(&[victim], &why);
        }
        tracing::info!(claimant = ?e.claimant, node = %e.node, victims = ?e.victims, "elastic resize");
        self.bump(&e.node);
    }
}
