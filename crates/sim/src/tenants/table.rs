//! The per-tenant table, policies side by side, and the per-tenant CSVs.

use std::io::Write;

use crate::report::{aligned, secs};
use crate::tenants::{TenantReport, TenantUsage};

/// One row per tenant; per policy its mean and p95 JCT, mean wait, share of the
/// delivered GPU-hours and fair ratio; then Jain's indices per policy.
pub fn table(reports: &[TenantReport]) -> String {
    let mut header = vec!["tenant".to_string(), "jobs".to_string()];
    for r in reports {
        for col in ["avg JCT", "p95 JCT", "wait", "share", "fair"] {
            header.push(format!("{} {col}", r.policy));
        }
    }
    let first = reports.first().map_or(&[][..], |r| r.tenants.as_slice());
    let rows: Vec<Vec<String>> = first
        .iter()
        .map(|t| {
            let mut row = vec![t.tenant.clone(), t.jobs.to_string()];
            for r in reports {
                // Every policy runs the same trace, so the same tenants; a missing one
                // (no job of it finished) shows as dashes rather than shifting columns.
                match r.tenants.iter().find(|o| o.tenant == t.tenant) {
                    Some(o) => row.extend([
                        secs(o.avg_jct),
                        secs(o.p95_jct),
                        secs(o.avg_wait),
                        format!("{:.1}%", o.gpu_share * 100.0),
                        format!("{:.2}", o.fair_ratio),
                    ]),
                    None => row.extend((0..5).map(|_| "-".to_string())),
                }
            }
            row
        })
        .collect();
    let mut out = aligned(&header, rows, 1);
    let list = |f: &dyn Fn(&TenantReport) -> String| -> String {
        reports
            .iter()
            .map(|r| format!("{} {}", r.policy, f(r)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push_str(&format!(
        "Jain over tenants of fair ratio (GPU-hours / max-min fair entitlement): {}\n",
        list(&|r| format!("{:.3}", r.jain_fair_ratio))
    ));
    out.push_str(&format!(
        "Jain per contended {}-s bin, mean: {}\n",
        reports.first().map_or(3600.0, |r| r.bin_seconds),
        list(&|r| format!(
            "{:.3} over {} bins",
            r.jain_contended_bins, r.contended_bins
        ))
    ));
    out
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `tenants-POLICY.csv`: one row per tenant.
pub fn write_tenants_csv(out: &mut dyn Write, r: &TenantReport) -> std::io::Result<()> {
    writeln!(
        out,
        "tenant,jobs,avg_jct,p50_jct,p95_jct,avg_wait,gpu_hours,gpu_share,entitled_gpu_hours,fair_ratio"
    )?;
    for t in &r.tenants {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            field(&t.tenant),
            t.jobs,
            t.avg_jct,
            t.p50_jct,
            t.p95_jct,
            t.avg_wait,
            t.gpu_hours,
            t.gpu_share,
            t.entitled_gpu_hours,
            t.fair_ratio
        )?;
    }
    Ok(())
}

/// `shares-POLICY.csv`: per bin and tenant, the mean GPUs held and asked for over the
/// bin, and the tenant's part of the busy GPUs. `names[t]` names tenant number `t`.
pub fn write_shares_csv(
    out: &mut dyn Write,
    u: &TenantUsage,
    names: &[String],
) -> std::io::Result<()> {
    writeln!(out, "hour,tenant,gpus_held,gpus_demanded,share_of_busy")?;
    for k in 0..u.bins() {
        let span = u.capacity(k, 1);
        let at = |v: &Vec<f64>| v.get(k).copied().unwrap_or(0.0);
        let busy: f64 = u.held.values().map(at).sum();
        for (&t, demand) in &u.demand {
            let held = u.held.get(&t).map_or(0.0, at);
            let asked = at(demand);
            if asked == 0.0 && held == 0.0 {
                continue;
            }
            let name = names.get(t as usize).cloned().unwrap_or(t.to_string());
            let per = |x: f64| if span > 0.0 { x / span } else { 0.0 };
            writeln!(
                out,
                "{},{},{},{},{}",
                k as f64 * u.bin_seconds / 3600.0,
                field(&name),
                per(held),
                per(asked),
                if busy > 0.0 { held / busy } else { 0.0 }
            )?;
        }
    }
    Ok(())
}
