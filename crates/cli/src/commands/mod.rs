pub mod accounts;
pub mod admin;
pub mod after;
pub mod agent;
pub mod agent_contain_args;
pub mod agent_image_args;
pub mod alloc;
pub mod array_text;
pub mod audit;
pub mod cancel;
pub mod checkpoint;
pub mod conn;
pub mod drain;
pub mod fmt;
pub mod gateway;
pub mod history;
pub mod hold;
pub mod logs;
pub mod nodes;
pub mod power_sim;
pub mod queue;
pub mod queues;
pub mod reservation;
pub mod reservation_show;
pub mod reservation_time;
pub mod run;
pub mod run_term;
pub mod server;
pub mod service;
pub mod service_logs;
pub mod service_show;
pub mod share_sim;
pub mod show;
pub mod simulate;
mod simulate_hetero;
mod simulate_reservations;
pub mod store_admin;
pub mod submit;
pub mod token;
pub mod top;
pub mod topo;
pub mod up;
pub mod usage;
pub mod wait;
pub mod workflow;

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
