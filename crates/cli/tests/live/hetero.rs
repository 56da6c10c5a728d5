//! Heterogeneous GPUs with real processes (issue 36): two agents whose fake GPUs are of
//! two models; a job that declares it runs faster on the older model goes there, one
//! that declares nothing goes to the faster model by the defaults, and `show` says why.
//!
//! Every check waits for the evidence (the job's own file, its row's node), bounded.

use crate::support::*;

#[test]
fn each_job_goes_to_the_gpu_model_where_it_runs_fastest() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _v = agent_with(
        &url,
        "v1",
        &dir.join("v1"),
        Gpus::Fake(2),
        &["--gpu-model", "Tesla V100-SXM2-16GB"],
    );
    let _h = agent(&url, "h1", &dir.join("h1"), Gpus::Fake(2));
    wait_until(SLOW, || {
        node_state(&url, "v1").as_deref() == Some("online")
            && node_state(&url, "h1").as_deref() == Some("online")
    });
    let out = dir.join("out");
    std::fs::create_dir(&out).unwrap();
    let run = |name: &str| {
        format!(
            "echo $GPUSCHED_JOB_ID > {}; exec sleep 600",
            out.join(name).display()
        )
    };
    // Its own measure: no faster on the H100 than on the V100, so the V100 is its best.
    let old = submit(
        &url,
        &[
            "--gpus",
            "2",
            "--speedup",
            "V100=1.2,H100=1",
            "--",
            "sh",
            "-c",
            &run("old"),
        ],
    );
    // Nothing declared: the defaults put the H100 first.
    let new = submit(&url, &["--gpus", "2", "--", "sh", "-c", &run("new")]);
    let on = |name: &str| wait_for_text(&out.join(name), SLOW, |t| !t.trim().is_empty());
    on("old");
    on("new");
    assert_eq!(job(&url, old)["node"], "v1");
    assert_eq!(job(&url, new)["node"], "h1");
    let shown = stdout(&cli(&url, &["show", &old.to_string()]));
    // Read against the V100 it names: 1.0 there, 1/1.2 on the H100.
    assert!(
        shown.contains("Tesla V100-SXM2-16GB 1.00x (declared)")
            && shown.contains("0.83x (declared)"),
        "{shown}"
    );
    let v = job(&url, new);
    assert_eq!(v["speed"]["on"][0]["source"], "default", "{v}");
    for id in [old, new] {
        let (code, text) = http(&url, "POST", &format!("/api/jobs/{id}/cancel"), None);
        assert!(code == 200 || code == 202, "{code} {text}");
        assert_eq!(wait_job(&url, id, SLOW)["state"], "cancelled");
    }
}
