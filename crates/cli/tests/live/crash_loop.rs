//! The CI-sized crash loop (scripts/crash_loop.py runs the 100-kill one): the server is
//! SIGKILLed five times at random moments while clients submit without pause and jobs
//! complete; nothing accepted is lost, nothing is stored twice, nothing runs twice.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// A small xorshift: random kill moments without a dependency; the seed is printed so a
/// failure can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn five_server_kills_under_load_lose_duplicate_and_rerun_nothing() {
    let seed = std::env::var("GPUSCHED_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        });
    eprintln!("crash loop seed {seed} (GPUSCHED_CRASH_SEED replays it)");
    let mut rng = Rng(seed);
    let (_d, dir) = scratch();
    let data = dir.join("data");
    let port = free_port();
    // The node lease (30 s here: the test servers' lease follows the heartbeat timeout)
    // outlasts every restart, so no run is fenced: every job must run exactly once.
    let hb = ["--heartbeat-timeout", "30s"];
    let (first, url) = server(&data, port, &hb);
    let _agent = agent(&url, "n1", &dir.join("a"), Gpus::Declared(8));
    let ledger = dir.join("ledger");

    let accepted = Arc::new(Mutex::new(Vec::<(u64, String)>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let submitters: Vec<_> = (0..2)
        .map(|t| {
            let (accepted, stop, url, ledger) =
                (accepted.clone(), stop.clone(), url.clone(), ledger.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let name = format!("s{t}-{n}");
                    let script = format!(
                        "echo $GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT {name} >> {}; sleep 0.{}",
                        ledger.display(),
                        n % 5
                    );
                    let o = cli(
                        &url,
                        &[
                            "submit", "--json", "--name", &name, "--", "sh", "-c", &script,
                        ],
                    );
                    if o.status.success() {
                        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
                        let id = v["ids"][0].as_u64().unwrap();
                        accepted.lock().unwrap().push((id, name));
                    } else {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
            })
        })
        .collect();

    // An array whose tasks run through the kills: each index must run exactly once, and
    // each task read back whole (its compact record, store schema 17) after them.
    let tasks = 120u64;
    let script = format!(
        "echo $GPUSCHED_JOB_ID $GPUSCHED_ATTEMPT arr-$GPUSCHED_ARRAY_INDEX >> {}; \
         sleep 0.$((GPUSCHED_ARRAY_INDEX % 5))",
        ledger.display()
    );
    let range = format!("0-{}", tasks - 1);
    let o = cli(
        &url,
        &[
            "submit", "--json", "--name", "arr", "--array", &range, "--", "sh", "-c", &script,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let array_id = serde_json::from_str::<Value>(&stdout(&o)).unwrap()["ids"][0]
        .as_u64()
        .unwrap();

    let mut current = first;
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(200 + rng.below(1000)));
        current.kill(); // SIGKILL, mid-traffic
        let (next, again) = server(&data, port, &hb);
        assert_eq!(again, url);
        current = next;
    }
    // Some work accepted by the last life too.
    let before = accepted.lock().unwrap().len();
    wait_until(SLOW, || accepted.lock().unwrap().len() >= before + 5);
    stop.store(true, Ordering::SeqCst);
    for s in submitters {
        s.join().unwrap();
    }
    let accepted = accepted.lock().unwrap().clone();

    // Every job ends.
    let start = Instant::now();
    loop {
        let (code, b) = http(&url, "GET", "/api/jobs?state=active&limit=100000", None);
        let empty = code == 200
            && serde_json::from_str::<Value>(&b)
                .ok()
                .and_then(|v| v["jobs"].as_array().map(|a| a.is_empty()))
                .unwrap_or(false);
        if empty {
            break;
        }
        assert!(start.elapsed() < SLOW * 2, "jobs still active: {b}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let (_, body) = http(&url, "GET", "/api/jobs?limit=100000", None);
    let all: Value = serde_json::from_str(&body).unwrap();
    let jobs = all["jobs"].as_array().unwrap();
    let mut by_id: BTreeMap<u64, &Value> = BTreeMap::new();
    let mut by_name: BTreeMap<&str, u32> = BTreeMap::new();
    for j in jobs {
        assert!(
            by_id.insert(j["id"].as_u64().unwrap(), j).is_none(),
            "duplicate id: {j}"
        );
        *by_name.entry(j["name"].as_str().unwrap()).or_default() += 1;
    }
    let twice: Vec<_> = by_name.iter().filter(|(_, &c)| c > 1).collect();
    assert!(twice.is_empty(), "submissions stored twice: {twice:?}");
    for (id, name) in &accepted {
        let j = by_id
            .get(id)
            .unwrap_or_else(|| panic!("accepted job {id} was lost"));
        assert_eq!(j["name"], name.as_str(), "{j}");
    }
    let mut runs: BTreeMap<u64, u32> = BTreeMap::new();
    let mut indices: BTreeMap<u64, u32> = BTreeMap::new();
    let mut task_ids: BTreeMap<u64, u64> = BTreeMap::new();
    for line in std::fs::read_to_string(&ledger).unwrap().lines() {
        let mut words = line.split(' ');
        let id: u64 = words.next().unwrap().parse().unwrap();
        *runs.entry(id).or_default() += 1;
        if let Some(index) = words.nth(1).and_then(|w| w.strip_prefix("arr-")) {
            let index: u64 = index.parse().unwrap();
            *indices.entry(index).or_default() += 1;
            task_ids.insert(index, id);
        }
    }
    // The array is one item of the list; its tasks ran as jobs of their own.
    let array = by_id.remove(&array_id).expect("the array is listed");
    assert_eq!(array["state"], "succeeded", "{array}");
    for (id, j) in &by_id {
        assert_eq!(j["state"], "succeeded", "{j}");
        assert_eq!(runs.get(id), Some(&1), "job {id} ran exactly once");
    }
    let ran_twice: Vec<_> = indices.iter().filter(|(_, &n)| n != 1).collect();
    assert!(
        ran_twice.is_empty(),
        "array indices that ran twice: {ran_twice:?}"
    );
    assert_eq!(indices.len() as u64, tasks, "every index of the array ran");
    for (index, id) in &task_ids {
        let (code, b) = http(
            &url,
            "GET",
            &format!("/api/jobs/{array_id}/tasks/{index}"),
            None,
        );
        assert_eq!(code, 200, "{b}");
        let t: Value = serde_json::from_str(&b).unwrap();
        assert_eq!(
            (t["id"].as_u64(), &t["state"]),
            (Some(*id), &Value::from("succeeded")),
            "{t}"
        );
        assert_eq!(
            runs.get(id),
            Some(&1),
            "task {index} (job {id}) ran exactly once"
        );
    }
    assert_eq!(
        runs.len(),
        by_id.len() + task_ids.len(),
        "nothing ran that the server does not know"
    );
    eprintln!(
        "crash loop: 5 kills, {} accepted, {} known, an array of {tasks} tasks each run \
         once, 0 lost, 0 duplicated, 0 ran twice",
        accepted.len(),
        by_id.len()
    );
}
