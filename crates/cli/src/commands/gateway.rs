//! `gpusched gateway --server URL`: the inference gateway in front of the services'
//! replicas (the work is in the gpusched-gateway crate; this parses flags).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args as ClapArgs;

#[derive(ClapArgs, Debug, Clone)]
pub struct Args {
    /// The server, e.g. http://head:6450, several comma-separated (the gateway follows
    /// the leader), or unix:DATA_DIR/gpusched.sock as root.
    #[arg(long, env = "GPUSCHED_SERVER")]
    pub server: String,
    /// Where clients reach the gateway (Open Inference Protocol, OpenAI API, /metrics).
    #[arg(long, env = "GPUSCHED_GATEWAY_LISTEN", default_value = "0.0.0.0:8000")]
    pub listen: SocketAddr,
    /// A token with the gateway role (`gpusched token create --role gateway USER`).
    /// Only from the environment: a flag would show it to every user in `ps`.
    #[arg(skip = std::env::var("GPUSCHED_TOKEN").ok())]
    pub token: Option<String>,
    /// A file holding the token (instead of GPUSCHED_TOKEN).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// PEM certificate (or CA) to trust for an https:// server, besides the system's.
    #[arg(long, env = "GPUSCHED_CA_CERT", value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// The gateway's name in its load reports (default HOSTNAME:PORT); each gateway of
    /// a cluster needs its own.
    #[arg(long)]
    pub id: Option<String>,
    /// Requests that may wait in the gateway per service (held for a replica and in
    /// batch queues); past it, 503 with Retry-After.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_queue: u32,
    /// How long a request waits for a ready replica (a service starting or scaled to
    /// zero), and the longest any request waits in the gateway, e.g. 60s or 2m.
    #[arg(long, default_value = "60s", value_parser = parse_secs)]
    pub hold_timeout: u64,
    /// Seconds a 503 tells the client to wait (Retry-After).
    #[arg(long, default_value_t = 1)]
    pub retry_after: u64,
}

fn parse_secs(s: &str) -> Result<u64, String> {
    match gpusched_wire::parse_duration(s)? {
        0 => Err("must be at least 1 s".into()),
        n => Ok(n),
    }
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let token = match (&args.token_file, args.token) {
        (Some(path), _) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the token file {}", path.display()))?
                .trim()
                .to_string(),
        ),
        (None, t) => t.filter(|t| !t.trim().is_empty()),
    };
    if token.is_none() && !args.server.trim().starts_with("unix:") {
        anyhow::bail!(
            "the gateway needs a token with the gateway role to reach {}: make one with \
             `gpusched token create --role gateway USER` and give it in GPUSCHED_TOKEN or \
             --token-file FILE (or run as root with --server unix:DATA_DIR/gpusched.sock)",
            args.server
        );
    }
    let ca_certs = match &args.ca_cert {
        Some(p) => gpusched_agent::ca::read_ca_certs(p)?,
        None => Vec::new(),
    };
    let id = args.id.unwrap_or_else(|| {
        format!(
            "{}:{}",
            crate::commands::agent::host_name(),
            args.listen.port()
        )
    });
    if id.is_empty() || id.chars().count() > 128 {
        anyhow::bail!("--id must be 1 to 128 characters (got {:?})", id);
    }
    let config = gpusched_gateway::Config {
        listen: args.listen,
        servers: args.server,
        token,
        ca_certs,
        id,
        limits: gpusched_gateway::Limits {
            max_queue: args.max_queue,
            hold_timeout: Duration::from_secs(args.hold_timeout),
            retry_after: args.retry_after,
        },
    };
    gpusched_gateway::run(config, super::shutdown_signal()).await?;
    Ok(())
}
