//! Service replicas against real processes: a python3 HTTP server given its port by the
//! launcher, probed, and stopped by its liveness probe. Skipped without python3 (a
//! failure under CI, whose setup installs it).

use std::fs;
use std::time::Duration;

use gpusched_agent::jobdir::Stream;
use gpusched_agent::probe::Kind;
use gpusched_wire::service::{Probe, ServeLaunch};
use gpusched_wire::{Outcome, RunEventKind};
use tokio::time::timeout;

use super::contain::python3;
use super::{attempt, expect_started, first_line, gpu, next_event, setup, sh, wait_dead};

/// Prints `$PORT $GPUSCHED_PORT $MASTER_PORT`, then serves HTTP on `$PORT`: `GET /NAME`
/// answers 503 while the checkpoint directory holds `no-NAME`, else 200.
const SERVER: &str = r#"echo "$PORT $GPUSCHED_PORT $MASTER_PORT"; exec python3 -c '
import http.server as h, os
d = os.environ["GPUSCHED_CHECKPOINT_DIR"]
class H(h.BaseHTTPRequestHandler):
    def do_GET(s):
        s.send_response(503 if os.path.exists(d + "/no-" + s.path[1:]) else 200)
        s.end_headers()
    def log_message(s, *a): pass
h.HTTPServer(("", int(os.environ["PORT"])), H).serve_forever()
'"#;

fn every_second(path: &str, failure_threshold: u32, initial_delay_s: u32) -> Probe {
    Probe {
        path: Some(path.into()),
        period_s: 1,
        timeout_s: 1,
        failure_threshold,
        initial_delay_s,
    }
}

#[tokio::test]
async fn a_replica_is_told_its_port_reported_before_its_start_and_ready_once_it_serves() {
    if !python3() {
        return;
    }
    let (_state, launcher, mut rx) = setup();
    let mut l = sh(301, SERVER);
    // With a GPU it is a job of one node with a MASTER_PORT too: another number.
    l.gpus = vec![0];
    l.serve = Some(ServeLaunch {
        readiness: Some(every_second("/ready", 2, 0)),
        liveness: None,
    });
    launcher.start(&l, &[gpu(0, None)]).unwrap();
    let port = match next_event(&mut rx).await.event {
        RunEventKind::Listening { port } => port,
        other => panic!("expected Listening first, got {other:?}"),
    };
    expect_started(&mut rx).await;
    let line = first_line(&launcher.log_path(attempt(301), Stream::Stdout)).await;
    let ports: Vec<&str> = line.split(' ').collect();
    assert_eq!(ports[..2], [port.to_string(), port.to_string()], "{line}");
    assert_ne!(ports[2], port.to_string(), "{line}");
    // Ready once it serves; nothing before (failures before the first success are not
    // news).
    assert_eq!(
        next_event(&mut rx).await.event,
        RunEventKind::Ready {
            ready: true,
            message: None
        }
    );
    // Not ready after two failures in a row, saying what the probe got.
    let flag = launcher.checkpoint_dir(301).join("no-ready");
    fs::write(&flag, "").unwrap();
    let message = format!("GET http://127.0.0.1:{port}/ready: status 503");
    assert_eq!(
        next_event(&mut rx).await.event,
        RunEventKind::Ready {
            ready: false,
            message: Some(message)
        }
    );
    fs::remove_file(&flag).unwrap();
    assert_eq!(
        next_event(&mut rx).await.event,
        RunEventKind::Ready {
            ready: true,
            message: None
        }
    );
    assert!(launcher.probe_failures().get(Kind::Readiness) >= 2);
    launcher.cancel(attempt(301));
    match next_event(&mut rx).await.event {
        RunEventKind::Ended { outcome, .. } => assert_eq!(outcome, Outcome::Cancelled),
        other => panic!("expected the end, got {other:?}"),
    }
}

#[tokio::test]
async fn liveness_failures_stop_a_replica_which_ends_unhealthy_and_is_probed_no_more() {
    if !python3() {
        return;
    }
    let (_state, launcher, mut rx) = setup();
    let mut l = sh(302, SERVER);
    l.serve = Some(ServeLaunch {
        readiness: Some(every_second("/ready", 2, 0)),
        // From 2 s after the start: python3 listens by then on all but a crawling host.
        liveness: Some(every_second("/live", 2, 2)),
    });
    launcher.start(&l, &[]).unwrap();
    let port = match next_event(&mut rx).await.event {
        RunEventKind::Listening { port } => port,
        other => panic!("expected Listening first, got {other:?}"),
    };
    let pid = expect_started(&mut rx).await;
    assert!(matches!(
        next_event(&mut rx).await.event,
        RunEventKind::Ready { ready: true, .. }
    ));
    fs::write(launcher.checkpoint_dir(302).join("no-live"), "").unwrap();
    match next_event(&mut rx).await.event {
        RunEventKind::Ended { outcome, .. } => assert_eq!(
            outcome,
            Outcome::Unhealthy {
                message: format!(
                    "liveness probe failed 2 times in a row: GET \
                     http://127.0.0.1:{port}/live: status 503"
                )
            }
        ),
        other => panic!("expected the end, got {other:?}"),
    }
    assert!(wait_dead(pid), "the replica outlived its end");
    assert!(launcher.probe_failures().get(Kind::Liveness) >= 2);
    // Its readiness probe would now fail twice within 2 s: it is probed no more.
    match timeout(Duration::from_secs(4), rx.recv()).await {
        Err(_) | Ok(None) => {}
        Ok(Some(e)) => panic!("an event after the end: {e:?}"),
    }
}
