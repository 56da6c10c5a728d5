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
    config_on(
        dir,
        gpusched_store::StoreUrl::Sqlite(file.to_path_buf()),
        lease,
    )
}

fn config_on(
    dir: &std::path::Path,
    store: gpusched_store::StoreUrl,
    lease: Duration,
) -> Arc<ServerConfig> {
    std::fs::create_dir_all(dir).unwrap();
    let mut cfg = ServerConfig::new(dir.to_path_buf(), "127.0.0.1:0".parse().unwrap());
    cfg.store = Some(store);
    cfg.lease = lease;
    Arc::new(cfg)
}

async fn elector(
    cfg: Arc<ServerConfig>,
    url: &str,
) -> (Elector, Leadership, mpsc::Receiver<crate::actor::Cmd>) {
    let lead = Leadership::new(url.into(), Duration::ZERO);
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
/// lock) stops leading BEFORE its lease runs out by the database's clock; once the lock
/// is gone and the lease has run out, one server leads with the next epoch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_cannot_renew_steps_down_before_its_lease_expires() {
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
    wait(Duration::from_secs(20), || !lead_a.leading()).await;
    let l = reader.leader().await.unwrap().unwrap();
    assert_eq!(l.epoch, 1);
    assert!(
        l.live(),
        "stepped down {} ms after its lease had run out by the database's clock",
        l.now_ms - l.expires_ms
    );
    drop(tx);
    // Once the lease has run out, one of them leads with the next epoch (the old leader
    // may win it back: it then reloads the state) and the other follows it.
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

/// A leader cut off from PostgreSQL by the network (a frozen proxy: its renewals and
/// commits get neither an answer nor an error, as in a partition) stops leading BEFORE
/// its lease runs out by the database's clock, the follower takes over with the next
/// epoch, and once the network is back the old leader follows the new one: nothing it
/// waits on hangs for as long as the network does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_cut_off_from_postgres_steps_down_before_its_lease_expires() {
    use gpusched_store::testing::{TcpProxy, TempPostgres};
    use gpusched_store::StoreUrl;
    let Some(pg) = TempPostgres::start_or_skip("a_leader_cut_off_from_postgres_steps_down") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let lease = Duration::from_secs(2);
    let proxy = TcpProxy::start(pg.addr()).unwrap();
    let via = StoreUrl::Postgres(pg.url_via(proxy.port(), "a"));
    let (mut a, lead_a, rx_a) =
        elector(config_on(&tmp.path().join("a"), via, lease), "http://a").await;
    let phase = a.start(rx_a).await.unwrap();
    assert!(matches!(phase, Phase::Leading(_)));
    let _a = a.spawn(phase);
    let direct = StoreUrl::Postgres(pg.url_as("b"));
    let (mut b, lead_b, rx_b) = elector(
        config_on(&tmp.path().join("b"), direct.clone(), lease),
        "http://b",
    )
    .await;
    let phase = b.start(rx_b).await.unwrap();
    assert!(matches!(phase, Phase::Following(_)));
    let _b = b.spawn(phase);
    let mut reader = Store::open(&direct).await.unwrap();

    proxy.freeze();
    let cut = Instant::now();
    wait(Duration::from_secs(20), || !lead_a.leading()).await;
    let l = reader.leader().await.unwrap().unwrap();
    assert_eq!(l.epoch, 1, "{l:?}");
    assert!(
        l.live(),
        "stepped down {} ms after its lease had run out by the database's clock",
        l.now_ms - l.expires_ms
    );
    eprintln!(
        "stepped down {:?} after the cut (lease {lease:?})",
        cut.elapsed()
    );
    wait(Duration::from_secs(20), || lead_b.leading()).await;
    assert_eq!(lead_b.role(), Role::Leader { epoch: 2 });
    assert!(!lead_a.leading());
    proxy.thaw();
    wait(Duration::from_secs(30), || {
        lead_a.role()
            == Role::Follower {
                leader: Some(crate::leader::Known {
                    url: "http://b".into(),
                    epoch: 2,
                }),
            }
    })
    .await;
    assert_eq!(lead_b.role(), Role::Leader { epoch: 2 });
}
