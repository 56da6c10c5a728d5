//! The server's power settings (`gpusched serve --power-budget`, `--node-power-budget`,
//! `--gpu-power-cap`, `--consolidate-after`, `--power-hook`; docs/power.md) and the power
//! hook: an operator's command run as `CMD down NODE` when consolidation takes an idle
//! node down and `CMD up NODE` when waiting work needs it back. The rules are the core's
//! (`gpusched_core::power`); this module only runs the command, off the state task.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The power settings; the default is no budget, no cap, no consolidation.
#[derive(Clone, Debug, Default)]
pub struct PowerConfig {
    /// Watts over every online node, counted at the nodes' caps.
    pub budget_w: Option<u64>,
    /// Watts over each node on its own.
    pub node_budget_w: Option<u64>,
    /// The power limit every GPU gets (watts; at most its board power), sent to the
    /// agents, which set it through NVML. None: GPUs keep their limit and count their
    /// board power.
    pub gpu_cap_w: Option<u32>,
    /// Take a node down once it has run nothing for this long (consolidation); None:
    /// never.
    pub consolidate_after: Option<Duration>,
    /// The command run on each node taken down or brought up.
    pub hook: Option<PowerHook>,
}

impl PowerConfig {
    pub fn budget(&self) -> gpusched_core::power::Budget {
        gpusched_core::power::Budget {
            cluster_w: self.budget_w,
            node_w: self.node_budget_w,
        }
    }
}

/// What the power hook did since the server started.
#[derive(Debug, Default)]
pub struct HookStats {
    pub calls: AtomicU64,
    pub failures: AtomicU64,
}

/// The operator's power command, run one call at a time in the order they were made.
#[derive(Clone, Debug)]
pub struct PowerHook {
    pub command: String,
    /// A call still running after this is killed and counted as failed.
    pub timeout: Duration,
    pub stats: Arc<HookStats>,
    /// One call at a time: a node's `down` is over before its `up` begins.
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl PowerHook {
    pub fn new(command: String, timeout: Duration) -> Self {
        PowerHook {
            command,
            timeout,
            stats: Arc::default(),
            turn: Arc::default(),
        }
    }

    /// Runs `COMMAND VERB NODE` through `/bin/sh -c` on a task of its own (the state
    /// task never waits for it): the node's name is an argument, never part of the
    /// shell's text. A failure (exit status, timeout, cannot start) is logged and
    /// counted.
    pub fn call(&self, verb: &'static str, node: &str) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(verb, node, "no runtime to run the power hook on");
            return;
        };
        let (hook, node) = (self.clone(), node.to_string());
        rt.spawn(async move {
            let _turn = hook.turn.lock().await;
            hook.stats.calls.fetch_add(1, Ordering::Relaxed);
            let result = hook.run(verb, &node).await;
            match result {
                Ok(()) => tracing::info!(verb, node, "power hook done"),
                Err(e) => {
                    hook.stats.failures.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        verb,
                        node,
                        "power hook `{} {verb} {node}` failed: {e}; fix the command (--power-hook)",
                        hook.command
                    );
                }
            }
        });
    }

    async fn run(&self, verb: &str, node: &str) -> Result<(), String> {
        let mut cmd = tokio::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(format!("{} \"$@\"", self.command))
            .arg("gpusched-power-hook")
            .arg(verb)
            .arg(node)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start /bin/sh: {e}"))?;
        match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Err(_) => Err(format!(
                "still running after {} s, killed",
                self.timeout.as_secs()
            )),
            Ok(Err(e)) => Err(format!("cannot wait for it: {e}")),
            Ok(Ok(out)) if out.status.success() => Ok(()),
            Ok(Ok(out)) => Err(format!(
                "{} ({})",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A script that records its calls: each call appends `VERB NODE` to a file; a
    /// failing and a hanging command are counted as failures.
    #[tokio::test]
    async fn the_hook_runs_in_order_and_counts_failures() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("calls");
        let script = dir.path().join("hook.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\necho \"$1 $2\" >> {}\n", log.display()),
        )
        .unwrap();
        let hook = PowerHook::new(format!("sh {}", script.display()), Duration::from_secs(30));
        hook.call("down", "node-a");
        hook.call("up", "node-a");
        hook.call("down", "node b; rm -rf /");
        let want = "down node-a\nup node-a\ndown node b; rm -rf /\n";
        for _ in 0..600 {
            if std::fs::read_to_string(&log).unwrap_or_default() == want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(std::fs::read_to_string(&log).unwrap(), want);
        assert_eq!(hook.stats.failures.load(Ordering::Relaxed), 0);

        let failing = PowerHook::new("exit 3;".into(), Duration::from_secs(30));
        failing.call("up", "n");
        let hanging = PowerHook::new("sleep 30;".into(), Duration::from_millis(200));
        hanging.call("up", "n");
        for _ in 0..600 {
            let done = failing.stats.failures.load(Ordering::Relaxed)
                + hanging.stats.failures.load(Ordering::Relaxed);
            if done == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(failing.stats.failures.load(Ordering::Relaxed), 1);
        assert_eq!(hanging.stats.failures.load(Ordering::Relaxed), 1);
        assert_eq!(hanging.stats.calls.load(Ordering::Relaxed), 1);
    }
}
