//! The TOML job file of `gpusched submit --file`: the API's fields, with a human
//! walltime, a command given as a list or as one shell-style line, and an array size.
//!
//! ```toml
//! name = "train"
//! command = "python train.py --lr 0.1"   # or ["python", "train.py", "--lr", "0.1"]
//! gpus = 2
//! walltime = "2h30m"                     # or 9000 (seconds, as on the command line)
//! ```
//!
//! A job on several nodes at once (a gang) names them and the GPUs on each:
//!
//! ```toml
//! command = "sh -c 'torchrun --nnodes $NNODES --node-rank $NODE_RANK ...'"
//! nodes = 2
//! gpus_per_node = 8
//! tasks_per_node = 8      # optional: the agent starts the ranks itself (env:// DDP)
//! ```
//!
//! A job in a container image (docs/containers.md):
//!
//! ```toml
//! command = "python train.py"
//! image = "registry.example.com/ml/torch:2.4"
//! pids = 4096             # optional: at most this many processes and threads
//! ```
//!
//! An elastic job (docs/elastic.md) runs on 2 to 8 GPUs of one node, as many as idle:
//!
//! ```toml
//! gpus = 2
//! gpus_max = 8
//! scaling_serial = 0.1    # optional: Amdahl's serial fraction (default 0.05)
//! ```
//!
//! A line is split the way a POSIX shell splits words (quotes, backslashes) and is then
//! run without a shell: no pipes, globs or variables.
//!
//! [`JobFile::to_submit`] is the one conversion to the API's [`JobSubmit`]: `submit`
//! runs it on the file with its flags laid over it, `workflow submit` on each step, and
//! the service file (`crate::servicefile`) on its `[replica]` table.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use crate::duration::parse_duration;
use crate::job::JobSubmit;

/// A parsed job file; flags given next to it override its fields.
#[derive(Deserialize, Default, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobFile {
    pub name: Option<String>,
    #[serde(default, deserialize_with = "command")]
    pub command: Option<Vec<String>>,
    pub gpus: Option<u32>,
    /// Makes the job elastic: `gpus` to `gpus_max` GPUs of one node (`--gpus MIN-MAX`).
    pub gpus_max: Option<u32>,
    /// An elastic job's Amdahl serial fraction (`scaling_serial` in the API).
    pub scaling_serial: Option<f64>,
    pub gpu_share: Option<f64>,
    pub gpu_mem: Option<String>,
    pub mig: Option<String>,
    pub gpu_model: Option<String>,
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Seconds.
    #[serde(default, deserialize_with = "walltime")]
    pub walltime: Option<u64>,
    pub priority: Option<i32>,
    pub queue: Option<String>,
    pub cpus: Option<f64>,
    pub mem: Option<String>,
    /// Generic counted resources on the job's node: `[resources]` then `fpga = 1`.
    #[serde(default)]
    pub resources: BTreeMap<String, u64>,
    pub max_retries: Option<u32>,
    /// An array: `array = 100` (tasks 0..99) or `array = "0-9999%8"` (as `--array`).
    #[serde(default, deserialize_with = "array")]
    pub array: Option<crate::array::ArraySpec>,
    #[serde(default)]
    pub after: Vec<u64>,
    /// Nodes of a gang (`--nodes`).
    pub nodes: Option<u32>,
    /// Whole GPUs on each node of a gang (`--gpus-per-node`).
    pub gpus_per_node: Option<u32>,
    /// Let the scheduler split `gpus` into equal parts over nodes (`--split`).
    #[serde(default)]
    pub split: bool,
    /// Processes the agent starts on each node (`--tasks-per-node`).
    pub tasks_per_node: Option<u32>,
    /// A gang's nodes may have different GPU models (`--mixed-models`).
    #[serde(default)]
    pub mixed_models: bool,
    /// The container image to run the command in (`--image`).
    pub image: Option<String>,
    /// The most processes and threads on each node (`--pids`).
    pub pids: Option<u64>,
    /// Partitions, in order of preference, comma-separated (`--partition gpu,debug`).
    pub partition: Option<String>,
    /// Node features the job's nodes must have (`--constraint "a100&nvlink"`).
    pub constraint: Option<String>,
    /// Only these nodes, comma-separated, with Slurm's ranges (`gpu[01-04]`; `--nodelist`).
    pub nodelist: Option<String>,
    /// Never these nodes, as `nodelist` (`--exclude`).
    pub exclude: Option<String>,
    /// The advance reservation to run in (`--reservation`).
    pub reservation: Option<String>,
    /// Speed-ups per GPU model against a V100 (`--speedup H100=2.8,A100=1.6`).
    pub speedup: Option<String>,
    /// When it must be finished (`--deadline`): as the CLI's `--deadline` takes it
    /// (`+6h`, `2026-12-08T06:00`, RFC 3339); the CLI turns it into a time.
    pub deadline: Option<String>,
    /// The account to charge (`--account`).
    pub account: Option<String>,
}

/// A comma-separated list (`gpu,debug`) as its items, trimmed, empty ones dropped.
pub fn comma_list(s: Option<&str>) -> Vec<String> {
    s.map(|s| {
        s.split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    })
    .unwrap_or_default()
}

/// How a message names a field of the file: the flag that set it (`--walltime (-t)`),
/// "`walltime` in the job file", "[replica] walltime"... so every error names what the
/// user wrote, wherever they wrote it.
pub type Named<'a> = &'a dyn Fn(&'static str) -> String;

impl JobFile {
    /// Parses a job file's text; errors give the line and what is expected.
    pub fn parse(text: &str) -> Result<JobFile, String> {
        toml::from_str(text).map_err(|e| e.to_string().trim_end().to_string())
    }

    /// How a plain job file names its fields in messages.
    pub fn in_job_file(field: &'static str) -> String {
        format!("`{field}` in the job file")
    }

    /// The submission this file asks for, checked as far as a client can (the server
    /// checks the rest and says what to change); errors name the field through `named`.
    /// What a file cannot say is left to the caller: `cwd` stays unset when the file
    /// gives none (the caller's directory is not this crate's to read), and no hold,
    /// client token or `after_any`/`after_notok` is set. The GPU share's range is the
    /// core's rule (its caller checks it); only what JSON cannot carry is refused here.
    pub fn to_submit(&self, named: Named) -> Result<JobSubmit, String> {
        let command = self.command.clone().unwrap_or_default();
        if command.is_empty() {
            return Err(format!("no command given: set {}", named("command")));
        }
        if self.walltime == Some(0) {
            return Err(format!(
                "{} is 0: a job needs a run-time limit above 0 (e.g. 15m); leave it out for \
                 no limit",
                named("walltime")
            ));
        }
        self.check_name(named)?;
        if let Some(image) = &self.image {
            crate::image::check_reference(image).map_err(|e| format!("{}: {e}", named("image")))?;
        }
        if self.pids == Some(0) {
            return Err(format!(
                "{} is 0: a job needs at least 1 process; leave it out for the node's default",
                named("pids")
            ));
        }
        // JSON has no NaN or infinity: such a number would be sent as nothing, and the job
        // would silently ask for a whole GPU, or for no CPUs.
        if let Some(share) = self.gpu_share.filter(|s| !s.is_finite()) {
            return Err(format!(
                "{} {share}: a share of a GPU is a number above 0 and at most 1 (e.g. 0.25)",
                named("gpu_share")
            ));
        }
        if let Some(cpus) = self.cpus.filter(|c| !(c.is_finite() && *c > 0.0)) {
            return Err(format!(
                "{} {cpus}: CPUs must be a number above 0 (e.g. 4 or 0.5)",
                named("cpus")
            ));
        }
        let mem_mib = match &self.mem {
            Some(m) => Some(crate::parse_mib(m).map_err(|e| format!("{} {e}", named("mem")))?),
            None => None,
        };
        self.check_gang(named)?;
        Ok(JobSubmit {
            name: self.name.clone(),
            command,
            // The server defaults to 1 whole GPU and refuses `gpus` next to a slice.
            gpus: self.gpus,
            gpu_share: self.gpu_share,
            gpu_mem: self.gpu_mem.clone(),
            mig: self.mig.clone(),
            gpu_model: self.gpu_model.clone(),
            cpus: self.cpus,
            mem_mib,
            resources: self.resources.clone(),
            cwd: self.cwd.clone(),
            env: self.env.clone(),
            walltime_s: self.walltime,
            priority: self.priority,
            queue: self.queue.clone(),
            max_retries: self.max_retries,
            // The server knows who calls (socket uid or token); the client does not say.
            user: None,
            after: self.after.clone(),
            after_any: Vec::new(),
            after_notok: Vec::new(),
            hold: false,
            array: self.array,
            client_token: None,
            // The server checks the combinations (a gang of whole GPUs, K dividing G) and
            // says what to change; the client only carries what was asked.
            nodes: self.nodes,
            gpus_per_node: self.gpus_per_node,
            split: self.split,
            tasks_per_node: self.tasks_per_node,
            mixed_models: self.mixed_models,
            image: self.image.clone(),
            pids_max: self.pids,
            partitions: comma_list(self.partition.as_deref()),
            constraint: self.constraint.clone(),
            // Brackets keep their commas: `gpu[01-04,07]` is one item, the server expands it.
            nodelist: self
                .nodelist
                .as_deref()
                .map(crate::hostlist::split)
                .unwrap_or_default(),
            exclude: self
                .exclude
                .as_deref()
                .map(crate::hostlist::split)
                .unwrap_or_default(),
            reservation: self.reservation.clone(),
            account: self.account.clone(),
            interactive: false,
            speedup: self.speedup.clone(),
            // The CLI reads `deadline` in the local time zone and sets this.
            deadline_ms: None,
            gpus_max: self.gpus_max,
            scaling_serial: self.scaling_serial,
        })
    }

    /// A job's name is what `queue` and `show` print: not empty (leave it out for the
    /// program's name), no control characters (the server refuses them too; here the
    /// field is named).
    fn check_name(&self, named: Named) -> Result<(), String> {
        let Some(name) = self.name.as_deref() else {
            return Ok(());
        };
        if name.is_empty() {
            return Err(format!(
                "{} is empty: give the job a name, or leave it out to name the job after its \
                 program",
                named("name")
            ));
        }
        if name.chars().any(crate::text::is_terminal_control) {
            return Err(format!(
                "{} {name:?} holds control characters (a newline, an escape, a bidirectional \
                 override): a name is printed on terminals; use letters, digits and punctuation",
                named("name")
            ));
        }
        Ok(())
    }

    /// `gpus` next to `nodes` x `gpus_per_node`: the API's `gpus` is their product, so a
    /// total that disagrees is a typo caught before anything is submitted. Left out, the
    /// server works it out.
    fn check_gang(&self, named: Named) -> Result<(), String> {
        if let (Some(total), Some(n), Some(g)) = (self.gpus, self.nodes, self.gpus_per_node) {
            let product = u64::from(n) * u64::from(g);
            if u64::from(total) != product {
                let gpus = named("gpus");
                return Err(format!(
                    "{gpus} {total} disagrees with {} {n} x {} {g} = {product}: give {gpus} \
                     {product}, or leave it out (it is the total over all nodes)",
                    named("nodes"),
                    named("gpus_per_node")
                ));
            }
        }
        Ok(())
    }
}

/// `walltime = 90` (seconds) or `walltime = "1h30m"`.
fn walltime<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("seconds (90) or a duration string (\"15m\", \"2h30m\", \"01:30:00\")")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::custom(format!("walltime {v} is below 0 seconds")))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            parse_duration(v).map_err(E::custom)
        }
    }
    d.deserialize_any(V).map(Some)
}

/// `array = 100` or `array = "0-9999%8"`.
fn array<'de, D: Deserializer<'de>>(d: D) -> Result<Option<crate::array::ArraySpec>, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = crate::array::ArraySpec;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number of tasks (100) or a range (\"0-9999\", \"0-99:2\", \"0-9999%8\")")
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            crate::array::ArraySpec::parse(v).map_err(|e| E::custom(e.to_string()))
        }
    }
    d.deserialize_any(V).map(Some)
}

/// `command = ["python", "train.py"]` or `command = "python train.py"`.
fn command<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of arguments ([\"python\", \"train.py\"]) or one command line (\"python train.py\")")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<String>, E> {
            shell_words::split(v).map_err(|e| {
                E::custom(format!(
                    "cannot split the command line {v:?} into arguments ({e}); close the quote or give a list"
                ))
            })
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(arg) = seq.next_element::<String>()? {
                out.push(arg);
            }
            Ok(out)
        }
    }
    d.deserialize_any(V).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walltime_is_seconds_or_a_duration_string() {
        assert_eq!(JobFile::parse("walltime = 90").unwrap().walltime, Some(90));
        assert_eq!(
            JobFile::parse("walltime = \"2h30m\"").unwrap().walltime,
            Some(9000)
        );
        let e = JobFile::parse("walltime = -5").unwrap_err();
        assert!(e.contains("below 0"), "{e}");
        let e = JobFile::parse("walltime = \"1h1h\"").unwrap_err();
        assert!(e.contains("twice"), "{e}");
        let e = JobFile::parse("walltime = 1.5").unwrap_err();
        assert!(e.contains("seconds (90)"), "{e}");
    }

    #[test]
    fn command_is_a_list_or_a_shell_style_line() {
        let f = JobFile::parse(r#"command = 'python train.py --name "my run" a\ b'"#).unwrap();
        assert_eq!(
            f.command.unwrap(),
            ["python", "train.py", "--name", "my run", "a b"]
        );
        let f = JobFile::parse("command = [\"sh\", \"-c\", \"echo hi\"]").unwrap();
        assert_eq!(f.command.unwrap(), ["sh", "-c", "echo hi"]);
        // No shell runs it: a pipe is just an argument.
        let f = JobFile::parse("command = \"echo a | wc\"").unwrap();
        assert_eq!(f.command.unwrap(), ["echo", "a", "|", "wc"]);
        let e = JobFile::parse("command = \"python 'oops\"").unwrap_err();
        assert!(e.contains("close the quote"), "{e}");
        assert_eq!(JobFile::parse("").unwrap(), JobFile::default());
    }

    #[test]
    fn gang_fields_are_read() {
        let f = JobFile::parse(
            "nodes = 2\ngpus_per_node = 4\ntasks_per_node = 2\nmixed_models = true\n",
        )
        .unwrap();
        assert_eq!(
            (
                f.nodes,
                f.gpus_per_node,
                f.tasks_per_node,
                f.split,
                f.mixed_models
            ),
            (Some(2), Some(4), Some(2), false, true)
        );
        let f = JobFile::parse("gpus = 16\nsplit = true").unwrap();
        assert_eq!((f.gpus, f.split, f.nodes), (Some(16), true, None));
        // Counts are whole and not negative; a flag is a boolean.
        let e = JobFile::parse("nodes = -2").unwrap_err();
        assert!(e.contains("nodes"), "{e}");
        let e = JobFile::parse("split = \"yes\"").unwrap_err();
        assert!(e.contains("split") && e.contains("bool"), "{e}");
        let e = JobFile::parse("gpus_per_nodes = 8").unwrap_err();
        assert!(e.contains("unknown field `gpus_per_nodes`"), "{e}");
    }

    #[test]
    fn image_and_pids_are_read() {
        let f = JobFile::parse("image = \"gpusched-test/busybox:1\"\npids = 64\n").unwrap();
        assert_eq!(f.image.as_deref(), Some("gpusched-test/busybox:1"));
        assert_eq!(f.pids, Some(64));
        let e = JobFile::parse("pids = -1").unwrap_err();
        assert!(e.contains("pids"), "{e}");
    }

    #[test]
    fn to_submit_carries_the_fields_and_names_the_bad_one() {
        let f = JobFile::parse(
            "command = \"python serve.py\"\ngpus = 1\nmem = \"16G\"\nwalltime = \"1h\"\n\
             env = { A = \"1\" }\n",
        )
        .unwrap();
        let j = f.to_submit(&JobFile::in_job_file).unwrap();
        assert_eq!(j.command, ["python", "serve.py"]);
        assert_eq!(
            (j.gpus, j.mem_mib, j.walltime_s),
            (Some(1), Some(16384), Some(3600))
        );
        assert_eq!(j.env["A"], "1");
        assert!(j.cwd.is_none() && j.client_token.is_none() && !j.hold);
        let bad = |text: &str| {
            JobFile::parse(text)
                .unwrap()
                .to_submit(&|f| format!("[replica] {f}"))
                .unwrap_err()
        };
        assert_eq!(bad("gpus = 1"), "no command given: set [replica] command");
        assert!(bad("command = \"x\"\nwalltime = 0").starts_with("[replica] walltime is 0"));
        assert!(bad("command = \"x\"\nmem = \"lots\"").starts_with("[replica] mem \"lots\""));
        assert!(bad("command = \"x\"\ncpus = nan").starts_with("[replica] cpus NaN"));
        assert!(bad("command = \"x\"\ngpu_share = inf").starts_with("[replica] gpu_share inf"));
        assert!(bad("command = \"x\"\nname = \"\"").contains("is empty"));
        let e = bad("command = \"x\"\nnodes = 2\ngpus_per_node = 4\ngpus = 6");
        assert!(
            e.contains("[replica] gpus 6 disagrees") && e.contains("= 8"),
            "{e}"
        );
    }

    #[test]
    fn unknown_fields_are_refused() {
        let e = JobFile::parse("gpu = 2").unwrap_err();
        assert!(e.contains("unknown field `gpu`"), "{e}");
    }
}
