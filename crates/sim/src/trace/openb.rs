//! The Alibaba GPU cluster trace v2023 ("openb", published with the FGD paper): a node
//! list (`sn,cpu_milli,memory_mib,gpu,model`) and pod lists
//! (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,...`; `gpu_spec` may be absent).
//!
//! Read as the FGD authors' simulator reads them: a pod with `num_gpu = 0` has no GPU
//! fields (its `gpu_milli` and `gpu_spec` are ignored); `gpu_spec` is `|`-separated.
//! Errors name the file, the line and the field.

use std::path::Path;

use gpusched_core::sharing::{ShareNode, SharePod};

use super::{CsvRows, Row, TraceError};

fn read_text(path: &Path) -> Result<(String, String), TraceError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TraceError::Io {
        file: file.clone(),
        source,
    })?;
    Ok((file, text))
}

fn require(file: &str, rows: &CsvRows, columns: &[&str]) -> Result<(), TraceError> {
    let missing: Vec<&str> = columns.iter().copied().filter(|c| !rows.has(c)).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(TraceError::Line {
            file: file.to_string(),
            line: 1,
            problem: format!(
                "missing column(s) {}; expected a header with {}",
                missing.join(", "),
                columns.join(",")
            ),
        })
    }
}

/// A whole number in `0..=max`.
fn whole(row: &Row, field: &str, max: u64) -> Result<u64, TraceError> {
    let raw = row.text(field)?;
    match raw.parse::<u64>() {
        Ok(v) if v <= max => Ok(v),
        Ok(v) => Err(row.error(field, format!("{v} is above the largest allowed, {max}"))),
        Err(_) => Err(row.error(
            field,
            format!("`{raw}` is not a whole number of at least 0"),
        )),
    }
}

pub fn parse_nodes(file: &str, text: &str) -> Result<Vec<ShareNode>, TraceError> {
    let rows = CsvRows::new(file, text)?;
    require(
        file,
        &rows,
        &["sn", "cpu_milli", "memory_mib", "gpu", "model"],
    )?;
    let mut nodes = Vec::new();
    rows.for_each(|row| {
        let gpus = whole(row, "gpu", 16)? as u32;
        let model = row.opt("model").unwrap_or("").to_string();
        if gpus > 0 && model.is_empty() {
            return Err(row.error("model", "a node with GPUs needs a GPU model"));
        }
        nodes.push(ShareNode {
            name: row.text("sn")?.to_string(),
            cpu_milli: whole(row, "cpu_milli", u64::from(u32::MAX))? as u32,
            mem_mib: whole(row, "memory_mib", u64::MAX)?,
            gpus,
            model,
        });
        Ok(())
    })?;
    if nodes.is_empty() {
        return Err(TraceError::Empty {
            file: file.to_string(),
        });
    }
    Ok(nodes)
}

pub fn parse_pods(file: &str, text: &str) -> Result<Vec<SharePod>, TraceError> {
    let rows = CsvRows::new(file, text)?;
    require(
        file,
        &rows,
        &["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"],
    )?;
    let mut pods = Vec::new();
    rows.for_each(|row| {
        let num_gpu = whole(row, "num_gpu", 64)? as u32;
        let (gpu_milli, models) = if num_gpu == 0 {
            (0, Vec::new())
        } else {
            let milli = whole(row, "gpu_milli", 1000)? as u32;
            if milli == 0 {
                return Err(row.error("gpu_milli", "a pod with GPUs needs gpu_milli 1..=1000"));
            }
            if num_gpu > 1 && milli < 1000 {
                return Err(row.error(
                    "gpu_milli",
                    format!("a share ({milli}/1000) is of one GPU only; this pod asks for {num_gpu} GPUs"),
                ));
            }
            let models = row
                .opt("gpu_spec")
                .map(|s| {
                    s.split('|')
                        .filter(|m| !m.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            (milli, models)
        };
        pods.push(SharePod {
            name: row.text("name")?.to_string(),
            cpu_milli: whole(row, "cpu_milli", u64::from(u32::MAX))? as u32,
            mem_mib: whole(row, "memory_mib", u64::MAX)?,
            num_gpu,
            gpu_milli,
            models,
        });
        Ok(())
    })?;
    if pods.is_empty() {
        return Err(TraceError::Empty {
            file: file.to_string(),
        });
    }
    Ok(pods)
}

pub fn read_nodes(path: &Path) -> Result<Vec<ShareNode>, TraceError> {
    let (file, text) = read_text(path)?;
    parse_nodes(&file, &text)
}

pub fn read_pods(path: &Path) -> Result<Vec<SharePod>, TraceError> {
    let (file, text) = read_text(path)?;
    parse_pods(&file, &text)
}
