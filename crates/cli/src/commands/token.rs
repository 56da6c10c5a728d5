//! `gpusched token create|list|revoke` (admins) and `gpusched whoami`.

use clap::{Args as ClapArgs, Subcommand};
use gpusched_wire::{Role, TokenCreate};

use super::fmt::{table, time};

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

/// `--role`: the roles a token can have.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoleArg {
    User,
    Admin,
    Metrics,
    Gateway,
}

impl From<RoleArg> for Role {
    fn from(r: RoleArg) -> Role {
        match r {
            RoleArg::User => Role::User,
            RoleArg::Admin => Role::Admin,
            RoleArg::Metrics => Role::Metrics,
            RoleArg::Gateway => Role::Gateway,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// Issue a token for USER (printed once; the server keeps only its hash).
    Create {
        user: String,
        /// What the token may do: user (submit and manage its own jobs), admin
        /// (everything), metrics (read GET /metrics and nothing else: for Prometheus),
        /// gateway (sync a `gpusched gateway` with the services and nothing else).
        #[arg(long, value_enum, default_value_t = RoleArg::User, conflicts_with = "admin")]
        role: RoleArg,
        /// Make it an admin token (the same as --role admin).
        #[arg(long)]
        admin: bool,
    },
    /// Every token issued, without secrets.
    List,
    /// Revoke a token by id; it stops working at once.
    Revoke { id: u64 },
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    match args.action {
        Action::Create { user, role, admin } => {
            let role = if admin { Role::Admin } else { role.into() };
            let t = client.token_create(&TokenCreate { user, role }).await?;
            eprintln!(
                "token {} for {} ({}); it is shown only now. Use it with \
                 GPUSCHED_TOKEN=... or put it in ~/.config/gpusched/token:",
                t.id,
                t.user,
                t.role.name()
            );
            println!("{}", t.token);
        }
        Action::List => {
            let list = client.token_list().await?;
            let rows: Vec<Vec<String>> = list
                .tokens
                .iter()
                .map(|t| {
                    vec![
                        t.id.to_string(),
                        t.user.clone(),
                        t.role.name().to_string(),
                        time(t.created_ms),
                        if t.revoked { "revoked" } else { "active" }.to_string(),
                    ]
                })
                .collect();
            print!(
                "{}",
                table(&["ID", "USER", "ROLE", "CREATED", "STATE"], &rows)
            );
        }
        Action::Revoke { id } => {
            let t = client.token_revoke(id).await?;
            println!("token {} of {} revoked", t.id, t.user);
        }
    }
    Ok(())
}

#[derive(ClapArgs, Debug)]
pub struct WhoamiArgs {
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn whoami(args: WhoamiArgs) -> anyhow::Result<()> {
    let w = args.conn.client()?.whoami().await?;
    println!("{} ({}, via {})", w.user, w.role.name(), w.via);
    Ok(())
}
