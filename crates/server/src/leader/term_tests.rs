//! The election loop against a real SQLite file, without HTTP.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gpusched_store::Store;
use tokio::sync::mpsc;

use super::{Elector, Phase};
use crate::auth::{SharedTokens, TokenTable};
use crate::config::ServerConfig;
use crate::leader::{Leadership, Role};

fn config(dir: &std::path::Path, file: &std::path::Path, lease: Duration) -> Arc<ServerConfig> {
    let mut cfg = ServerConfig::new(dir.to_path_buf(), "127.0.0.1:0".parse().unwrap());
    cfg.store = Some(gpusched_store::StoreUrl::Sqlite(file.to_path_buf()));
    cfg.lease = lease;
    Arc::new(cfg)
}

async fn elector(
    cfg: Arc<ServerConfig>,
    url: &str,
) -> (Elector, Leadership, mpsc::Receiver<crate::actor::Cmd>) {
    let lead = Leadership::new(url.into());
    let (tx, rx) = mpsc::channel(64);
    let tokens: SharedTokens = Arc::new(std::sync::RwLock::new(TokenTable::new(
        crate::auth::hash("join"),
    )));
    let el = Elector::open(cfg, lead.clone(), tx, tokens).await.unwrap();
    (el, lead, rx)
}

async fn wait(limit: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < limit, "not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A leader whose renewals cannot get through (another connection holds SQLite's write
/// lock) stops acting BEFORE its lease runs out by the database's clock, keeps trying
/// for one more lease, then steps down; once the lock is gone, one server leads with the
/// next epoch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_cannot_renew_stops_acting_before_its_lease_expires() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("shared.db");
    let lease = Duration::from_secs(2);
    std::fs::create_dir_all(tmp.path().join("a")).unwrap();
    std::fs::create_dir_all(tmp.path().join("b")).unwrap();
    let (mut a, lead_a, rx_a) =
        elector(config(&tmp.path().join("a"), &file, lease), "http://a").await;
    let phase = a.start(rx_a).await.unwrap();
    assert!(matches!(phase, Phase::Leading(_)));
    assert_eq!(lead_a.role(), Role::Leader { epoch: 1 });
    let _a = a.spawn(phase);

    let (mut b, lead_b, rx_b) =
        elector(config(&tmp.path().join("b"), &file, lease), "http://b").await;
    let phase = b.start(rx_b).await.unwrap();
    assert!(matches!(phase, Phase::Following(_)));
    assert_eq!(
        lead_b.role(),
        Role::Follower {
            leader: Some(crate::leader::Known {
                url: "http://a".into(),
                epoch: 1
            })
        }
    );
    let _b = b.spawn(phase);

    // Hold the write lock: no renewal (and no takeover) gets through.
    let mut blocker = Store::open_file(&file).await.unwrap();
    let mut reader = Store::open_file(&file).await.unwrap();
    let mut tx = blocker.begin().await.unwrap();
    tx.put_meta("blocker", "holds the write lock")
        .await
        .unwrap();
    wait(Duration::from_secs(20), || !lead_a.may_commit(1)).await;
    let l = reader.leader().await.unwrap().unwrap();
    assert_eq!(l.epoch, 1);
    assert!(
        l.live(),
        "stopped acting {} ms after its lease had run out by the database's clock",
        l.now_ms - l.expires_ms
    );
    // Still blocked a whole lease later: it gives the lease up.
    wait(Duration::from_secs(20), || !lead_a.leading()).await;
    drop(tx);
    // One of them leads with the next epoch (the old leader may win it back: it then
    // reloads the state) and the other follows it.
    wait(Duration::from_secs(20), || {
        lead_a.leading() || lead_b.leading()
    })
    .await;
    let (winner, url, other) = if lead_a.leading() {
        (&lead_a, "http://a", &lead_b)
    } else {
        (&lead_b, "http://b", &lead_a)
    };
    assert_eq!(winner.role(), Role::Leader { epoch: 2 });
    wait(Duration::from_secs(20), || {
        other.role()
            == Role::Follower {
                leader: Some(crate::leader::Known {
                    url: url.into(),
                    epoch: 2,
                }),
            }
    })
    .await;
}

/// A lone leader stalled past its lease (here: its renewals blocked behind SQLite's
/// write lock, as behind a long commit of its own) pauses, and resumes the SAME term
/// once a renewal gets through: no step-down, no new epoch, no reload, and a command
/// sent while it was paused is answered after it resumes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_leader_renewed_late_resumes_its_term() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("lone.db");
    let lease = Duration::from_secs(2);
    let (mut a, lead_a, rx_a) = elector(config(tmp.path(), &file, lease), "http://a").await;
    let tx_a = a.tx.clone();
    let phase = a.start(rx_a).await.unwrap();
    assert!(matches!(phase, Phase::Leading(_)));
    let _a = a.spawn(phase);

    let mut blocker = Store::open_file(&file).await.unwrap();
    let mut reader = Store::open_file(&file).await.unwrap();
    let mut tx = blocker.begin().await.unwrap();
    tx.put_meta("blocker", "holds the write lock")
        .await
        .unwrap();
    wait(Duration::from_secs(20), || !lead_a.may_commit(1)).await;
    // A command while paused waits instead of failing.
    let (reply, answered) = tokio::sync::oneshot::channel();
    tx_a.send(crate::actor::Cmd::Ping(reply)).await.unwrap();
    // Past the lease by the database's clock, nobody else wants it.
    let start = Instant::now();
    while reader.leader().await.unwrap().unwrap().live() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the lease never ran out"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(lead_a.role(), Role::Leader { epoch: 1 });
    drop(tx);
    wait(Duration::from_secs(20), || lead_a.may_commit(1)).await;
    assert_eq!(lead_a.role(), Role::Leader { epoch: 1 });
    tokio::time::timeout(Duration::from_secs(20), answered)
        .await
        .expect("the command is answered once the term resumes")
        .expect("answered, not dropped")
        .expect("a ping succeeds");
    let l = reader.leader().await.unwrap().unwrap();
    assert_eq!(l.epoch, 1, "no new epoch: the term went on");
    assert!(l.live());
}
