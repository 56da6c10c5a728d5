//! Job arrays: one submission of many tasks of the same shape, told apart by an index
//! (`GPUSCHED_ARRAY_INDEX`). The API keeps an array as one job with a range; its tasks
//! become jobs of their own only as they are started (see ARCHITECTURE.md).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The most tasks one array may have.
pub const MAX_ARRAY_TASKS: u64 = 1_000_000;

/// The indices of an array's tasks: `first`, `first + step`, ... up to `last`
/// (inclusive), at most `max_running` of them running at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ArraySpec {
    #[schema(maximum = 4294967295_u64)]
    pub first: u32,
    #[schema(maximum = 4294967295_u64)]
    pub last: u32,
    /// Default 1.
    #[serde(default = "one")]
    #[schema(minimum = 1, maximum = 4294967295_u64)]
    pub step: u32,
    /// Slurm's `%K`: at most this many tasks hold resources at once (default: no limit).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 4294967295_u64)]
    pub max_running: Option<u32>,
}

fn one() -> u32 {
    1
}

/// Why an array specification was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArrayError {
    #[error(
        "array {0:?} is not understood; write N (tasks 0..N-1), A-B, A-B:STEP, \
         each optionally followed by %K (at most K at once), e.g. 0-9999%8"
    )]
    Syntax(String),
    #[error("array {0:?}: the first index {1} is above the last {2}; write the smaller first")]
    Inverted(String, u32, u32),
    #[error("array {0:?} is empty; give at least one task")]
    Empty(String),
    #[error("array {0:?}: step must be at least 1")]
    ZeroStep(String),
    #[error("array {0:?}: %K must be at least 1 (K tasks at once)")]
    ZeroLimit(String),
    #[error("array {0:?} has {1} tasks; at most {MAX_ARRAY_TASKS} are allowed in one array")]
    TooMany(String, u64),
}

impl ArraySpec {
    /// Reads `N`, `A-B`, `A-B:S`, each with an optional `%K`.
    pub fn parse(text: &str) -> Result<ArraySpec, ArrayError> {
        let bad = || ArrayError::Syntax(text.to_string());
        let t = text.trim();
        let (range, limit) = match t.split_once('%') {
            Some((r, k)) => (r, Some(k.parse::<u32>().map_err(|_| bad())?)),
            None => (t, None),
        };
        let num = |s: &str| -> Result<u32, ArrayError> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            s.parse::<u32>().map_err(|_| bad())
        };
        let spec = match range.split_once('-') {
            None => {
                let n = num(range)?;
                if n == 0 {
                    return Err(ArrayError::Empty(text.to_string()));
                }
                ArraySpec {
                    first: 0,
                    last: n - 1,
                    step: 1,
                    max_running: limit,
                }
            }
            Some((a, rest)) => {
                let (b, step) = match rest.split_once(':') {
                    Some((b, s)) => (b, num(s)?),
                    None => (rest, 1),
                };
                ArraySpec {
                    first: num(a)?,
                    last: num(b)?,
                    step,
                    max_running: limit,
                }
            }
        };
        spec.check(text)?;
        Ok(spec)
    }

    /// The checks every array passes, however it arrived (`what` names it in errors).
    pub fn check(&self, what: &str) -> Result<(), ArrayError> {
        let w = || what.to_string();
        if self.step == 0 {
            return Err(ArrayError::ZeroStep(w()));
        }
        if self.max_running == Some(0) {
            return Err(ArrayError::ZeroLimit(w()));
        }
        if self.first > self.last {
            return Err(ArrayError::Inverted(w(), self.first, self.last));
        }
        let n = self.len();
        if n > MAX_ARRAY_TASKS {
            return Err(ArrayError::TooMany(w(), n));
        }
        Ok(())
    }

    /// How many tasks (for a checked spec).
    pub fn len(&self) -> u64 {
        if self.first > self.last || self.step == 0 {
            return 0;
        }
        u64::from(self.last - self.first) / u64::from(self.step) + 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index of the `n`th task (0-based), if there is one.
    pub fn index(&self, n: u64) -> Option<u32> {
        (n < self.len()).then(|| self.first + (n * u64::from(self.step)) as u32)
    }

    /// Whether `index` is one of the array's tasks.
    pub fn contains(&self, index: u32) -> bool {
        index >= self.first
            && index <= self.last
            && (index - self.first).is_multiple_of(self.step.max(1))
    }

    /// Back in the syntax `parse` reads (`0-9999%8`).
    pub fn text(&self) -> String {
        let mut s = format!("{}-{}", self.first, self.last);
        if self.step != 1 {
            s.push_str(&format!(":{}", self.step));
        }
        if let Some(k) = self.max_running {
            s.push_str(&format!("%{k}"));
        }
        s
    }
}

/// Which task of which array a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ArrayTask {
    pub array_id: u64,
    pub index: u32,
}

/// How many of an array's tasks are in each state (tasks not started yet are pending).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ArrayCounts {
    pub pending: u64,
    pub starting: u64,
    pub running: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub cancelled: u64,
    pub timed_out: u64,
}

/// A job reference as users write it: `12` (a job or a whole array) or `12.7` (task 7
/// of array 12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobRef {
    pub id: u64,
    pub task: Option<u32>,
}

impl JobRef {
    pub fn parse(text: &str) -> Result<JobRef, String> {
        let bad =
            || format!("{text:?} is not a job id; write a number (12) or an array task (12.7)");
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        match text.split_once('.') {
            None if digits(text) => Ok(JobRef {
                id: text.parse().map_err(|_| bad())?,
                task: None,
            }),
            Some((a, t)) if digits(a) && digits(t) => Ok(JobRef {
                id: a.parse().map_err(|_| bad())?,
                task: Some(t.parse().map_err(|_| bad())?),
            }),
            _ => Err(bad()),
        }
    }
}

impl std::fmt::Display for JobRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.task {
            Some(t) => write!(f, "{}.{t}", self.id),
            None => write!(f, "{}", self.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_users_write() {
        let s = ArraySpec::parse("10").unwrap();
        assert_eq!((s.first, s.last, s.step, s.max_running), (0, 9, 1, None));
        assert_eq!(s.len(), 10);
        let s = ArraySpec::parse("0-9999%8").unwrap();
        assert_eq!((s.first, s.last, s.max_running), (0, 9999, Some(8)));
        assert_eq!(s.len(), 10_000);
        let s = ArraySpec::parse("3-11:4").unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(
            (0..4).map(|n| s.index(n)).collect::<Vec<_>>(),
            vec![Some(3), Some(7), Some(11), None]
        );
        assert!(s.contains(7) && !s.contains(8) && !s.contains(15));
        assert_eq!(s.text(), "3-11:4");
        assert_eq!(ArraySpec::parse("0-9999%8").unwrap().text(), "0-9999%8");
    }

    #[test]
    fn refuses_with_a_reason() {
        for (t, want) in [
            ("", "not understood"),
            ("a-b", "not understood"),
            ("5-2", "above the last"),
            ("0", "empty"),
            ("1-9:0", "step"),
            ("1-9%0", "%K"),
            ("0-2000000", "at most"),
            ("-3", "not understood"),
        ] {
            let e = ArraySpec::parse(t).unwrap_err().to_string();
            assert!(e.contains(want), "{t:?}: {e}");
        }
    }

    #[test]
    fn job_refs() {
        assert_eq!(JobRef::parse("12").unwrap(), JobRef { id: 12, task: None });
        assert_eq!(
            JobRef::parse("12.7").unwrap(),
            JobRef {
                id: 12,
                task: Some(7)
            }
        );
        for bad in ["", "x", "12.", ".7", "1.2.3", "-1"] {
            assert!(JobRef::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(JobRef::parse("12.7").unwrap().to_string(), "12.7");
    }
}
