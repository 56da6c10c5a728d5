//! How a node is reached and linked, as `nodes --gpus` prints it: the address its agent
//! advertised, its switch and rack, and the GPU link matrix in `nvidia-smi topo -m`'s
//! style (`X` on the diagonal, `NV`/`NVS` for NVLink, `PIX`..`SYS` for PCIe paths).

use gpusched_wire::{LinkKind, NodeView};

use super::fmt::table;

/// `node-a  addr 10.0.0.7  switch s1  rack r2`, with `-` for what is unknown.
pub fn where_line(n: &NodeView) -> String {
    let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    format!(
        "{}  addr {}  switch {}  rack {}",
        n.name,
        or_dash(&n.addr),
        or_dash(&n.location.switch),
        or_dash(&n.location.rack)
    )
}

/// The link matrix of the node's GPUs, or `None` when its agent reported no links
/// (declared GPUs, or a driver that does not say): a matrix of all `SYS` would be a guess
/// dressed as a measurement. A pair the agent left out is `SYS`, as the wire type says.
pub fn matrix(n: &NodeView) -> Option<String> {
    if n.gpu_links.is_empty() {
        return None;
    }
    let mut ix: Vec<u32> = n.gpus.iter().map(|g| g.info.index).collect();
    ix.sort_unstable();
    ix.dedup();
    let link = |a: u32, b: u32| -> LinkKind {
        let (a, b) = (a.min(b), a.max(b));
        n.gpu_links
            .iter()
            .filter(|l| (l.a, l.b) == (a, b))
            .map(|l| l.kind)
            // Best-first ordering: a pair reported twice shows its best link.
            .min()
            .unwrap_or(LinkKind::System)
    };
    let mut header = vec![String::new()];
    header.extend(ix.iter().map(|i| format!("GPU{i}")));
    let rows: Vec<Vec<String>> = ix
        .iter()
        .map(|&a| {
            let mut row = vec![format!("GPU{a}")];
            row.extend(ix.iter().map(|&b| {
                if a == b {
                    "X".to_string()
                } else {
                    link(a, b).short().to_string()
                }
            }));
            row
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    Some(table(&header, &rows))
}

/// The legend under the matrices: only the kinds that appear, best first.
pub fn legend(nodes: &[NodeView]) -> String {
    let mut seen: Vec<LinkKind> = nodes
        .iter()
        .filter(|n| !n.gpu_links.is_empty())
        .flat_map(|n| {
            // Absent pairs read as SYS in the matrix, so SYS may appear without a link.
            let pairs = n.gpus.len() * n.gpus.len().saturating_sub(1) / 2;
            let implied = (n.gpu_links.len() < pairs).then_some(LinkKind::System);
            n.gpu_links.iter().map(|l| l.kind).chain(implied)
        })
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen.iter()
        .map(|k| format!("{} = {}", k.short(), meaning(*k)))
        .collect::<Vec<_>>()
        .join("; ")
}

fn meaning(k: LinkKind) -> &'static str {
    match k {
        LinkKind::NvSwitch => "NVLink through an NVSwitch",
        LinkKind::NvLink => "direct NVLink",
        LinkKind::PcieSwitch => "one PCIe switch",
        LinkKind::PcieMulti => "several PCIe switches",
        LinkKind::HostBridge => "a PCIe host bridge",
        LinkKind::Numa => "host bridges within a NUMA node",
        LinkKind::System => "across NUMA nodes (SMP interconnect)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(links: serde_json::Value) -> NodeView {
        let gpu = |i: u32| {
            serde_json::json!({"index": i, "model": "H100", "mem_mib": 81920,
                               "source": "fake", "job": null})
        };
        serde_json::from_value(serde_json::json!({
            "name": "n1", "state": "online", "gpus": [gpu(0), gpu(1), gpu(2)],
            "cpus": 8, "mem_mib": 65536,
            "addr": "10.0.0.7", "location": {"switch": "s1"}, "gpu_links": links,
            "last_seen_ms_ago": 0, "agent_version": "x"
        }))
        .unwrap()
    }

    #[test]
    fn the_matrix_is_symmetric_with_sys_for_pairs_not_reported() {
        let n = node(serde_json::json!([
            {"a": 0, "b": 1, "kind": "nv_link"},
            {"a": 1, "b": 2, "kind": "pcie_switch"}
        ]));
        assert_eq!(
            matrix(&n).unwrap(),
            "      GPU0  GPU1  GPU2\n\
             GPU0  X     NV    SYS\n\
             GPU1  NV    X     PIX\n\
             GPU2  SYS   PIX   X\n"
        );
        assert_eq!(
            legend(std::slice::from_ref(&n)),
            "NV = direct NVLink; PIX = one PCIe switch; SYS = across NUMA nodes (SMP interconnect)"
        );
        assert_eq!(where_line(&n), "n1  addr 10.0.0.7  switch s1  rack -");
    }

    #[test]
    fn no_reported_links_is_no_matrix() {
        let n = node(serde_json::json!([]));
        assert!(matrix(&n).is_none());
        assert_eq!(legend(&[n]), "");
    }
}
