//! Interactive allocations (`gpusched alloc`, `JobSubmit::interactive`): what such a
//! submission may not combine with. The agent holds the GPUs (`Launch::hold`); their
//! idle GPUs are watched in `idle.rs`.

use gpusched_wire::JobSubmit;

/// Why an interactive submission conflicts with its other fields (409: each field is
/// well-formed on its own), or `None`.
pub(super) fn conflict(j: &JobSubmit) -> Option<String> {
    if !j.interactive {
        return None;
    }
    if j.array.is_some() {
        return Some(
            "`interactive` and `array` conflict: an allocation is one job; run an array \
             as a batch job (`gpusched submit --array`), or steps inside the allocation"
                .into(),
        );
    }
    if j.image.is_some() {
        return Some(
            "`interactive` and `image` conflict: an allocation runs no process of its own \
             to put in a container; give the image to the batch job instead"
                .into(),
        );
    }
    if j.max_retries.is_some_and(|r| r > 0) {
        return Some(
            "`interactive` and `max_retries` conflict: an allocation is never requeued (its \
             shell was told its nodes); leave `max_retries` out"
                .into(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(f: impl FnOnce(&mut JobSubmit)) -> Option<String> {
        let mut j: JobSubmit =
            serde_json::from_value(serde_json::json!({"command": ["bash"], "interactive": true}))
                .unwrap();
        f(&mut j);
        conflict(&j)
    }

    #[test]
    fn an_allocation_is_one_job_with_no_image_and_no_retries() {
        assert_eq!(job(|_| {}), None);
        assert_eq!(job(|j| j.max_retries = Some(0)), None);
        let array = job(|j| j.array = Some(gpusched_wire::ArraySpec::parse("4").unwrap()));
        assert!(array.unwrap().starts_with("`interactive` and `array`"));
        let image = job(|j| j.image = Some("docker.io/library/python:3.12".into()));
        assert!(image.unwrap().starts_with("`interactive` and `image`"));
        let retries = job(|j| j.max_retries = Some(2));
        assert!(retries.unwrap().contains("never requeued"));
        // A batch job is not concerned.
        assert_eq!(
            job(|j| {
                j.interactive = false;
                j.max_retries = Some(2);
            }),
            None
        );
    }
}
