//! `gpusched workflow submit FILE.toml`: a DAG of jobs and arrays in one request, all or
//! none. One `[[step]]` table per step: its `key`, the keys of the steps it waits for
//! (`after`: they succeeded; `after_any`: they ended; `after_notok`: they ended without
//! succeeding), and the job's fields as a job file has them (`gpusched submit --file`);
//! `array = 8` or `array = "0-7%2"` makes the step an array.
//!
//! ```toml
//! [[step]]
//! key = "prep"
//! command = "python prep.py"
//! gpus = 0
//!
//! [[step]]
//! key = "train"
//! after = ["prep"]
//! command = "python train.py"
//! array = 4
//! ```

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args as ClapArgs, Parser, Subcommand};
use gpusched_wire::workflow::{WorkflowStep, WorkflowSubmit};
use gpusched_wire::{ArraySpec, JobFile, JobSubmit};

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Submit every step of a workflow file; prints each step's key and job id.
    Submit(SubmitArgs),
}

#[derive(ClapArgs, Debug)]
pub struct SubmitArgs {
    /// The workflow file (TOML, one `[[step]]` table per step).
    pub file: PathBuf,
    /// Print `{"ids": {KEY: ID}}` as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let Cmd::Submit(args) = args.cmd;
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read the workflow file {}", args.file.display()))?;
    let wf =
        parse(&text).map_err(|e| anyhow::anyhow!("workflow file {}: {e}", args.file.display()))?;
    let done = args.conn.client()?.submit_workflow(&wf).await?;
    if args.json {
        println!("{}", serde_json::to_string(&done)?);
        return Ok(());
    }
    // In the file's order, which is how its author reads it.
    for s in &wf.steps {
        if let Some(id) = done.ids.get(&s.key) {
            println!("{} -> {id}", s.key);
        }
    }
    Ok(())
}

/// The steps of a workflow file; errors name the step (by key, or by place when it has
/// none), the field and its line in the file, and keep TOML's own lines.
pub fn parse(text: &str) -> Result<WorkflowSubmit, String> {
    let doc: toml::Table =
        toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
    for k in doc.keys() {
        if k != "step" {
            return Err(format!(
                "unknown top-level `{k}`: a workflow file holds only `[[step]]` tables"
            ));
        }
    }
    let Some(steps) = doc.get("step") else {
        return Err("no `[[step]]` tables: a workflow needs at least one step".into());
    };
    if !steps.is_array() {
        return Err("`step` must be an array of tables: write each step as `[[step]]`".into());
    }
    // The same document again, each field of each step with where its value starts, so
    // an error names the file's line (not one of a step's table rebuilt as text).
    #[derive(serde::Deserialize)]
    struct Spans {
        step: Vec<std::collections::BTreeMap<String, toml::Spanned<toml::Value>>>,
    }
    let spans: Spans = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())?;
    let steps = spans
        .step
        .into_iter()
        .enumerate()
        .map(|(i, s)| step(i, s, text))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(WorkflowSubmit { steps })
}

/// The 1-based line of the file at byte `at`.
fn line_at(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

fn step(
    i: usize,
    fields: std::collections::BTreeMap<String, toml::Spanned<toml::Value>>,
    text: &str,
) -> Result<WorkflowStep, String> {
    let line_of = |v: &toml::Spanned<toml::Value>| line_at(text, v.span().start);
    let mut lines: std::collections::BTreeMap<String, usize> = fields
        .iter()
        .map(|(k, v)| (k.clone(), line_of(v)))
        .collect();
    let mut table: toml::Table = fields
        .into_iter()
        .map(|(k, v)| (k, v.into_inner()))
        .collect();
    let key = match table.remove("key") {
        Some(toml::Value::String(k)) => k,
        Some(_) => {
            return Err(format!(
                "step #{} (line {}): `key` must be a string",
                i + 1,
                lines["key"]
            ))
        }
        None => {
            return Err(format!(
                "step #{}: has no `key`; give each step a name",
                i + 1
            ))
        }
    };
    let step_line = lines.remove("key").unwrap_or(0);
    let at_field = |field: &str, e: String| {
        format!(
            "step `{key}`, line {}: {e}",
            lines.get(field).copied().unwrap_or(step_line)
        )
    };
    let mut keys = |field: &str| -> Result<Vec<String>, String> {
        match table.remove(field) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .into_iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s),
                    other => Err(at_field(
                        field,
                        format!("`{field}` lists step keys (strings), not {other}"),
                    )),
                })
                .collect(),
            Some(other) => Err(at_field(
                field,
                format!(
                    "`{field}` must be a list of step keys, e.g. {field} = [\"prep\"], not {other}"
                ),
            )),
        }
    };
    let after = keys("after")?;
    let after_any = keys("after_any")?;
    let after_notok = keys("after_notok")?;
    let array = match table.remove("array") {
        None => None,
        Some(toml::Value::Integer(n)) => Some(
            ArraySpec::parse(&n.to_string())
                .map_err(|e| at_field("array", format!("`array`: {e}")))?,
        ),
        Some(toml::Value::String(s)) => {
            Some(ArraySpec::parse(&s).map_err(|e| at_field("array", format!("`array`: {e}")))?)
        }
        Some(other) => {
            return Err(at_field(
                "array",
                format!("`array` must be a count (4) or a range (\"0-7%2\"), not {other}"),
            ))
        }
    };
    // Each field alone first, so an error names its line; then the job file whole.
    for (field, value) in &table {
        let one: toml::Table = [(field.clone(), value.clone())].into_iter().collect();
        one.try_into::<JobFile>()
            .map_err(|e| at_field(field, format!("`{field}`: {}", e.message().trim_end())))?;
    }
    let mut file: JobFile = table
        .try_into()
        .map_err(|e: toml::de::Error| at_field("", e.message().trim_end().to_string()))?;
    // A step is known by its key: its jobs are named after it unless it names itself
    // (rather than after its program, `sh` or `python` for every step).
    if file.name.is_none() {
        file.name = Some(key.clone());
    }
    let job = job_of(file).map_err(|e| at_field("", format!("{e:#}")))?;
    Ok(WorkflowStep {
        key,
        job: JobSubmit { array, ..job },
        after,
        after_any,
        after_notok,
    })
}

/// A step's job file as `submit --file` would read it, with no flags over it.
fn job_of(file: JobFile) -> anyhow::Result<JobSubmit> {
    #[derive(Parser)]
    struct NoFlags {
        #[command(flatten)]
        args: super::submit::Args,
    }
    let none = NoFlags::try_parse_from(["submit"])?;
    let mut jobs = super::submit::build_with(&none.args, file)?;
    if jobs.len() != 1 {
        bail!("expected one job");
    }
    let mut job = jobs.remove(0);
    // The workflow is one request: the server refuses per-step retry keys.
    job.client_token = None;
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_read_their_keys_edges_and_job_fields() {
        let wf = parse(
            r#"
[[step]]
key = "prep"
command = "sh -c 'echo hi'"
gpus = 0

[[step]]
key = "train"
after = ["prep"]
command = ["python", "train.py"]
walltime = "1h"
array = "0-3%2"

[[step]]
key = "clean"
after_any = ["train"]
after_notok = ["prep"]
command = "true"
"#,
        )
        .unwrap();
        assert_eq!(wf.steps.len(), 3);
        let train = &wf.steps[1];
        assert_eq!(train.after, ["prep"]);
        assert_eq!(train.job.walltime_s, Some(3600));
        assert_eq!(train.job.command, ["python", "train.py"]);
        assert!(train.job.array.is_some());
        assert!(train.job.client_token.is_none());
        assert_eq!(wf.steps[2].after_any, ["train"]);
        assert_eq!(wf.steps[2].after_notok, ["prep"]);
        assert_eq!(wf.steps[0].job.command, ["sh", "-c", "echo hi"]);
    }

    #[test]
    fn errors_name_the_step_and_the_field() {
        let e = parse("[[step]]\nkey = \"a\"\ncommand = \"true\"\ngpus = \"two\"\n").unwrap_err();
        assert!(e.starts_with("step `a`, line 4: `gpus`"), "{e}");
        let e = parse("[[step]]\ncommand = \"true\"\n").unwrap_err();
        assert!(e.contains("step #1") && e.contains("key"), "{e}");
        let e = parse("[[step]]\nkey = \"a\"\nafter = \"b\"\ncommand = \"true\"\n").unwrap_err();
        assert!(
            e.contains("step `a`") && e.contains("list of step keys"),
            "{e}"
        );
        let e = parse("[[step]]\nkey = \"a\"\n").unwrap_err();
        assert!(
            e.contains("step `a`, line 2") && e.contains("no command"),
            "{e}"
        );
        let e = parse("title = \"x\"\n").unwrap_err();
        assert!(e.contains("unknown top-level `title`"), "{e}");
    }

    #[test]
    fn errors_give_the_files_line_and_keep_tomls_lines() {
        let file = "[[step]]\nkey = \"prep\"\ncommand = \"true\"\n\n[[step]]\nkey = \"train\"\n\
                    command = \"true\"\nwalltime = \"5 parsecs\"\n";
        let e = parse(file).unwrap_err();
        assert!(e.starts_with("step `train`, line 8: `walltime`"), "{e}");
        let e = parse("[[step]]\nkey = \"a\"\ncommand = \"true\"\ntitel = \"x\"\n").unwrap_err();
        assert!(
            e.starts_with("step `a`, line 4: `titel`: unknown field"),
            "{e}"
        );
        // A syntax error: TOML's message with the file's line and its caret, over lines.
        let e = parse("[[step]]\nkey = \"a\"\ncommand = \"true\n").unwrap_err();
        assert!(e.contains("line 3") && e.lines().count() > 2, "{e}");
    }

    #[test]
    fn a_steps_jobs_are_named_after_its_key_unless_it_names_itself() {
        let wf = parse(
            "[[step]]\nkey = \"prep\"\ncommand = \"sh -c 'echo hi'\"\n\n\
             [[step]]\nkey = \"train\"\nname = \"resnet\"\ncommand = \"true\"\n",
        )
        .unwrap();
        assert_eq!(wf.steps[0].job.name.as_deref(), Some("prep"));
        assert_eq!(wf.steps[1].job.name.as_deref(), Some("resnet"));
    }
}
