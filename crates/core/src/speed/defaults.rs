//! The default speed of each GPU type against a V100, used when neither the job nor the
//! cluster's history says how fast a job runs on a type.
//!
//! A single number per type is a blunt tool: Gavel (OSDI 2020, Fig. 1) measured speed-ups
//! from under 1x to over 3x for the same pair of GPUs depending on the model. The
//! defaults only order the types sensibly until a declaration or the history answers.
//!
//! Sources, row by row:
//! - K80 and P100: the geometric mean, over the 26 single-GPU job types of Gavel's
//!   `scheduler/simulation_throughputs.json` (github.com/stanford-futuredata/gavel), of
//!   each type's isolated throughput divided by the V100's. Computed by us from that file
//!   (K80 0.297, P100 0.943; the spread is wide: K80 0.09 to 1.51, P100 0.54 to 2.31).
//! - A100, H100, T4, L4, A10: NOT measured by us. Rough training speed-ups read from
//!   NVIDIA's published product comparisons (A100 about 2x a V100 for mixed-precision
//!   training, H100 about 2x an A100, T4/L4/A10 inference cards below a V100 for
//!   training); assumed values, stated as such. Declare `--speedup` or let the history
//!   learn them for real decisions.

/// The model every factor is measured against unless the caller names another.
pub const REFERENCE: &str = "V100";

/// (model prefix, speed against a V100, measured from a public source or assumed).
pub const TABLE: &[(&str, f64, Basis)] = &[
    ("K80", 0.297, Basis::Gavel),
    ("P100", 0.943, Basis::Gavel),
    ("V100", 1.0, Basis::Reference),
    ("T4", 0.5, Basis::Assumed),
    ("A10", 1.2, Basis::Assumed),
    ("L4", 1.0, Basis::Assumed),
    ("A100", 2.0, Basis::Assumed),
    ("H100", 4.0, Basis::Assumed),
];

/// What a default rests on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Basis {
    Reference,
    /// Computed from Gavel's published throughput measurements.
    Gavel,
    /// A rough figure from vendors' published comparisons, not measured.
    Assumed,
}

/// The default speed of `model` against a V100: the row whose prefix matches it, the
/// longest such prefix winning (`A10` must not answer for an `A100`, nor `L4` for `L40`:
/// prefixes are matched case-insensitively on the model's leading letters and digits).
pub fn against_v100(model: &str) -> Option<f64> {
    let head = leading_name(model);
    TABLE
        .iter()
        .filter(|(p, _, _)| head.eq_ignore_ascii_case(p))
        .map(|&(_, f, _)| f)
        .next()
}

/// `model`'s speed against `reference`, where the table knows both.
pub fn relative(model: &str, reference: &str) -> Option<f64> {
    Some(against_v100(model)? / against_v100(reference)?)
}

/// The model's family name: its leading letters and digits (`A100` of
/// `A100-SXM4-80GB`, `H100` of `H100 80GB HBM3`, `V100` of `v100`; NVML's `Tesla `
/// prefix dropped).
fn leading_name(model: &str) -> &str {
    let m = model.trim();
    let m = m
        .strip_prefix("Tesla ")
        .or_else(|| m.strip_prefix("NVIDIA "))
        .unwrap_or(m);
    let end = m
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(m.len());
    &m[..end]
}
