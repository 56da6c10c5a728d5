//! A submission's shape: on how many nodes it runs and with how many whole GPUs on each
//! (issue 12). `nodes`, `gpus_per_node`, `gpus`, `split` and `tasks_per_node` must agree
//! with each other; each field's own bounds are schema constraints (400, in
//! `validate::check_submit`), while a disagreement between fields is a conflict (409): the
//! schema cannot say "`gpus` = `nodes` x `gpus_per_node`" or "divides", as it cannot say
//! "unique across the batch" for client tokens.

use gpusched_core::admission::{self, GangUnfit};
use gpusched_wire::JobSubmit;

use super::validate::{KnownNode, MAX_GPUS};

/// How a job's whole GPUs are laid out over nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Nodes at once; 0 for `split` until the scheduler chooses.
    pub nodes: u32,
    /// Whole GPUs on each; 0 for `split` until the scheduler chooses.
    pub gpus_per_node: u32,
    /// Every GPU of the job.
    pub gpus: u32,
    pub split: bool,
}

/// The shape of a submission, or what to fix. `slice` says it asks for part of a GPU.
pub fn shape(job: &JobSubmit, slice: bool) -> Result<Shape, String> {
    let gang_fields = job.nodes.is_some_and(|n| n > 1)
        || job.split
        || job.gpus_per_node.is_some()
        || job.tasks_per_node.is_some();
    if slice {
        if gang_fields {
            return Err(
                "`nodes`, `gpus_per_node`, `split` and `tasks_per_node` go with whole \
                 GPUs (`gpus`), not with part of a GPU (`gpu_share`, `gpu_mem`, `mig`): a \
                 distributed job holds whole GPUs on every node"
                    .into(),
            );
        }
        return Ok(Shape {
            nodes: 1,
            gpus_per_node: 0,
            gpus: 0,
            split: false,
        });
    }
    let shape = if job.split {
        if job.nodes.is_some() || job.gpus_per_node.is_some() {
            return Err(
                "`split` lets the scheduler choose the nodes and the GPUs on each; \
                 leave out `nodes` and `gpus_per_node`, or drop `split` and choose them \
                 yourself"
                    .into(),
            );
        }
        let gpus = match job.gpus {
            Some(g) if g > 0 => g,
            _ => {
                return Err(
                    "`split` needs `gpus`, the number of GPUs to split over nodes (e.g. \
                     gpus = 16 may run as 2 x 8 or 4 x 4)"
                        .into(),
                )
            }
        };
        Shape {
            nodes: 0,
            gpus_per_node: 0,
            gpus,
            split: true,
        }
    } else {
        let n = job.nodes.unwrap_or(1);
        let g = match (job.gpus, job.gpus_per_node) {
            (Some(total), Some(g)) => {
                if u64::from(total) != u64::from(n) * u64::from(g) {
                    return Err(format!(
                        "`gpus` = {total}, but `nodes` x `gpus_per_node` = {n} x {g} = {}; \
                         give `gpus_per_node` alone, or make `gpus` their product",
                        u64::from(n) * u64::from(g)
                    ));
                }
                g
            }
            (None, Some(g)) => g,
            (Some(total), None) if n == 1 => total,
            (Some(total), None) if total % n == 0 => total / n,
            (Some(total), None) => {
                return Err(format!(
                    "`nodes` = {n} needs `gpus_per_node` (whole GPUs on each node), or `gpus` \
                     divisible by {n}; `gpus` = {total} is not (or use `split` to let the \
                     scheduler choose the nodes)"
                ))
            }
            (None, None) if n == 1 => 1,
            (None, None) => {
                return Err(format!(
                    "`nodes` = {n} needs `gpus_per_node` (whole GPUs on each node), or `gpus` \
                     divisible by {n} (e.g. gpus = {} for {} on each)",
                    n * 8,
                    8
                ))
            }
        };
        if n > 1 && g == 0 {
            return Err(format!(
                "a job on {n} nodes needs at least one GPU on each (`gpus_per_node` >= 1); a \
                 job without GPUs runs on one node"
            ));
        }
        let total = u64::from(n) * u64::from(g);
        if total > u64::from(MAX_GPUS) {
            return Err(format!(
                "{n} nodes x {g} GPUs = {total} GPUs; one job may ask for at most {MAX_GPUS}"
            ));
        }
        Shape {
            nodes: n,
            gpus_per_node: g,
            gpus: total as u32,
            split: false,
        }
    };
    // Each process gets an equal, contiguous share of its node's GPUs. Without GPUs the
    // K processes still run (CPU ranks, e.g. gloo): nothing to divide.
    if let Some(k) = job.tasks_per_node {
        let (per, what) = if shape.split {
            (
                shape.gpus,
                "`gpus` (the scheduler only picks splits it divides)",
            )
        } else {
            (shape.gpus_per_node, "the GPUs on each node")
        };
        if k > 0 && per > 0 && per % k != 0 {
            return Err(format!(
                "`tasks_per_node` = {k} must divide {what}, {per}, so each process gets the \
                 same number of GPUs; use a divisor of {per}"
            ));
        }
    }
    Ok(shape)
}

/// Whether some set of known nodes could ever hold the gang (the core's
/// `admission::gang_could_fit`), in words.
pub fn gang_could_fit(job: &JobSubmit, shape: Shape, nodes: &[KnownNode]) -> Result<(), String> {
    let model = job.gpu_model.as_deref();
    let split = shape.split.then_some(shape.gpus);
    let layout = (shape.nodes, shape.gpus_per_node);
    let why = match admission::gang_could_fit(model, split, layout, job.mixed_models, nodes) {
        Ok(()) => return Ok(()),
        Err(why) => why,
    };
    let of_model = job
        .gpu_model
        .as_ref()
        .map(|m| format!(" of model `{m}*`"))
        .unwrap_or_default();
    Err(match why {
        GangUnfit::Split { gpus, total } => format!(
            "the job asks for {}{of_model} split over nodes, but the whole cluster has \
             {total}; ask for at most {total}",
            gpusched_wire::count(gpus, "GPU")
        ),
        GangUnfit::Nodes {
            nodes: n,
            per_node: g,
            have: count,
            mixed,
        } => {
            let same = if mixed {
                ""
            } else {
                " of one GPU model (`mixed_models` allows several)"
            };
            format!(
                "the job asks for {n} nodes with {}{of_model} each, but the cluster has {count} \
                 such node(s){same}; ask for fewer nodes or fewer GPUs per node",
                gpusched_wire::count(g, "GPU")
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(f: impl FnOnce(&mut JobSubmit)) -> JobSubmit {
        let mut j = JobSubmit {
            command: vec!["/bin/true".into()],
            ..Default::default()
        };
        f(&mut j);
        j
    }

    fn ok(j: &JobSubmit) -> (u32, u32, u32) {
        let s = shape(j, false).unwrap_or_else(|e| panic!("{e}"));
        (s.nodes, s.gpus_per_node, s.gpus)
    }

    fn err(j: &JobSubmit) -> String {
        shape(j, false).unwrap_err()
    }

    #[test]
    fn the_fields_agree_or_the_error_says_how() {
        assert_eq!(ok(&job(|_| {})), (1, 1, 1));
        assert_eq!(ok(&job(|j| j.gpus = Some(4))), (1, 4, 4));
        assert_eq!(ok(&job(|j| j.gpus = Some(0))), (1, 0, 0));
        let gang = |j: &mut JobSubmit| {
            j.nodes = Some(2);
            j.gpus_per_node = Some(4);
        };
        assert_eq!(ok(&job(gang)), (2, 4, 8));
        assert_eq!(
            ok(&job(|j| {
                j.nodes = Some(4);
                j.gpus = Some(16);
            })),
            (4, 4, 16)
        );
        assert_eq!(
            ok(&job(|j| {
                gang(j);
                j.gpus = Some(8);
            })),
            (2, 4, 8)
        );
        let e = err(&job(|j| {
            gang(j);
            j.gpus = Some(6);
        }));
        assert!(e.contains("`gpus` = 6") && e.contains("2 x 4 = 8"), "{e}");
        let e = err(&job(|j| {
            j.nodes = Some(3);
            j.gpus = Some(8);
        }));
        assert!(
            e.contains("needs `gpus_per_node`") && e.contains("divisible by 3"),
            "{e}"
        );
        let e = err(&job(|j| j.nodes = Some(2)));
        assert!(e.contains("needs `gpus_per_node`"), "{e}");
        let e = err(&job(|j| {
            j.nodes = Some(2);
            j.gpus_per_node = Some(0);
        }));
        assert!(e.contains("at least one GPU on each"), "{e}");
        let e = err(&job(|j| {
            j.nodes = Some(1024);
            j.gpus_per_node = Some(8);
        }));
        assert!(e.contains("at most 1024"), "{e}");
    }

    #[test]
    fn split_needs_gpus_and_leaves_the_layout_to_the_scheduler() {
        let s = shape(
            &job(|j| {
                j.split = true;
                j.gpus = Some(16);
            }),
            false,
        )
        .unwrap();
        assert_eq!(
            (s.nodes, s.gpus_per_node, s.gpus, s.split),
            (0, 0, 16, true)
        );
        let e = err(&job(|j| j.split = true));
        assert!(e.contains("`split` needs `gpus`"), "{e}");
        let e = err(&job(|j| {
            j.split = true;
            j.gpus = Some(16);
            j.nodes = Some(2);
        }));
        assert!(e.contains("leave out `nodes`"), "{e}");
        let e = err(&job(|j| {
            j.split = true;
            j.gpus = Some(16);
            j.tasks_per_node = Some(3);
        }));
        assert!(e.contains("must divide `gpus`"), "{e}");
    }

    #[test]
    fn tasks_per_node_divides_the_gpus_of_a_node() {
        let k = |k: u32, g: u32| {
            job(move |j| {
                j.nodes = Some(2);
                j.gpus_per_node = Some(g);
                j.tasks_per_node = Some(k);
            })
        };
        assert_eq!(ok(&k(4, 8)), (2, 8, 16));
        let e = err(&k(3, 8));
        assert!(
            e.contains("`tasks_per_node` = 3 must divide the GPUs on each node, 8"),
            "{e}"
        );
        // Without GPUs: K CPU processes.
        let cpu = job(|j| {
            j.gpus = Some(0);
            j.tasks_per_node = Some(3);
        });
        assert_eq!(ok(&cpu), (1, 0, 0));
    }

    #[test]
    fn a_gang_takes_whole_gpus() {
        let j = job(|j| {
            j.nodes = Some(2);
            j.gpu_share = Some(0.5);
            j.gpus = None;
        });
        let e = shape(&j, true).unwrap_err();
        assert!(e.contains("not with part of a GPU"), "{e}");
        let plain = job(|j| j.gpu_share = Some(0.5));
        assert!(shape(&plain, true).is_ok());
    }
}
