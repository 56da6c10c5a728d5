//! Registration: what the agent tells a server about the node and what runs there,
//! retried until a server answers, and the address it advertises to other nodes.

use std::time::{Duration, Instant};

use gpusched_wire::{Register, Registered, RunEvent};
use reqwest::StatusCode;

use super::client::{send, Backoff};
use super::lease::heard;
use super::outbox::{acknowledge, sync_journal};
use super::Shared;

/// Whether the server's refusal of a registration is final: a malformed registration
/// (an invalid node name, GPUs of several models) is refused the same way at every try,
/// so the agent stops with the server's reason instead of retrying forever. Refusals a
/// retry can outlive are not: a token an admin may still fix (401, 403), a timeout
/// (408), a server of another protocol during an upgrade (409), load shedding (429).
fn refusal_is_final(status: StatusCode) -> bool {
    status.is_client_error()
        && ![
            StatusCode::UNAUTHORIZED,
            StatusCode::FORBIDDEN,
            StatusCode::REQUEST_TIMEOUT,
            StatusCode::CONFLICT,
            StatusCode::TOO_MANY_REQUESTS,
        ]
        .contains(&status)
}

/// Registers, retrying until the server answers; an error for a refusal that no retry
/// can change ([`refusal_is_final`]).
pub(super) async fn register(sh: &Shared) -> anyhow::Result<Registered> {
    let mut backoff = Backoff::new();
    loop {
        let advertise_addr = advertised(sh).await;
        // Running first, then the outbox: an attempt that ends in between delivers its
        // end before it leaves `running`, so it shows in one or the other.
        let running = sh.launcher.running();
        let events: Vec<RunEvent> = sh.outbox.snapshot();
        sync_journal(sh).await;
        let body = Register {
            node: sh.cfg.name.clone(),
            agent_version: env!("CARGO_PKG_VERSION").to_string(),
            gpus: sh.cfg.control.refresh(&sh.cfg.gpus),
            cpus: sh.cfg.cpus,
            mem_mib: sh.cfg.mem_mib,
            mps: sh.cfg.mps,
            resources: sh.cfg.resources.clone(),
            features: sh.cfg.features.clone(),
            log_url: Some(sh.log_url.clone()),
            log_token: Some(sh.log_token.clone()),
            advertise_addr,
            location: sh.cfg.location.clone(),
            gpu_links: sh.gpu_links.clone(),
            containment: Some(sh.launcher.containment()),
            running,
            events: events.clone(),
        };
        // Bounded: a server that is stopped or cut off accepts the connection and never
        // answers; the next try goes to the next server.
        let sent = Instant::now();
        match send(sh, "/api/agent/register", |url| {
            sh.http
                .post(url)
                .timeout(Duration::from_secs(30))
                .json(&body)
        })
        .await
        {
            Ok(r) if r.status().is_success() => match r.json::<Registered>().await {
                Ok(reg) => {
                    // The server counts this node's lease from this request: so does
                    // the agent (a job it places now must not be fenced at once).
                    heard(sh, sent);
                    acknowledge(sh, &events);
                    tracing::info!(node = %sh.cfg.name, server = %sh.servers.current(), gpus = sh.cfg.gpus.len(), server_protocol = reg.protocol, "registered");
                    if reg.protocol < gpusched_wire::agent::AGENT_PROTOCOL {
                        tracing::warn!(
                            "the server speaks agent protocol {} (an older release), this agent {}: \
                             it works, but upgrade the servers",
                            reg.protocol,
                            gpusched_wire::agent::AGENT_PROTOCOL
                        );
                    }
                    return Ok(reg);
                }
                Err(e) => tracing::warn!("unreadable registration answer: {e}"),
            },
            Ok(r) => {
                let status = r.status();
                let text = r.text().await.unwrap_or_default();
                // With nothing running here (the agent's first registration) a final
                // refusal stops the agent; jobs already running are never abandoned.
                if refusal_is_final(status) && body.running.is_empty() {
                    // The API's errors are `{"error": "..."}`: the reason alone reads best.
                    let why = serde_json::from_str::<serde_json::Value>(&text)
                        .ok()
                        .and_then(|v| v["error"].as_str().map(str::to_string))
                        .unwrap_or(text);
                    anyhow::bail!(
                        "the server at {} refused to register node {:?} ({status}): {why}",
                        sh.servers.current(),
                        sh.cfg.name
                    );
                }
                tracing::error!("the server refused the registration ({status}): {text}");
                if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                    tracing::error!(
                        "check the join token (the server keeps it in DATA_DIR/join-token)"
                    );
                }
            }
            Err(e) => backoff.note(&sh.servers.shown(), &e, sh.cfg.ca_cert.as_deref()),
        }
        backoff.sleep().await;
    }
}

/// The advertised address: the flag's, else the local address of this host's route
/// to the server, looked up once (again at the next registration if it failed).
async fn advertised(sh: &Shared) -> Option<String> {
    if let Some(a) = sh
        .advertise
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
    {
        return Some(a);
    }
    match crate::route::local_addr_towards(&sh.servers.current()).await {
        Ok(ip) => {
            let addr = ip.to_string();
            tracing::info!(
                "advertising {addr} to other nodes (the address of the route to the server; \
                 --advertise-addr overrides it)"
            );
            sh.launcher.set_advertise_addr(&addr);
            *sh.advertise.lock().unwrap_or_else(|p| p.into_inner()) = Some(addr.clone());
            Some(addr)
        }
        Err(e) => {
            tracing::warn!(
                "cannot tell which address other nodes reach this one at ({e}); pass \
                 --advertise-addr ADDR for multi-node jobs"
            );
            None
        }
    }
}

#[cfg(test)]
mod refusal_tests {
    use super::*;

    #[test]
    fn a_malformed_registration_is_final_and_what_may_change_is_retried() {
        assert!(refusal_is_final(StatusCode::BAD_REQUEST));
        assert!(refusal_is_final(StatusCode::UNPROCESSABLE_ENTITY));
        for retried in [
            StatusCode::UNAUTHORIZED,
            StatusCode::FORBIDDEN,
            StatusCode::REQUEST_TIMEOUT,
            StatusCode::CONFLICT,
            StatusCode::TOO_MANY_REQUESTS,
            StatusCode::SERVICE_UNAVAILABLE,
            StatusCode::INTERNAL_SERVER_ERROR,
        ] {
            assert!(!refusal_is_final(retried), "{retried}");
        }
    }
}
