//! `gpusched admin migrate-store` and `gpusched admin backup`: whole-store copies that
//! talk to the store directly (a SQLite file or a PostgreSQL database), not through the
//! server, so they need the store's URL and access to it, not an API token.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args as ClapArgs;
use gpusched_store::StoreUrl;

#[derive(ClapArgs, Debug)]
pub struct MigrateArgs {
    /// The store to copy from: sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DB.
    /// Stop the server on it first, or the copy misses what it writes afterwards.
    #[arg(long, value_name = "URL")]
    pub from: String,
    /// The store to copy into, which must be empty: a new SQLite file (sqlite:PATH) or a
    /// PostgreSQL database just created (createdb). Start the server on it afterwards
    /// with `--store URL`.
    #[arg(long, value_name = "URL")]
    pub to: String,
}

#[derive(ClapArgs, Debug)]
pub struct BackupArgs {
    /// The store to back up (a server may be running on it): sqlite:PATH or
    /// postgres://USER:PASSWORD@HOST:PORT/DB (default: the server's default,
    /// sqlite:DATA_DIR/gpusched.db).
    #[arg(
        long,
        env = "GPUSCHED_STORE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub store: Option<String>,
    /// The server's data directory, for the default store.
    #[arg(long, env = "GPUSCHED_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// The backup: a new SQLite file (never overwritten). Restore it with
    /// `gpusched admin migrate-store --from sqlite:FILE --to URL`.
    #[arg(long, value_name = "FILE")]
    pub to: PathBuf,
}

fn parse(flag: &str, url: &str) -> anyhow::Result<StoreUrl> {
    StoreUrl::parse(url).with_context(|| format!("--{flag}"))
}

pub async fn migrate(args: MigrateArgs) -> anyhow::Result<()> {
    let from = parse("from", &args.from)?;
    let to = parse("to", &args.to)?;
    if let StoreUrl::Sqlite(f) = &from {
        anyhow::ensure!(
            f.exists(),
            "--from {from}: no such file; give the database file of the store to copy \
             (by default DATA_DIR/gpusched.db)"
        );
    }
    let counts = gpusched_store::migrate_store(&from, &to)
        .await
        .with_context(|| format!("copying {from} to {to}"))?;
    println!("copied {from} to {to}: {counts}");
    Ok(())
}

pub async fn backup(args: BackupArgs) -> anyhow::Result<()> {
    let from = match &args.store {
        Some(u) => parse("store", u)?,
        None => {
            let dir = match &args.data_dir {
                Some(d) => d.clone(),
                None => super::server::default_data_dir()?,
            };
            StoreUrl::Sqlite(gpusched_store::default_file(&dir))
        }
    };
    if let StoreUrl::Sqlite(f) = &from {
        anyhow::ensure!(
            f.exists(),
            "{from}: no such file; give the server's store with --store URL (or its \
             --data-dir)"
        );
    }
    let counts = gpusched_store::backup(&from, &args.to)
        .await
        .with_context(|| format!("backing up {from} to {}", args.to.display()))?;
    println!(
        "backed up {from} to {} (a SQLite file): {counts}",
        args.to.display()
    );
    Ok(())
}
