//! `gpusched cancel ID...` (`scancel`).

use clap::Args as ClapArgs;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Job ids; an array's id cancels all of it, ID.N one task of it.
    #[arg(required = true, value_name = "ID", value_parser = crate::client::job_ref)]
    pub ids: Vec<gpusched_wire::JobRef>,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let client = args.conn.client()?;
    // One request for all ids: cancelled one by one, the GPUs freed by the first would
    // start a pending job of the same list before its own cancel arrived.
    let whole: Vec<u64> = args
        .ids
        .iter()
        .filter(|r| r.task.is_none())
        .map(|r| r.id)
        .collect();
    let mut failed = 0;
    for r in args.ids.iter().filter(|r| r.task.is_some()) {
        let index = r.task.unwrap_or(0);
        match client.cancel_task(r.id, index).await {
            Ok(c) if c.result == "already_ended" => println!("task {r}: already ended"),
            Ok(c) if c.result == "cancelling" => {
                println!(
                    "task {r}: cancelling (job {}; being stopped where it runs)",
                    c.id
                )
            }
            Ok(_) => println!("task {r}: cancelled"),
            Err(e) => {
                eprintln!("task {r}: {e:#}");
                failed += 1;
            }
        }
    }
    if whole.is_empty() {
        if failed > 0 {
            anyhow::bail!("{failed} of {} not cancelled", args.ids.len());
        }
        return Ok(());
    }
    let answer = client.cancel_many(&whole).await?;
    for r in &answer.results {
        match outcome_line(r) {
            Ok(line) => println!("{line}"),
            Err(line) => {
                eprintln!("{line}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        anyhow::bail!(
            "{} not cancelled (of {})",
            gpusched_wire::count_as(failed as u64, "job was", "jobs were"),
            args.ids.len()
        );
    }
    Ok(())
}

/// What one cancel did, in a line; `Err` for an id that was not cancelled.
fn outcome_line(r: &gpusched_wire::CancelOutcome) -> Result<String, String> {
    let id = r.id;
    match (r.result.as_str(), r.state) {
        // A gang runs on several nodes: say it without knowing how many.
        ("cancelling", _) => Ok(format!(
            "job {id}: cancelling (being stopped where it runs)"
        )),
        ("already_ended", Some(st)) => Ok(format!("job {id}: already ended ({})", st.name())),
        ("cancelled", _) => Ok(format!("job {id}: cancelled")),
        _ => {
            let why = r.error.as_deref().unwrap_or("not cancelled");
            // The server's reasons often name the job already ("job 2 belongs to ...").
            if why.starts_with(&format!("job {id} ")) {
                Err(why.to_string())
            } else {
                Err(format!("job {id}: {why}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cancel_being_carried_out_names_no_single_node() {
        let r: gpusched_wire::CancelOutcome =
            serde_json::from_value(serde_json::json!({"id": 4, "result": "cancelling"})).unwrap();
        let line = super::outcome_line(&r).unwrap();
        assert_eq!(line, "job 4: cancelling (being stopped where it runs)");
        assert!(!line.contains("its node"), "{line}");
    }

    #[test]
    fn a_refusal_that_names_the_job_is_not_prefixed_again() {
        let r: gpusched_wire::CancelOutcome = serde_json::from_value(serde_json::json!({
            "id": 2, "result": "refused",
            "error": "job 2 belongs to alice; only its owner or an admin may cancel it"
        }))
        .unwrap();
        assert_eq!(
            super::outcome_line(&r).unwrap_err(),
            "job 2 belongs to alice; only its owner or an admin may cancel it"
        );
        let r: gpusched_wire::CancelOutcome = serde_json::from_value(
            serde_json::json!({"id": 3, "result": "refused", "error": "no such job"}),
        )
        .unwrap();
        assert_eq!(super::outcome_line(&r).unwrap_err(), "job 3: no such job");
    }
}
