//! A round whose commit fails: its requests get 503, nothing of it survives in memory or
//! on disk, and the server goes on serving from what the store holds.

use std::net::SocketAddr;
use std::sync::Arc;

use gpusched_store::Store;
use gpusched_wire::{GpuInfo, GpuSource, JobListQuery, JobState, JobSubmit, Register};
use tokio::sync::{mpsc, oneshot};

use super::{run, Cmd};
use crate::auth::{SharedTokens, TokenTable};
use crate::config::ServerConfig;
use crate::queues::Queues;
use crate::record::JobRecord;
use crate::state::{Fail, State, Who};

pub(super) fn admin() -> Who {
    Who {
        user: "root".into(),
        admin: true,
    }
}

fn job(name: &str) -> JobSubmit {
    JobSubmit {
        name: Some(name.into()),
        command: vec!["/bin/true".into()],
        ..Default::default()
    }
}

pub(super) async fn start(dir: &std::path::Path) -> mpsc::Sender<Cmd> {
    let listen: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let cfg = Arc::new(ServerConfig::new(dir.to_path_buf(), listen));
    let mut store = Store::open_dir(dir).await.unwrap();
    let jobs = store.load_jobs().await.unwrap();
    let jobs = jobs.into_iter().map(JobRecord::from_row).collect();
    let nodes = store.load_nodes().await.unwrap();
    let tokens = store.load_tokens().await.unwrap();
    let state = State::load(
        cfg,
        jobs,
        nodes,
        tokens,
        Queues::default(),
        crate::clock::Now::read(),
    );
    let table: SharedTokens = Arc::new(std::sync::RwLock::new(TokenTable::new(crate::auth::hash(
        "join",
    ))));
    let (tx, rx) = mpsc::channel(64);
    let term = super::Term {
        lead: crate::leader::Leadership::leading_for_tests(1),
        epoch: 1,
    };
    tokio::spawn(run(state, store, rx, table, term));
    // A node, so jobs are admitted; one GPU, so the first job holds it.
    let reg = Register {
        node: "n1".into(),
        containment: None,
        agent_version: "test".into(),
        gpus: vec![GpuInfo {
            index: 0,
            uuid: None,
            model: "A100-SXM4-80GB".into(),
            mem_mib: 81920,
            source: GpuSource::Declared,
            mig: None,
        }],
        cpus: 8,
        mem_mib: 65536,
        mps: false,
        resources: Default::default(),
        features: Vec::new(),
        log_url: None,
        log_token: None,
        advertise_addr: None,
        location: Default::default(),
        gpu_links: Vec::new(),
        running: vec![],
        events: vec![],
    };
    ask(&tx, |r| {
        Cmd::Register(Box::new(reg), gpusched_wire::agent::AGENT_PROTOCOL, r)
    })
    .await
    .unwrap();
    tx
}

pub(super) async fn ask<T>(
    tx: &mpsc::Sender<Cmd>,
    make: impl FnOnce(super::Reply<T>) -> Cmd,
) -> Result<T, Fail> {
    let (reply, answer) = oneshot::channel();
    tx.send(make(reply)).await.unwrap();
    answer.await.expect("the state task answers")
}

async fn names(tx: &mpsc::Sender<Cmd>) -> Vec<(u64, String, JobState)> {
    let list = ask(tx, |r| Cmd::List(JobListQuery::default(), admin(), r))
        .await
        .unwrap();
    // The list is newest first; the store's rows come oldest first.
    let mut jobs: Vec<_> = list
        .jobs
        .into_iter()
        .map(|j| (j.id, j.name, j.state))
        .collect();
    jobs.sort_by_key(|j| j.0);
    jobs
}

#[tokio::test]
async fn a_failed_commit_answers_503_and_leaves_nothing_half_applied() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("data");
    let tx = start(&dir).await;
    let kept = ask(&tx, |r| {
        Cmd::Submit(vec![job("kept")], admin(), Default::default(), r)
    })
    .await
    .unwrap()
    .ids[0];

    // One round that submits a batch and cancels the kept job, and whose commit fails.
    gpusched_store::fail_commits(&dir, 1);
    let (r1, a1) = oneshot::channel();
    let (r2, a2) = oneshot::channel();
    tx.send(Cmd::Submit(
        vec![job("lost-1"), job("lost-2"), job("lost-3")],
        admin(),
        Default::default(),
        r1,
    ))
    .await
    .unwrap();
    tx.send(Cmd::Cancel(kept, admin(), r2)).await.unwrap();
    let refused = a1.await.unwrap().unwrap_err();
    assert!(
        matches!(&refused, Fail::Unavailable(m) if m.contains("could not save") && m.contains("free space")),
        "{refused:?}"
    );
    // The cancel may have gone in the same round (refused) or the next (done); either
    // way what the state says afterwards is what the store says.
    let _ = a2.await.unwrap();

    // Nothing of the failed round is in memory: the batch is gone, ids are not burnt
    // into a gap, and the server still takes work.
    let after = names(&tx).await;
    assert!(
        after.iter().all(|(_, n, _)| !n.starts_with("lost")),
        "{after:?}"
    );
    let next = ask(&tx, |r| {
        Cmd::Submit(vec![job("next")], admin(), Default::default(), r)
    })
    .await
    .unwrap()
    .ids[0];
    assert_eq!(
        next,
        kept + 1,
        "the failed batch's ids were never handed out"
    );
    let live = names(&tx).await;

    // ... and nothing of it is on disk: memory and store agree job by job.
    drop(tx);
    let mut store = Store::open_dir(&dir).await.unwrap();
    let stored: Vec<(u64, String, JobState)> = store
        .load_jobs()
        .await
        .unwrap()
        .into_iter()
        .map(|j| (j.id, j.name, j.state))
        .collect();
    assert_eq!(stored, live);
    assert_eq!(
        stored.iter().map(|(id, _, _)| *id).collect::<Vec<_>>(),
        vec![kept, next]
    );
}

#[tokio::test]
async fn commits_that_keep_failing_are_each_refused_and_service_resumes_after() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("data");
    let tx = start(&dir).await;
    gpusched_store::fail_commits(&dir, 3);
    for i in 0..3 {
        let r = ask(&tx, |r| {
            Cmd::Submit(
                vec![job(&format!("try-{i}"))],
                admin(),
                Default::default(),
                r,
            )
        })
        .await;
        assert!(matches!(r, Err(Fail::Unavailable(_))), "{r:?}");
    }
    // Space is back: the same request now succeeds, with the first id.
    let ok = ask(&tx, |r| {
        Cmd::Submit(vec![job("ok")], admin(), Default::default(), r)
    })
    .await
    .unwrap();
    assert_eq!(ok.ids, vec![1]);
    assert_eq!(names(&tx).await.len(), 1);
}

/// The history of a failed round goes with it: the id its job would have had is handed
/// out again, and must not inherit that job's events; an audited action refused by the
/// commit is not in the audit log. Reads answer after the round's commit, so they see it.
#[tokio::test]
async fn a_failed_rounds_events_and_audit_entries_are_not_kept() {
    use gpusched_wire::history::{AuditAction, JobEventKind};
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("data");
    let tx = start(&dir).await;
    let kept = ask(&tx, |r| {
        Cmd::Submit(vec![job("kept")], admin(), Default::default(), r)
    })
    .await
    .unwrap()
    .ids[0];
    gpusched_store::fail_commits(&dir, 2);
    let refused = ask(&tx, |r| {
        Cmd::Submit(vec![job("lost")], admin(), Default::default(), r)
    })
    .await;
    assert!(matches!(refused, Err(Fail::Unavailable(_))), "{refused:?}");
    let token = gpusched_wire::TokenCreate {
        user: "carol".into(),
        role: gpusched_wire::Role::User,
    };
    let refused = ask(&tx, |r| Cmd::CreateToken(token.clone(), admin(), r)).await;
    assert!(matches!(refused, Err(Fail::Unavailable(_))), "{refused:?}");

    let next = ask(&tx, |r| {
        Cmd::Submit(vec![job("next")], admin(), Default::default(), r)
    })
    .await
    .unwrap()
    .ids[0];
    assert_eq!(next, kept + 1, "the lost job's id is handed out again");
    let events = ask(&tx, |r| Cmd::Events(next, admin(), r)).await.unwrap();
    let kinds: Vec<JobEventKind> = events.events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [JobEventKind::Submitted], "{events:?}");
    let kept_events = ask(&tx, |r| Cmd::Events(kept, admin(), r)).await.unwrap();
    let kinds: Vec<JobEventKind> = kept_events.events.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [JobEventKind::Submitted, JobEventKind::Placed],
        "{kept_events:?}"
    );

    let none = ask(&tx, |r| Cmd::Audit(Default::default(), admin(), r))
        .await
        .unwrap();
    assert!(none.entries.is_empty(), "{none:?}");
    ask(&tx, |r| Cmd::CreateToken(token, admin(), r))
        .await
        .unwrap();
    let one = ask(&tx, |r| Cmd::Audit(Default::default(), admin(), r))
        .await
        .unwrap();
    let got: Vec<(AuditAction, &str)> = one
        .entries
        .iter()
        .map(|e| (e.action, e.target.as_str()))
        .collect();
    assert_eq!(got, [(AuditAction::TokenCreate, "carol")]);
    let user = Who {
        user: "carol".into(),
        admin: false,
    };
    let refused = ask(&tx, |r| Cmd::Audit(Default::default(), user, r)).await;
    assert!(matches!(refused, Err(Fail::Forbidden(_))), "{refused:?}");
}
