//! `gpusched service ...`: inference services (docs/services.md). A service file (TOML,
//! `gpusched_wire::servicefile`) is created or rolled out; a service is scaled, listed,
//! shown, its replicas' logs read, and deleted. Listing and showing are in
//! `service_show.rs`, logs in `service_logs.rs`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args as ClapArgs, Subcommand};
use gpusched_wire::servicefile::autoscale_with;
use gpusched_wire::{Replicas, ServiceSpec, ServiceView};

use super::conn::Conn;

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Start a service from a service file (TOML: name, replicas, protocol, [replica],
    /// [readiness], [liveness], [rollout], [autoscale], [[model]]).
    Create(FileArgs),
    /// Send a changed service file: a new version rolls out replica by replica when
    /// [replica], a probe, the protocol or the models changed; replicas, autoscale and
    /// rollout settings apply at once.
    Update(FileArgs),
    /// Set the replicas: N (a fixed count; autoscaling off) or MIN..MAX (autoscale
    /// between them, its other settings kept). No new version rolls out.
    Scale(ScaleArgs),
    /// List every service (another user's without its command).
    #[command(visible_alias = "list")]
    Ls(ListArgs),
    /// A service's spec, status and each replica (job, version, phase, node, URL).
    Show(NameArgs),
    /// The output of a service's running replicas, each line prefixed with its job id
    /// when there are several; -f follows them, new replicas included.
    Logs(super::service_logs::Args),
    /// Drain the service's replicas out of the gateways, stop them and remove the
    /// service.
    #[command(visible_alias = "rm")]
    Delete(NameArgs),
}

#[derive(ClapArgs, Debug)]
pub struct FileArgs {
    /// The service file (TOML; docs/services.md).
    pub file: PathBuf,
    /// Use this name instead of the file's `name`.
    #[arg(long)]
    pub name: Option<String>,
    /// Replicas instead of the file's: N, or MIN..MAX to autoscale.
    #[arg(long, value_parser = replicas_arg, value_name = "N|MIN..MAX")]
    pub replicas: Option<Replicas>,
    /// Print the service as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(ClapArgs, Debug)]
pub struct ScaleArgs {
    /// The service.
    pub name: String,
    /// N replicas, or MIN..MAX to autoscale.
    #[arg(value_parser = replicas_arg, value_name = "N|MIN..MAX")]
    pub replicas: Replicas,
    /// Print the service as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(ClapArgs, Debug)]
pub struct NameArgs {
    /// The service.
    pub name: String,
    /// JSON: the service as the API gives it.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(ClapArgs, Debug)]
pub struct ListArgs {
    /// JSON: `{"services": [...]}` as the API gives it.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: Conn,
}

fn replicas_arg(s: &str) -> Result<Replicas, String> {
    Replicas::parse(s)
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    match args.cmd {
        Cmd::Create(a) => create(a).await,
        Cmd::Update(a) => update(a).await,
        Cmd::Scale(a) => scale(a).await,
        Cmd::Ls(a) => super::service_show::list(a).await,
        Cmd::Show(a) => super::service_show::show(a).await,
        Cmd::Logs(a) => super::service_logs::run(a).await,
        Cmd::Delete(a) => delete(a).await,
    }
}

/// The spec of a service file with the flags over it, checked as the server will check
/// it (the replica's working directory left for the caller).
pub fn read_spec(
    path: &Path,
    name: Option<&str>,
    replicas: Option<Replicas>,
) -> anyhow::Result<ServiceSpec> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the service file {}", path.display()))?;
    let mut spec = gpusched_wire::parse_service_file(&text)
        .map_err(|e| anyhow::anyhow!("service file {}: {e}", path.display()))?;
    if let Some(n) = name {
        spec.name = n.to_string();
    }
    if let Some(r) = replicas {
        set_replicas(&mut spec, r);
    }
    if let Some(share) = spec.replica.gpu_share {
        super::submit::check_share("[replica] gpu_share", share)?;
    }
    if let Some(p) = spec.problem() {
        anyhow::bail!("{p}");
    }
    Ok(spec)
}

/// `N`: that many, no autoscaling; `MIN..MAX`: autoscale within them, keeping the
/// autoscaler's other settings when it had some.
fn set_replicas(spec: &mut ServiceSpec, r: Replicas) {
    match r {
        Replicas::Fixed(n) => {
            spec.replicas = Some(n);
            spec.autoscale = None;
        }
        Replicas::Range(min, max) => {
            let mut a = spec
                .autoscale
                .take()
                .unwrap_or_else(|| autoscale_with(min, max));
            (a.min, a.max) = (min, max);
            spec.autoscale = Some(a);
        }
    }
}

async fn create(a: FileArgs) -> anyhow::Result<()> {
    let mut spec = read_spec(&a.file, a.name.as_deref(), a.replicas)?;
    if spec.replica.cwd.is_none() {
        spec.replica.cwd = Some(super::submit::current_dir()?);
    }
    let v = a.conn.client()?.service_create(&spec).await?;
    if a.json {
        return print_json(&v);
    }
    println!(
        "Created service {} (version {}): {} wanted; `gpusched service show {}` follows them",
        v.spec.name,
        v.version,
        gpusched_wire::count(v.desired, "replica"),
        v.spec.name
    );
    Ok(())
}

async fn update(a: FileArgs) -> anyhow::Result<()> {
    let mut spec = read_spec(&a.file, a.name.as_deref(), a.replicas)?;
    let client = a.conn.client()?;
    let old = client.service(&spec.name).await?;
    // A file without `cwd` keeps the replicas' directory: where `update` happens to
    // run is no reason to roll out a new version.
    if spec.replica.cwd.is_none() {
        spec.replica.cwd = old.spec.replica.cwd.clone();
    }
    let v = client.service_update(&spec).await?;
    if a.json {
        return print_json(&v);
    }
    if v.version != old.version {
        println!(
            "Updated service {}: rolling out version {} (was {}); `gpusched service show {}` \
             follows it",
            v.spec.name, v.version, old.version, v.spec.name
        );
    } else {
        println!(
            "Updated service {}: still version {} (the replicas' template is unchanged, so \
             nothing rolls out); {} wanted",
            v.spec.name,
            v.version,
            gpusched_wire::count(v.desired, "replica")
        );
    }
    Ok(())
}

async fn scale(a: ScaleArgs) -> anyhow::Result<()> {
    let client = a.conn.client()?;
    let old = client.service(&a.name).await?;
    let mut spec = old.spec.clone();
    set_replicas(&mut spec, a.replicas);
    if let Some(p) = spec.problem() {
        anyhow::bail!("{p}");
    }
    let v = client.service_update(&spec).await?;
    if a.json {
        return print_json(&v);
    }
    let how = match &v.spec.autoscale {
        Some(s) => format!("autoscaling between {} and {}", s.min, s.max),
        None => gpusched_wire::count(v.spec.replicas.unwrap_or(1), "replica"),
    };
    println!(
        "Scaled service {}: {how}; {} wanted now (was {})",
        v.spec.name, v.desired, old.desired
    );
    Ok(())
}

async fn delete(a: NameArgs) -> anyhow::Result<()> {
    let v = a.conn.client()?.service_delete(&a.name).await?;
    if a.json {
        return print_json(&v);
    }
    let live = v.replicas_list.len() as u32;
    if live == 0 {
        println!("Deleted service {}", v.spec.name);
    } else {
        println!(
            "Deleting service {}: its {} leave the gateways, stop after {} s of drain, and \
             the service is gone once none is left",
            v.spec.name,
            gpusched_wire::count(live, "replica"),
            v.spec.rollout.drain_s
        );
    }
    Ok(())
}

fn print_json(v: &ServiceView) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("svc.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    const SVC: &str = "name = \"echo\"\nreplicas = 2\n[replica]\ncommand = \"x\"\n\
                       [autoscale]\nmin = 1\nmax = 3\ntarget_in_flight = 8\n";

    #[test]
    fn flags_override_the_files_name_and_replicas() {
        let (_d, p) = file(SVC);
        let s = read_spec(&p, Some("other"), None).unwrap();
        assert_eq!((s.name.as_str(), s.replicas), ("other", Some(2)));
        // A count turns autoscaling off; a range keeps the autoscaler's other settings.
        let s = read_spec(&p, None, Some(Replicas::Fixed(4))).unwrap();
        assert_eq!((s.replicas, s.autoscale.is_none()), (Some(4), true));
        let s = read_spec(&p, None, Some(Replicas::Range(0, 5))).unwrap();
        let a = s.autoscale.unwrap();
        assert_eq!((a.min, a.max, a.target_in_flight), (0, 5, 8.0));
        let e = read_spec(&p, Some("Bad Name"), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lowercase"), "{e}");
    }

    #[test]
    fn file_errors_name_the_file_and_the_share_is_the_cores() {
        let (_d, p) = file("name = \"m\"\n[replica]\ncommand = \"x\"\ngpu_share = 1.5\n");
        let e = read_spec(&p, None, None).unwrap_err().to_string();
        assert!(e.starts_with("[replica] gpu_share 1.5"), "{e}");
        let (_d, p) = file("name = \"m\"\n[replica]\ncommand = \"x\"\ngpuz = 1\n");
        let e = read_spec(&p, None, None).unwrap_err().to_string();
        assert!(
            e.starts_with("service file ") && e.contains("`gpuz`"),
            "{e}"
        );
        let e = read_spec(Path::new("/no/such.toml"), None, None).unwrap_err();
        assert!(
            format!("{e:#}").contains("cannot read the service file"),
            "{e:#}"
        );
    }

    #[test]
    fn the_cli_parses_every_subcommand() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(subcommand)]
            cmd: Cmd,
        }
        let ok = |argv: &[&str]| {
            Cli::try_parse_from(std::iter::once("service").chain(argv.iter().copied()))
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
        };
        assert!(matches!(
            ok(&["scale", "echo", "1..4"]).cmd,
            Cmd::Scale(ScaleArgs {
                replicas: Replicas::Range(1, 4),
                ..
            })
        ));
        assert!(matches!(
            ok(&["create", "f.toml", "--replicas", "3"]).cmd,
            Cmd::Create(FileArgs {
                replicas: Some(Replicas::Fixed(3)),
                ..
            })
        ));
        assert!(matches!(
            ok(&["ls", "--json"]).cmd,
            Cmd::Ls(ListArgs { json: true, .. })
        ));
        assert!(matches!(ok(&["rm", "echo"]).cmd, Cmd::Delete(_)));
        assert!(matches!(
            ok(&["logs", "echo", "--replica", "41", "-f"]).cmd,
            Cmd::Logs(_)
        ));
        let e = Cli::try_parse_from(["service", "scale", "echo", "lots"])
            .err()
            .unwrap();
        assert!(e.to_string().contains("MIN..MAX"), "{e}");
    }
}
