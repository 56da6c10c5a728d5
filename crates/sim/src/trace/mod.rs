//! Trace readers: a file of jobs in, a [`Workload`] out.
//!
//! | format | detected by header columns | times |
//! |---|---|---|
//! | `muri` (Muri / Tiresias CSV) | `num_gpu`, `submit_time`, `iterations`, `iteration_time` | milliseconds |
//! | `philly` (Philly job table as pre-processed for Pollux) | `timestamp`, `duration`, `num_gpus`, `cluster` | dates, seconds |
//! | `gpusched` CSV | `submit`, `gpus`, `duration` | seconds |
//! | `gpusched` JSONL | first line starts with `{` | seconds |
//!
//! Every error names the file, the line and the field, and says what was expected.

pub mod muri;
pub mod native;
pub mod openb;
pub mod philly;
pub mod synthetic;

use std::collections::BTreeMap;
use std::path::Path;

use gpusched_core::JobSpec;

/// How much work a job is: `units` steps of `unit_time` seconds each. Traces that give a
/// duration use one-second units; Muri traces give iterations and iteration times.
#[derive(Clone, Debug, PartialEq)]
pub struct Work {
    pub units: f64,
    pub unit_time: f64,
}

impl Work {
    /// Run time on its own, with nothing slowing it down.
    pub fn duration(&self) -> f64 {
        self.units * self.unit_time
    }
}

/// One job of a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceJob {
    pub spec: JobSpec,
    pub work: Work,
    /// The DL model name, where the trace gives one (Muri).
    pub model: Option<String>,
    /// 1-based line of the trace file the job came from (0 for generated jobs).
    pub line: u64,
    /// What else is known of the job at submission (for `--estimates`).
    pub known: Known,
}

/// What a trace says of a job at submission beyond its spec: the run-time predictor's
/// features and where `spec.estimate` came from. Never anything derived from the run
/// time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Known {
    /// The job's name (Muri's model name stands in for it).
    pub name: Option<String>,
    /// A finer detail (Muri's batch size).
    pub detail: Option<String>,
    /// The user's walltime, where the trace has one.
    pub walltime: Option<f64>,
    /// `spec.estimate` is the trace's own estimate column, not the true run time.
    pub estimate_given: bool,
}

/// The jobs of a trace, ordered by submit time (ties keep file order), with the names
/// behind the interned user and queue numbers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workload {
    pub jobs: Vec<TraceJob>,
    pub users: Vec<String>,
    pub queues: Vec<String>,
    /// Where it came from, for reports.
    pub source: String,
    /// Seconds from the Monday 00:00 UTC before the trace's time 0 to time 0, where the
    /// trace has dates (Philly): the predictor's time of day and week.
    pub week_offset: Option<f64>,
}

/// A trace that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{file}: cannot read the trace: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}:{line}: field `{field}`: {problem}")]
    Field {
        file: String,
        line: u64,
        field: String,
        problem: String,
    },
    #[error("{file}:{line}: {problem}")]
    Line {
        file: String,
        line: u64,
        problem: String,
    },
    #[error("{file}: cannot tell the trace format from the header `{header}`; expected the columns of one of: muri (num_gpu,submit_time,iterations,iteration_time), philly (timestamp,duration,num_gpus,cluster), gpusched (submit,gpus,duration), or JSON lines; or pass --format")]
    UnknownFormat { file: String, header: String },
    #[error("unknown trace format `{0}`; use one of: muri, philly, gpusched")]
    UnknownFormatName(String),
    #[error("{file}: the trace has no jobs")]
    Empty { file: String },
}

/// The formats gpusched reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Format {
    Muri,
    Philly,
    GpuschedCsv,
    GpuschedJsonl,
}

impl Format {
    pub fn parse(name: &str) -> Result<Self, TraceError> {
        match name {
            "muri" | "tiresias" => Ok(Format::Muri),
            "philly" => Ok(Format::Philly),
            "gpusched" | "csv" => Ok(Format::GpuschedCsv),
            "jsonl" | "gpusched-jsonl" => Ok(Format::GpuschedJsonl),
            other => Err(TraceError::UnknownFormatName(other.to_string())),
        }
    }

    /// Picks the format from the first line of the file.
    pub fn detect(file: &str, first_line: &str) -> Result<Self, TraceError> {
        let line = first_line.trim_start_matches('\u{feff}').trim();
        if line.starts_with('{') {
            return Ok(Format::GpuschedJsonl);
        }
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        let has = |c: &str| cols.contains(&c);
        if has("num_gpu") && has("submit_time") && has("iterations") && has("iteration_time") {
            Ok(Format::Muri)
        } else if has("timestamp") && has("num_gpus") && has("duration") && has("cluster") {
            Ok(Format::Philly)
        } else if has("submit") && has("gpus") && has("duration") {
            Ok(Format::GpuschedCsv)
        } else {
            Err(TraceError::UnknownFormat {
                file: file.to_string(),
                header: line.chars().take(120).collect(),
            })
        }
    }
}

/// Reads a trace, from `format` or from its header.
pub fn read(path: &Path, format: Option<Format>) -> Result<Workload, TraceError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TraceError::Io {
        file: file.clone(),
        source,
    })?;
    parse(&file, &text, format)
}

/// Parses trace text; `file` names it in errors.
pub fn parse(file: &str, text: &str, format: Option<Format>) -> Result<Workload, TraceError> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if first.is_empty() {
        return Err(TraceError::Empty {
            file: file.to_string(),
        });
    }
    let format = match format {
        Some(f) => f,
        None => Format::detect(file, first)?,
    };
    let mut w = match format {
        Format::Muri => muri::parse(file, text)?,
        Format::Philly => philly::parse(file, text)?,
        Format::GpuschedCsv => native::parse_csv(file, text)?,
        Format::GpuschedJsonl => native::parse_jsonl(file, text)?,
    };
    if w.jobs.is_empty() {
        return Err(TraceError::Empty {
            file: file.to_string(),
        });
    }
    w.source = file.to_string();
    w.sort_by_submit();
    Ok(w)
}

impl Workload {
    /// Orders jobs by submit time; ties keep their file order.
    pub fn sort_by_submit(&mut self) {
        self.jobs
            .sort_by(|a, b| a.spec.submit.total_cmp(&b.spec.submit));
    }
}

/// Interns names into dense numbers in order of first appearance.
#[derive(Default)]
pub struct Names {
    index: BTreeMap<String, u32>,
    pub names: Vec<String>,
}

impl Names {
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.index.insert(name.to_string(), i);
        self.names.push(name.to_string());
        i
    }
}

/// CSV reading shared by the readers: one record at a time with its line number, and
/// field access that names the field in errors.
pub(crate) struct CsvRows<'a> {
    file: &'a str,
    headers: Vec<String>,
    reader: csv::Reader<&'a [u8]>,
}

pub(crate) struct Row<'r> {
    file: &'r str,
    pub line: u64,
    headers: &'r [String],
    record: csv::StringRecord,
}

impl<'a> CsvRows<'a> {
    pub fn new(file: &'a str, text: &'a str) -> Result<Self, TraceError> {
        let mut reader = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .flexible(true)
            .from_reader(text.as_bytes());
        let headers = reader
            .headers()
            .map_err(|e| TraceError::Line {
                file: file.to_string(),
                line: 1,
                problem: format!("cannot read the header: {e}"),
            })?
            .iter()
            .map(|h| h.trim_start_matches('\u{feff}').to_string())
            .collect();
        Ok(CsvRows {
            file,
            headers,
            reader,
        })
    }

    pub fn has(&self, column: &str) -> bool {
        self.headers.iter().any(|h| h == column)
    }

    /// Every data row; `f` turns one into whatever the reader builds.
    pub fn for_each(
        mut self,
        mut f: impl FnMut(&Row) -> Result<(), TraceError>,
    ) -> Result<(), TraceError> {
        let mut record = csv::StringRecord::new();
        loop {
            match self.reader.read_record(&mut record) {
                Ok(false) => return Ok(()),
                Ok(true) => {
                    let line = record.position().map_or(0, |p| p.line());
                    if record.iter().all(str::is_empty) {
                        continue;
                    }
                    if record.len() != self.headers.len() {
                        return Err(TraceError::Line {
                            file: self.file.to_string(),
                            line,
                            problem: format!(
                                "expected {} fields ({}), found {}",
                                self.headers.len(),
                                self.headers.join(","),
                                record.len()
                            ),
                        });
                    }
                    let row = Row {
                        file: self.file,
                        line,
                        headers: &self.headers,
                        record: record.clone(),
                    };
                    f(&row)?;
                }
                Err(e) => {
                    return Err(TraceError::Line {
                        file: self.file.to_string(),
                        line: e.position().map_or(0, |p| p.line()),
                        problem: format!("malformed CSV: {e}"),
                    })
                }
            }
        }
    }
}

impl Row<'_> {
    pub fn error(&self, field: &str, problem: impl Into<String>) -> TraceError {
        TraceError::Field {
            file: self.file.to_string(),
            line: self.line,
            field: field.to_string(),
            problem: problem.into(),
        }
    }

    /// The raw text of `field`, or `None` when the column is absent or the cell empty.
    pub fn opt(&self, field: &str) -> Option<&str> {
        let i = self.headers.iter().position(|h| h == field)?;
        self.record.get(i).filter(|s| !s.is_empty())
    }

    pub fn text(&self, field: &str) -> Result<&str, TraceError> {
        self.opt(field)
            .ok_or_else(|| self.error(field, "missing value"))
    }

    /// A finite number `>= 0`.
    pub fn non_negative(&self, field: &str) -> Result<f64, TraceError> {
        let raw = self.text(field)?;
        match raw.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
            Ok(_) => Err(self.error(
                field,
                format!("`{raw}` must be a finite number of at least 0"),
            )),
            Err(_) => Err(self.error(field, format!("`{raw}` is not a number"))),
        }
    }

    /// A whole number of GPUs, at least 1.
    pub fn gpus(&self, field: &str) -> Result<u32, TraceError> {
        let raw = self.text(field)?;
        match raw.parse::<u32>() {
            Ok(0) => Err(self.error(field, "a job needs at least 1 GPU; got 0")),
            Ok(v) => Ok(v),
            Err(_) => Err(self.error(
                field,
                format!("`{raw}` is not a whole number of GPUs (1, 2, 4, ...)"),
            )),
        }
    }
}
