//! A command the state refuses before anything is read (`fetch.rs`) is answered with the
//! refusal, whatever the command: never dropped (which a client would see as a server
//! that stopped leading).

use gpusched_wire::UsageQuery;

use super::failed_commit_tests::{admin, ask, start};
use super::Cmd;
use crate::state::Fail;

#[tokio::test]
async fn a_refused_read_is_the_commands_answer() {
    let d = tempfile::tempdir().unwrap();
    let tx = start(&d.path().join("data")).await;
    let future = UsageQuery {
        since_ms: Some(32_503_680_000_000),
        ..Default::default()
    };
    match ask(&tx, |r| Cmd::Usage(future, admin(), r)).await {
        Err(Fail::Conflict(m)) => assert!(m.contains("in the future"), "{m}"),
        other => panic!("a usage window in the future is a conflict, got {other:?}"),
    }
    let bad = UsageQuery {
        by: Some("node".into()),
        ..Default::default()
    };
    match ask(&tx, |r| Cmd::Usage(bad, admin(), r)).await {
        Err(Fail::BadRequest(m)) => assert!(m.contains("`by`"), "{m}"),
        other => panic!("an unknown grouping is a bad request, got {other:?}"),
    }
}
