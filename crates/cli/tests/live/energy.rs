//! Energy per job end to end: a fake agent's energy counters, charged by the server to
//! the job holding the GPU, shown by the API, `show` and `usage`.

use crate::support::*;

#[test]
fn a_job_is_charged_the_energy_its_gpu_drew() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent_with(
        &url,
        "watts",
        &dir.join("agent"),
        Gpus::Fake(2),
        &["--telemetry-interval", "200ms"],
    );
    let id = submit(&url, &["--gpus", "1", "--", "sleep", "3"]);
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    let joules = v["energy_j"]
        .as_u64()
        .unwrap_or_else(|| panic!("no energy after 3 s on a sampled GPU: {v}"));
    // The fake H100 draws at most its 700 W board power; the job held its GPU about 3 s, give or take a
    // sampling interval and a busy machine's delays.
    let ran_s = (v["end_ms"].as_u64().unwrap() - v["start_ms"].as_u64().unwrap()) as f64 / 1e3;
    eprintln!("job {id}: {joules} J over {ran_s:.2} s");
    assert!(
        joules > 0 && (joules as f64) <= 700.0 * (ran_s + 2.0),
        "{joules} J over {ran_s} s"
    );

    let shown = stdout(&cli(&url, &["show", &id.to_string()]));
    let line = shown
        .lines()
        .find(|l| l.trim_start().starts_with("energy:"))
        .unwrap_or_else(|| panic!("no energy line in {shown}"));
    assert!(
        line.contains("kWh") && line.contains(&format!("({joules} J)")),
        "{line}"
    );

    let o = cli(&url, &["usage", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let kwh = r["rows"][0]["energy_kwh"].as_f64().unwrap();
    assert!(
        (kwh * 3.6e6 - joules as f64).abs() < 1.0,
        "{kwh} kWh vs {joules} J"
    );
}
