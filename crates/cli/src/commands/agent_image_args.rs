//! `gpusched agent`'s flags for jobs in container images (`submit --image`):
//! docs/containers.md.

use std::path::Path;
use std::sync::Arc;

use clap::{Args as ClapArgs, ValueEnum};
use gpusched_agent::image::{Choice, ImageOptions, Kind, Mount, Runtime};

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeFlag {
    /// The first of podman, apptainer (or singularity), docker that works here; docker
    /// only when its daemon answers. None found: no image jobs here.
    Auto,
    Podman,
    Apptainer,
    Docker,
    /// This node runs no image jobs (the server places them elsewhere).
    None,
}

#[derive(ClapArgs, Debug, Clone)]
pub struct ImageArgs {
    /// The container runtime of jobs submitted with --image. A runtime named here that
    /// does not work stops the agent at start.
    #[arg(long, value_enum, value_name = "RUNTIME", default_value_t = RuntimeFlag::Auto)]
    pub image_runtime: RuntimeFlag,
    /// Run only images whose reference starts with PREFIX (repeatable), e.g.
    /// registry.example.com/ml/; others fail with the reason before anything runs.
    /// None given: any image.
    #[arg(long, value_name = "PREFIX")]
    pub image_allow: Vec<String>,
    /// A host directory every image job gets, SRC:DST or SRC:DST:ro (repeatable).
    /// Otherwise a container sees only its image, its working directory and its
    /// checkpoint directory.
    #[arg(long, value_name = "SRC:DST[:ro]", value_parser = parse_mount)]
    pub image_mount: Vec<Mount>,
    /// Pull an image that is not on the node when its job starts; without it only
    /// images already on the node run, and a missing one fails its job at once.
    /// Where no CDI spec in /etc/cdi or /var/run/cdi names nvidia.com/gpu, a container
    /// gets its GPUs' device nodes from --gpu-device-dir (DIR/nvidiaN) and the control
    /// devices found there.
    #[arg(long)]
    pub image_pull: bool,
}

fn parse_mount(s: &str) -> Result<Mount, String> {
    Mount::parse(s)
}

impl ImageArgs {
    /// The runtime to run image jobs with (`None`: none here), found now.
    /// `gpu_device_dir`: where GPU N's device node is (`--gpu-device-dir`).
    pub fn runtime(
        &self,
        node: &str,
        gpu_device_dir: &Path,
    ) -> anyhow::Result<Option<Arc<Runtime>>> {
        let choice = match self.image_runtime {
            RuntimeFlag::Auto => Choice::Auto,
            RuntimeFlag::Podman => Choice::Only(Kind::Podman),
            RuntimeFlag::Apptainer => Choice::Only(Kind::Apptainer),
            RuntimeFlag::Docker => Choice::Only(Kind::Docker),
            RuntimeFlag::None => Choice::None,
        };
        for p in &self.image_allow {
            gpusched_wire::image::check_reference(p)
                .map_err(|e| anyhow::anyhow!("--image-allow {p:?}: {e}"))?;
        }
        let opts = ImageOptions {
            runtime: choice,
            allow: self.image_allow.clone(),
            mounts: self.image_mount.clone(),
            pull: self.image_pull,
            gpu_dev_dir: gpu_device_dir.to_path_buf(),
        };
        let rt =
            Runtime::detect(&opts, node).map_err(|e| anyhow::anyhow!("--image-runtime: {e}"))?;
        if let Some(rt) = &rt {
            tracing::info!(runtime = %rt.describe(), "image jobs run here");
        }
        Ok(rt.map(Arc::new))
    }
}
