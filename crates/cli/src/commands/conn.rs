//! How every cluster command reaches the server.

use clap::Args as ClapArgs;

use crate::client::{Client, Target};

#[derive(ClapArgs, Debug, Clone)]
pub struct Conn {
    /// The server: `http://host:6450`, several of them comma-separated (the leader is
    /// found and followed), or `unix:/path/gpusched.sock`. Default: the local server's
    /// socket if there is one, else http://127.0.0.1:6450.
    #[arg(long, env = "GPUSCHED_SERVER", hide_env_values = true)]
    pub server: Option<String>,
    /// Bearer token for TCP (default: ~/.config/gpusched/token). Not needed on the
    /// Unix socket, where the server knows you by uid.
    #[arg(long, env = "GPUSCHED_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// PEM certificate (or CA) to trust for an https:// server, besides the system's.
    #[arg(long, env = "GPUSCHED_CA_CERT", value_name = "FILE")]
    pub ca_cert: Option<std::path::PathBuf>,
}

impl Conn {
    pub fn client(&self) -> anyhow::Result<Client> {
        Client::new(
            Target::resolve(self.server.clone(), self.token.clone()),
            self.ca_cert.as_deref(),
        )
    }
}
