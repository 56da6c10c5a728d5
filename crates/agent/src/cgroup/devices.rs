//! The node's GPU device files, so a part's cgroup can refuse the ones it was not
//! given (`/dev/nvidiaN`, character major 195 with the driver loaded). The control
//! devices (`nvidiactl`, `nvidia-uvm`, `nvidia-modeset`) stay open to every job, as
//! CUDA needs them.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Each GPU's device file, by NVML index.
#[derive(Clone, Debug, Default)]
pub struct GpuDevices {
    by_index: BTreeMap<u32, PathBuf>,
}

impl GpuDevices {
    /// `dir/nvidia<minor>` for each (index, minor number) NVML gave.
    pub fn in_dir(dir: &Path, minors: impl IntoIterator<Item = (u32, u32)>) -> GpuDevices {
        GpuDevices {
            by_index: minors
                .into_iter()
                .map(|(index, minor)| (index, dir.join(format!("nvidia{minor}"))))
                .collect(),
        }
    }

    /// The (major, minor) numbers of the node's GPUs other than `given`: what a part
    /// on `given` may not open. A GPU whose file is missing or not a character device
    /// has nothing to refuse.
    pub fn deny_for(&self, given: &[u32]) -> Vec<(u32, u32)> {
        self.by_index
            .iter()
            .filter(|(i, _)| !given.contains(i))
            .filter_map(|(_, path)| char_device(path))
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.by_index.is_empty()
    }
}

/// The numbers of a character device file.
pub fn char_device(path: &Path) -> Option<(u32, u32)> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.file_type().is_char_device() {
        return None;
    }
    let rdev = meta.rdev();
    Some((libc::major(rdev), libc::minor(rdev)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_gpus_devices_are_refused_and_missing_files_skipped() {
        // /dev/null stands in for a GPU's file; a missing one has nothing to refuse.
        let tmp = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/dev/null", tmp.path().join("nvidia0")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", tmp.path().join("nvidia1")).unwrap();
        let d = GpuDevices::in_dir(tmp.path(), [(0, 0), (1, 1), (2, 2)]);
        assert_eq!(d.deny_for(&[0]), vec![(1, 5)]);
        assert_eq!(d.deny_for(&[1]), vec![(1, 3)]);
        assert_eq!(d.deny_for(&[0, 1, 2]), vec![]);
        assert_eq!(char_device(Path::new("/dev/null")), Some((1, 3)));
        assert_eq!(char_device(Path::new("/")), None);
    }
}
