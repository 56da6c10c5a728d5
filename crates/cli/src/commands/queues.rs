//! `gpusched queues`: limits, weights, access and load of every queue (`sinfo -s` /
//! `sacctmgr show qos` in spirit).

use clap::Args as ClapArgs;

use super::fmt::table;

#[derive(ClapArgs, Debug)]
pub struct Args {
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub conn: super::conn::Conn,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let list = args.conn.client()?.queues().await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = list
        .queues
        .iter()
        .map(|q| {
            let who: Vec<String> = q
                .users
                .iter()
                .cloned()
                .chain(q.groups.iter().map(|g| format!("@{g}")))
                .collect();
            vec![
                q.name.clone(),
                q.quota.to_string(),
                q.max.map(|m| m.to_string()).unwrap_or_else(|| "-".into()),
                format!("{}", q.weight),
                q.used_gpus.to_string(),
                q.running.to_string(),
                q.pending.to_string(),
                if who.is_empty() {
                    "everyone".into()
                } else {
                    who.join(",")
                },
                tiers(q),
            ]
        })
        .collect();
    print!(
        "{}",
        table(
            &[
                "QUEUE",
                "QUOTA",
                "MAX",
                "WEIGHT",
                "GPUS USED",
                "RUNNING",
                "PENDING",
                "WHO",
                "PRIORITY TIERS"
            ],
            &rows
        )
    );
    Ok(())
}

/// A queue's priority tiers as ranges of base priority (`<100, 100-999, 1000+`), and
/// whether a waiting job preempts lower tiers; `-` for one tier.
pub fn tiers(q: &gpusched_wire::QueueView) -> String {
    let Some((first, rest)) = q.priority_tiers.split_first() else {
        return "-".into();
    };
    let mut ranges = vec![format!("<{first}")];
    let mut low = *first;
    for &next in rest {
        ranges.push(format!("{low}-{}", next - 1));
        low = next;
    }
    ranges.push(format!("{low}+"));
    let mut s = ranges.join(", ");
    if q.preempt_lower_priority {
        s.push_str(" (preempts lower)");
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn tiers_read_as_ranges_with_the_preemption_rule() {
        let q = |tiers: &[i32], preempt: bool| -> gpusched_wire::QueueView {
            serde_json::from_value(serde_json::json!({
                "name": "q", "quota": 0, "max": null, "weight": 1.0, "users": [],
                "groups": [], "default_priority": 0, "max_priority": null,
                "priority_tiers": tiers, "preempt_lower_priority": preempt,
                "used_gpus": 0, "running": 0, "pending": 0
            }))
            .unwrap()
        };
        assert_eq!(super::tiers(&q(&[], false)), "-");
        assert_eq!(
            super::tiers(&q(&[100, 1000], true)),
            "<100, 100-999, 1000+ (preempts lower)"
        );
        assert_eq!(super::tiers(&q(&[10], false)), "<10, 10+");
    }
}
