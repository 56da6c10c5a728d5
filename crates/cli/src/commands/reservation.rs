//! `gpusched reservation ...` (`resv`): advance reservations, nodes held for a window of
//! time for some users or queues, or for nobody (maintenance); docs/reservations.md.
//! Creating, updating and deleting are here: the flags become a
//! [`ReservationSpec`], checked as far as the CLI can before it is sent. Listing and
//! showing are in `reservation_show.rs`, the times in `reservation_time.rs`.

use anyhow::bail;
use clap::{Args as ClapArgs, Subcommand};
use gpusched_wire::reservation::{check_name, ReservationSpec, ReservationView};

use super::conn::Conn;
use super::fmt::now_ms;
use super::reservation_time::{parse_start, Local, Zone};

/// How long a window may last (the server's bounds, `ReservationSpec::duration_s`).
const MIN_DURATION_S: u64 = 60;
const MAX_DURATION_S: u64 = 366 * 86_400;

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Hold nodes for a window of time (admins only): named nodes (--nodes) or a number
    /// of GPUs the server places (--gpus), for some users or queues, or for no job at
    /// all (--maintenance).
    Create(CreateArgs),
    /// Every reservation: its window, nodes, GPUs, who it is for, the jobs that asked.
    #[command(visible_alias = "list")]
    Ls(ListArgs),
    /// One reservation in full.
    Show(NameArgs),
    /// Change a reservation's terms (admins only): the flags given replace those
    /// terms, the others are kept.
    Update(UpdateArgs),
    /// Remove a reservation (admins only).
    #[command(visible_alias = "rm")]
    Delete(NameArgs),
}

/// A reservation's terms as flags: all optional here; `create` says which it needs.
#[derive(ClapArgs, Debug, Default, Clone)]
pub struct Terms {
    /// When the window opens: 2026-12-11T09:00 (LOCAL time; a space for the T works
    /// too, as does a date alone for its midnight), 2026-12-11T09:00:00Z or
    /// 2026-12-11T09:00+01:00 (RFC 3339, any zone), `now`, or +2h (from now).
    #[arg(long, value_name = "TIME")]
    pub start: Option<String>,
    /// How long it lasts: 4h, 90m, 1d 12h, 2:30:00 (at least 1m, at most 366d).
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<String>,
    /// Hold these nodes, comma-separated, with Slurm's ranges (gpu[01-04],login1).
    /// Either this or --gpus.
    #[arg(long, value_name = "NODE,...")]
    pub nodes: Option<Vec<String>>,
    /// Hold at least this many GPUs, on whole nodes the server picks (the fewest that
    /// hold them). Either this or --nodes.
    #[arg(long, value_name = "K")]
    pub gpus: Option<u32>,
    /// With --gpus: only nodes whose GPUs are of this model (a prefix: a100, "NVIDIA
    /// H100"). "" removes it (update).
    #[arg(long, value_name = "MODEL")]
    pub gpu_model: Option<String>,
    /// With --gpus: only nodes with these features (a constraint, as submit's
    /// --constraint: 'a100&ib'). "" removes it (update).
    #[arg(long, value_name = "EXPR")]
    pub feature: Option<String>,
    /// Users whose jobs may run in it, comma-separated. With neither --users nor
    /// --queues, only admins' jobs may. "" removes them (update).
    #[arg(long, value_delimiter = ',', value_name = "USER,...")]
    pub users: Option<Vec<String>>,
    /// Queues whose jobs may run in it, comma-separated (a job of a listed user or of a
    /// listed queue gets in). "" removes them (update).
    #[arg(long, value_delimiter = ',', value_name = "QUEUE,...")]
    pub queues: Option<Vec<String>>,
    /// A maintenance window: no job at all runs on its nodes in it, and they are
    /// drained as it opens. `--maintenance false` makes it an ordinary one (update).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub maintenance: Option<bool>,
}

#[derive(ClapArgs, Debug)]
pub struct CreateArgs {
    /// Its name: 1-64 letters, digits, `_`, `-` and `.`, starting with a letter or
    /// digit (jobs give it to `submit --reservation`).
    #[arg(long)]
    pub name: String,
    #[command(flatten)]
    pub terms: Terms,
    /// Print the reservation as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(ClapArgs, Debug)]
pub struct UpdateArgs {
    /// The reservation.
    pub name: String,
    #[command(flatten)]
    pub terms: Terms,
    /// Print the reservation as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(ClapArgs, Debug)]
pub struct NameArgs {
    /// The reservation.
    pub name: String,
    /// JSON: the reservation as the API gives it.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: Conn,
}

#[derive(ClapArgs, Debug)]
pub struct ListArgs {
    /// JSON: `{"reservations": [...]}` as the API gives it.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    match args.cmd {
        Cmd::Create(a) => create(a).await,
        Cmd::Ls(a) => super::reservation_show::list(a).await,
        Cmd::Show(a) => super::reservation_show::show(a).await,
        Cmd::Update(a) => update(a).await,
        Cmd::Delete(a) => delete(a).await,
    }
}

/// The spec `create` sends: its name and the terms, of which --start, --duration and
/// one of --nodes or --gpus are needed.
pub fn new_spec(
    name: &str,
    t: &Terms,
    now_ms: u64,
    zone: &dyn Zone,
) -> anyhow::Result<ReservationSpec> {
    check_name(name).map_err(|e| anyhow::anyhow!("--name: {e}"))?;
    if t.start.is_none() {
        bail!(
            "--start is needed: when the window opens ({})",
            super::reservation_time::START_FORMS
        );
    }
    if t.duration.is_none() {
        bail!("--duration is needed: how long the window lasts (4h, 90m, 1d)");
    }
    let empty = ReservationSpec {
        name: name.to_string(),
        start_ms: 0,
        duration_s: 0,
        nodes: Vec::new(),
        gpus: None,
        gpu_model: None,
        features: None,
        users: Vec::new(),
        queues: Vec::new(),
        maintenance: false,
    };
    lay_over(empty, t, now_ms, zone)
}

/// `spec` with the terms given laid over it (what `update` sends): a term given
/// replaces the old one; --nodes and --gpus replace each other (--nodes drops the old
/// --gpu-model and --feature); a list or text given as "" is removed. The result is
/// checked whole.
pub fn lay_over(
    mut spec: ReservationSpec,
    t: &Terms,
    now_ms: u64,
    zone: &dyn Zone,
) -> anyhow::Result<ReservationSpec> {
    if let Some(s) = &t.start {
        spec.start_ms = parse_start("--start", s, now_ms, zone)?;
    }
    if let Some(d) = &t.duration {
        spec.duration_s = duration(d)?;
    }
    match (&t.nodes, t.gpus) {
        (Some(_), Some(_)) => bail!(
            "--nodes and --gpus cannot both be given: a reservation holds either named \
             nodes (--nodes n1,n2) or a number of GPUs the server places (--gpus 16)"
        ),
        (Some(nodes), None) => {
            if t.gpu_model.is_some() || t.feature.is_some() {
                bail!(gpus_only(t));
            }
            spec.nodes = node_names(nodes)?;
            (spec.gpus, spec.gpu_model, spec.features) = (None, None, None);
        }
        (None, Some(0)) => bail!("--gpus 0 holds nothing; give at least 1 (--gpus 16)"),
        (None, Some(k)) => {
            spec.gpus = Some(k);
            spec.nodes.clear();
        }
        (None, None) => {}
    }
    if t.gpu_model.is_some() || t.feature.is_some() {
        if spec.gpus.is_none() {
            bail!(gpus_only(t));
        }
        if let Some(m) = &t.gpu_model {
            spec.gpu_model = Some(m.trim().to_string()).filter(|m| !m.is_empty());
        }
        if let Some(f) = &t.feature {
            spec.features = Some(f.trim().to_string()).filter(|f| !f.is_empty());
        }
    }
    if let Some(users) = &t.users {
        spec.users = names(users);
    }
    if let Some(queues) = &t.queues {
        spec.queues = names(queues);
    }
    if let Some(m) = t.maintenance {
        spec.maintenance = m;
    }
    if spec.nodes.is_empty() && spec.gpus.is_none() {
        bail!(
            "say what it holds: --nodes n1,n2 (these nodes) or --gpus 16 (that many GPUs, \
             on nodes the server picks)"
        );
    }
    if spec.maintenance && !(spec.users.is_empty() && spec.queues.is_empty()) {
        bail!(
            "a maintenance reservation runs no job at all, so it is for no users or \
             queues: drop --users/--queues (or, to make one a maintenance window, add \
             --users '' --queues '')"
        );
    }
    Ok(spec)
}

/// Which of --gpu-model / --feature was given without --gpus, and what to write.
fn gpus_only(t: &Terms) -> String {
    let flag = if t.gpu_model.is_some() {
        "--gpu-model"
    } else {
        "--feature"
    };
    format!(
        "{flag} only narrows which nodes --gpus picks; give --gpus K with it (named \
         --nodes are held whatever their GPUs and features)"
    )
}

/// `--duration` in seconds, within the server's bounds.
fn duration(s: &str) -> anyhow::Result<u64> {
    let secs = gpusched_wire::parse_duration(s)
        .map_err(|e| anyhow::anyhow!("--duration {s:?}: {e}; write e.g. 4h, 90m or 1d"))?;
    if secs < MIN_DURATION_S {
        bail!("--duration {s:?} is under a minute; a reservation lasts at least 1m (4h, 90m)");
    }
    if secs > MAX_DURATION_S {
        bail!("--duration {s:?} is over 366 days, the longest a reservation may last");
    }
    Ok(secs)
}

/// `--nodes`: names without blanks, each once.
fn node_names(given: &[String]) -> anyhow::Result<Vec<String>> {
    let nodes = names(given);
    if nodes.is_empty() {
        bail!("--nodes names no node; give them comma-separated (--nodes n1,n2)");
    }
    for (i, n) in nodes.iter().enumerate() {
        if nodes[..i].contains(n) {
            bail!("--nodes names {n} twice; give each node once");
        }
    }
    Ok(nodes)
}

/// A comma-separated list's names, trimmed, blanks dropped (so "" is the empty list); a
/// range in brackets (`gpu[01-04,07]`) stays one item, for the server to expand.
fn names(given: &[String]) -> Vec<String> {
    given
        .iter()
        .flat_map(|s| gpusched_wire::hostlist::split(s))
        .collect()
}

async fn create(a: CreateArgs) -> anyhow::Result<()> {
    let spec = new_spec(&a.name, &a.terms, now_ms(), &Local)?;
    let v = a.conn.client()?.reservation_create(&spec).await?;
    if a.json {
        return print_json(&v);
    }
    println!(
        "Created {}",
        super::reservation_show::summary(&v, now_ms(), &Local)
    );
    Ok(())
}

async fn update(a: UpdateArgs) -> anyhow::Result<()> {
    let t = &a.terms;
    let nothing = t.start.is_none()
        && t.duration.is_none()
        && t.nodes.is_none()
        && t.gpus.is_none()
        && t.gpu_model.is_none()
        && t.feature.is_none()
        && t.users.is_none()
        && t.queues.is_none()
        && t.maintenance.is_none();
    if nothing {
        bail!(
            "nothing to change: give the terms to replace (--start, --duration, --nodes, \
             --gpus, --gpu-model, --feature, --users, --queues, --maintenance)"
        );
    }
    let client = a.conn.client()?;
    let old = client.reservation(&a.name).await?;
    let spec = lay_over(old.spec, t, now_ms(), &Local)?;
    let v = client.reservation_update(&spec).await?;
    if a.json {
        return print_json(&v);
    }
    println!(
        "Updated {}",
        super::reservation_show::summary(&v, now_ms(), &Local)
    );
    Ok(())
}

async fn delete(a: NameArgs) -> anyhow::Result<()> {
    let v = a.conn.client()?.reservation_delete(&a.name).await?;
    if a.json {
        return print_json(&v);
    }
    if v.jobs.is_empty() {
        println!("Deleted reservation {}", v.spec.name);
    } else {
        let ids: Vec<String> = v.jobs.iter().map(u64::to_string).collect();
        println!(
            "Deleted reservation {}; {} asked for it ({}): `gpusched show ID` says what \
             became of each",
            v.spec.name,
            gpusched_wire::count(v.jobs.len() as u64, "job"),
            ids.join(", ")
        );
    }
    Ok(())
}

fn print_json(v: &ReservationView) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::reservation_time::Fixed;
    use super::*;

    /// 2026-12-08 12:00:00 UTC.
    const NOW: u64 = 1_796_731_200_000;
    const H: u64 = 3_600_000;

    fn terms() -> Terms {
        Terms {
            start: Some("2026-12-11T09:00".into()),
            duration: Some("4h".into()),
            gpus: Some(16),
            ..Terms::default()
        }
    }

    fn spec(t: &Terms) -> anyhow::Result<ReservationSpec> {
        new_spec("workshop", t, NOW, &Fixed(0))
    }

    fn refused(t: &Terms) -> String {
        spec(t).unwrap_err().to_string()
    }

    fn list(s: &str) -> Option<Vec<String>> {
        Some(s.split(',').map(String::from).collect())
    }

    #[test]
    fn create_builds_the_spec_from_the_flags() {
        let s = spec(&Terms {
            gpu_model: Some("a100".into()),
            feature: Some("ib".into()),
            users: list("alice,bob"),
            queues: list("ml"),
            ..terms()
        })
        .unwrap();
        assert_eq!(
            s,
            ReservationSpec {
                name: "workshop".into(),
                start_ms: NOW + 69 * H,
                duration_s: 4 * 3600,
                nodes: vec![],
                gpus: Some(16),
                gpu_model: Some("a100".into()),
                features: Some("ib".into()),
                users: vec!["alice".into(), "bob".into()],
                queues: vec!["ml".into()],
                maintenance: false,
            }
        );
        let s = spec(&Terms {
            nodes: list("n1, n2"),
            gpus: None,
            maintenance: Some(true),
            duration: Some("90m".into()),
            ..terms()
        })
        .unwrap();
        assert_eq!(
            (s.nodes, s.gpus, s.maintenance, s.duration_s),
            (vec!["n1".into(), "n2".into()], None, true, 5400)
        );
    }

    #[test]
    fn create_flag_checks_name_the_flag_and_what_to_write() {
        let e = new_spec("-x", &terms(), NOW, &Fixed(0))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--name: reservation name \"-x\" must be"),
            "{e}"
        );
        let e = refused(&Terms {
            start: None,
            ..terms()
        });
        assert!(
            e.starts_with("--start is needed") && e.contains("+2h"),
            "{e}"
        );
        let e = refused(&Terms {
            duration: None,
            ..terms()
        });
        assert!(e.starts_with("--duration is needed"), "{e}");
        assert!(refused(&Terms {
            nodes: list("n1"),
            ..terms()
        })
        .starts_with("--nodes and --gpus cannot both be given"));
        assert!(refused(&Terms {
            gpus: None,
            ..terms()
        })
        .starts_with("say what it holds: --nodes"));
        let e = refused(&Terms {
            gpus: None,
            nodes: list("n1"),
            gpu_model: Some("a100".into()),
            ..terms()
        });
        assert!(
            e.starts_with("--gpu-model only narrows which nodes --gpus picks"),
            "{e}"
        );
        let e = refused(&Terms {
            gpus: None,
            nodes: list("n1"),
            feature: Some("ib".into()),
            ..terms()
        });
        assert!(e.starts_with("--feature only narrows"), "{e}");
        assert!(refused(&Terms {
            gpus: Some(0),
            ..terms()
        })
        .starts_with("--gpus 0 holds nothing"));
        let e = refused(&Terms {
            gpus: None,
            nodes: list("n1,n2,n1"),
            ..terms()
        });
        assert_eq!(e, "--nodes names n1 twice; give each node once");
        assert!(refused(&Terms {
            gpus: None,
            nodes: list(" , "),
            ..terms()
        })
        .starts_with("--nodes names no node"));
        let e = refused(&Terms {
            duration: Some("30s".into()),
            ..terms()
        });
        assert!(e.contains("at least 1m"), "{e}");
        assert!(refused(&Terms {
            duration: Some("400d".into()),
            ..terms()
        })
        .contains("366 days"));
        assert!(refused(&Terms {
            duration: Some("4 hours!".into()),
            ..terms()
        })
        .starts_with("--duration \"4 hours!\": "));
        let e = refused(&Terms {
            start: Some("2026-12-01T09:00".into()),
            ..terms()
        });
        assert!(e.contains("cannot start in the past"), "{e}");
        let e = refused(&Terms {
            maintenance: Some(true),
            users: list("alice"),
            ..terms()
        });
        assert!(
            e.starts_with("a maintenance reservation runs no job at all"),
            "{e}"
        );
    }

    fn workshop() -> ReservationSpec {
        spec(&Terms {
            gpu_model: Some("a100".into()),
            users: list("alice"),
            ..terms()
        })
        .unwrap()
    }

    fn over(t: Terms) -> anyhow::Result<ReservationSpec> {
        lay_over(workshop(), &t, NOW, &Fixed(0))
    }

    #[test]
    fn update_lays_the_flags_given_over_the_current_spec() {
        // Only what is given changes.
        let s = over(Terms {
            start: Some("+1h".into()),
            ..Terms::default()
        })
        .unwrap();
        assert_eq!(
            s,
            ReservationSpec {
                start_ms: NOW + H,
                ..workshop()
            }
        );
        let s = over(Terms {
            duration: Some("5h".into()),
            queues: list("ml,cv"),
            ..Terms::default()
        })
        .unwrap();
        assert_eq!(
            s,
            ReservationSpec {
                duration_s: 5 * 3600,
                queues: vec!["ml".into(), "cv".into()],
                ..workshop()
            }
        );
        // A model alone narrows the GPUs it holds; "" removes it.
        let s = over(Terms {
            gpu_model: Some("h100".into()),
            ..Terms::default()
        })
        .unwrap();
        assert_eq!((s.gpus, s.gpu_model.as_deref()), (Some(16), Some("h100")));
        let s = over(Terms {
            gpu_model: Some(String::new()),
            ..Terms::default()
        })
        .unwrap();
        assert_eq!(s.gpu_model, None);
        // Named nodes replace the GPUs with their model; GPUs replace named nodes.
        let s = over(Terms {
            nodes: list("n1,n2"),
            ..Terms::default()
        })
        .unwrap();
        assert_eq!(
            (s.nodes.len(), s.gpus, s.gpu_model.as_deref()),
            (2, None, None)
        );
        let back = lay_over(
            s,
            &Terms {
                gpus: Some(8),
                ..Terms::default()
            },
            NOW,
            &Fixed(0),
        )
        .unwrap();
        assert_eq!((back.nodes.len(), back.gpus), (0, Some(8)));
        // Made a maintenance window: its users must go in the same update.
        let e = over(Terms {
            maintenance: Some(true),
            ..Terms::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("--users '' --queues ''"), "{e}");
        let s = over(Terms {
            maintenance: Some(true),
            users: Some(vec![String::new()]),
            ..Terms::default()
        })
        .unwrap();
        assert!(s.maintenance && s.users.is_empty());
        let s = lay_over(
            s,
            &Terms {
                maintenance: Some(false),
                ..Terms::default()
            },
            NOW,
            &Fixed(0),
        )
        .unwrap();
        assert!(!s.maintenance);
    }

    #[test]
    fn update_checks_the_result_whole() {
        // A model on a reservation of named nodes is refused, as at create.
        let nodes = over(Terms {
            nodes: list("n1"),
            ..Terms::default()
        })
        .unwrap();
        let e = lay_over(
            nodes,
            &Terms {
                feature: Some("ib".into()),
                ..Terms::default()
            },
            NOW,
            &Fixed(0),
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("--feature only narrows"), "{e}");
        // A start already passed is kept (the window may be open); a new one is checked.
        let mut open = workshop();
        open.start_ms = NOW - 2 * H;
        let s = lay_over(
            open.clone(),
            &Terms {
                duration: Some("6h".into()),
                ..Terms::default()
            },
            NOW,
            &Fixed(0),
        )
        .unwrap();
        assert_eq!(s.start_ms, NOW - 2 * H);
        assert!(lay_over(
            open,
            &Terms {
                start: Some("2026-12-08T09:00".into()),
                ..Terms::default()
            },
            NOW,
            &Fixed(0)
        )
        .is_err());
    }

    #[test]
    fn the_cli_parses_every_subcommand_and_its_flag_forms() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(subcommand)]
            cmd: Cmd,
        }
        let ok = |argv: &[&str]| {
            Cli::try_parse_from(std::iter::once("reservation").chain(argv.iter().copied()))
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
                .cmd
        };
        let Cmd::Create(c) = ok(&[
            "create",
            "--name",
            "w",
            "--start",
            "+2h",
            "--duration",
            "4h",
            "--gpus",
            "16",
            "--gpu-model",
            "a100",
            "--feature",
            "ib&nvlink",
            "--users",
            "alice,bob",
            "--queues",
            "ml",
            "--json",
        ]) else {
            panic!("not create")
        };
        assert_eq!(c.terms.users, list("alice,bob"));
        assert_eq!(
            (c.terms.gpus, c.terms.maintenance, c.json),
            (Some(16), None, true)
        );
        let Cmd::Create(c) = ok(&[
            "create",
            "--name",
            "m",
            "--start",
            "now",
            "--duration",
            "2h",
            "--nodes",
            "n1,n2",
            "--maintenance",
        ]) else {
            panic!("not create")
        };
        // One item as given (brackets keep their commas); `names` splits it.
        assert_eq!(
            (c.terms.nodes, c.terms.maintenance),
            (Some(vec!["n1,n2".to_string()]), Some(true))
        );
        assert_eq!(
            names(&["gpu[01-02,05],n1".to_string()]),
            ["gpu[01-02,05]", "n1"]
        );
        let Cmd::Update(u) = ok(&["update", "w", "--maintenance", "false", "--users", ""]) else {
            panic!("not update")
        };
        assert_eq!(u.name, "w");
        assert_eq!(u.terms.maintenance, Some(false));
        assert_eq!(
            names(u.terms.users.as_deref().unwrap()),
            Vec::<String>::new()
        );
        assert!(matches!(
            ok(&["ls", "--json"]),
            Cmd::Ls(ListArgs { json: true, .. })
        ));
        assert!(matches!(ok(&["list"]), Cmd::Ls(_)));
        assert!(matches!(ok(&["show", "w"]), Cmd::Show(NameArgs { .. })));
        assert!(matches!(ok(&["rm", "w"]), Cmd::Delete(_)));
        assert!(Cli::try_parse_from(["reservation", "create", "--start", "now"]).is_err());
    }
}
