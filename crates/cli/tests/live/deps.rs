//! Dependency kinds, workflows, and hold/release/update through the CLI, with real
//! processes: the order steps ran in is read from the timestamps the jobs wrote.

use std::path::Path;
use std::time::Duration;

use crate::support::*;

/// A step's command: writes `NAME.start` and `NAME.end` (ns since the epoch) into
/// `dir`, then exits `code`.
fn stamping(dir: &Path, name: &str, code: i32) -> String {
    let d = dir.display();
    format!(
        "command = [\"sh\", \"-c\", \"date +%s%N > {d}/{name}.start; sleep 0.2; \
         date +%s%N > {d}/{name}.end; exit {code}\"]\ngpus = 1\n"
    )
}

fn stamp(dir: &Path, file: &str) -> u128 {
    let text = wait_for_text(&dir.join(file), SLOW, |t| t.ends_with('\n'));
    text.trim()
        .parse()
        .unwrap_or_else(|e| panic!("{file}: {text:?}: {e}"))
}

#[test]
fn a_workflow_runs_its_steps_in_dependency_order_with_each_kind() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Fake(2));
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // prep -> train -> eval (which fails); report runs because eval did not succeed,
    // cleanup runs however it ended, publish (after eval succeeded) never can.
    let file = format!(
        "[[step]]\nkey = \"prep\"\n{}\n\
         [[step]]\nkey = \"train\"\nafter = [\"prep\"]\n{}\n\
         [[step]]\nkey = \"eval\"\nafter = [\"train\"]\n{}\n\
         [[step]]\nkey = \"report\"\nafter_notok = [\"eval\"]\n{}\n\
         [[step]]\nkey = \"cleanup\"\nafter_any = [\"eval\"]\n{}\n\
         [[step]]\nkey = \"publish\"\nafter = [\"eval\"]\n{}\n",
        stamping(&out, "prep", 0),
        stamping(&out, "train", 0),
        stamping(&out, "eval", 3),
        stamping(&out, "report", 0),
        stamping(&out, "cleanup", 0),
        stamping(&out, "publish", 0),
    );
    let path = dir.join("pipeline.toml");
    std::fs::write(&path, file).unwrap();
    let o = cli(
        &url,
        &["workflow", "submit", "--json", path.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let ids: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let id = |k: &str| {
        ids["ids"][k]
            .as_u64()
            .unwrap_or_else(|| panic!("{k}: {ids}"))
    };
    let state = |k: &str| {
        wait_job(&url, id(k), SLOW)["state"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(state("prep"), "succeeded");
    assert_eq!(state("train"), "succeeded");
    assert_eq!(state("eval"), "failed");
    assert_eq!(state("report"), "succeeded");
    assert_eq!(state("cleanup"), "succeeded");
    let publish = wait_job(&url, id("publish"), SLOW);
    assert_eq!(publish["state"], "failed", "{publish}");
    assert!(
        publish["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("dependency job {} ended failed", id("eval"))),
        "{publish}"
    );
    assert!(!out.join("publish.start").exists());
    // Each step started after what it waited for had ended, by the jobs' own clocks.
    let after = |first: &str, then: &str| {
        let (end, start) = (
            stamp(&out, &format!("{first}.end")),
            stamp(&out, &format!("{then}.start")),
        );
        assert!(
            end <= start,
            "{then} started at {start}, before {first} ended at {end}"
        );
    };
    after("prep", "train");
    after("train", "eval");
    after("eval", "report");
    after("eval", "cleanup");

    // A cycle is refused whole, naming it; nothing was submitted.
    let before = stdout(&cli(&url, &["queue", "--all"]));
    let cyc = dir.join("cycle.toml");
    std::fs::write(
        &cyc,
        "[[step]]\nkey = \"a\"\nafter = [\"b\"]\ncommand = \"true\"\n\
         [[step]]\nkey = \"b\"\nafter = [\"a\"]\ncommand = \"true\"\n",
    )
    .unwrap();
    let o = cli(&url, &["workflow", "submit", cyc.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("steps form a cycle: "),
        "{}",
        stderr(&o)
    );
    assert_eq!(stdout(&cli(&url, &["queue", "--all"])), before);
}

#[test]
fn hold_release_and_update_through_the_cli() {
    let (_d, dir) = scratch();
    // --max-wait: a wait on the held job (which cannot end) answers at 1 s, not at the
    // 300 s it asks for.
    let (_server, url) = server(&dir.join("data"), 0, &["--max-wait", "1s"]);
    let _agent = agent(&url, "n1", &dir.join("agent"), Gpus::Fake(1));
    let held = submit(&url, &["--hold", "--", "true"]);
    let id = held.to_string();
    let v = job(&url, held);
    assert_eq!(
        (v["state"].as_str(), v["held"].as_bool()),
        (Some("pending"), Some(true))
    );
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("release with `gpusched release {held}`")),
        "{v}"
    );
    let queue = stdout(&cli(&url, &["queue"]));
    assert!(queue.contains("held"), "{queue}");
    let asked = std::time::Instant::now();
    let (code, body) = http(
        &url,
        "GET",
        &format!("/api/jobs/{held}/wait?timeout_s=300"),
        None,
    );
    assert_eq!(code, 200, "{body}");
    assert!(body.contains(r#""state":"pending""#), "{body}");
    // Far under the 300 s asked for, however slow the machine.
    assert!(
        asked.elapsed() < Duration::from_secs(120),
        "{:?}",
        asked.elapsed()
    );

    // An update while held; the walltime as a person writes it.
    let o = cli(
        &url,
        &["update", &id, "--priority", "3", "--walltime", "2h"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("priority 3, walltime 2:00:00"),
        "{}",
        stdout(&o)
    );
    let o = cli(&url, &["hold", &id]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("already held"), "{}", stderr(&o));

    // A job after any end of the held one waits for it, and says so.
    let any = submit(&url, &["--after", &format!("any:{held}"), "--", "true"]);
    let show = stdout(&cli(&url, &["show", &any.to_string()]));
    assert!(show.contains(&format!("any:{held}")), "{show}");

    let o = cli(&url, &["release", &id]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = wait_job(&url, held, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    assert_eq!(
        (v["priority"].as_i64(), v["walltime_s"].as_u64()),
        (Some(3), Some(7200))
    );
    assert_eq!(wait_job(&url, any, SLOW)["state"], "succeeded");

    // Only a pending job may change.
    let o = cli(&url, &["release", &id]);
    assert!(
        stderr(&o).contains("is succeeded, not pending"),
        "{}",
        stderr(&o)
    );
    let events = stdout(&cli(&url, &["show", "--events", &id]));
    for kind in ["held", "updated", "released"] {
        assert!(events.contains(kind), "{kind}: {events}");
    }
}
