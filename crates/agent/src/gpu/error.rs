//! Why GPU discovery failed, worded for the operator who has to fix it.

use thiserror::Error;

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum GpuError {
    #[error(
        "NVIDIA's management library (libnvidia-ml.so.1) was not found: no NVIDIA driver on this \
         host"
    )]
    LibraryNotFound,

    #[error(
        "NVIDIA's management library is installed but the NVIDIA kernel driver is not loaded \
         (NVML_ERROR_DRIVER_NOT_LOADED): load the driver; nvidia-smi should then work"
    )]
    DriverNotLoaded,

    #[error(
        "NVML refused access to the NVIDIA driver (NVML_ERROR_NO_PERMISSION): run the agent as a \
         user allowed to open /dev/nvidia*"
    )]
    NoPermission,

    #[error("NVML was used before it was initialised (NVML_ERROR_UNINITIALIZED)")]
    NotInitialized,

    #[error(
        "there is no GPU with index {index}: NVML reports {count} (NVML_ERROR_INVALID_ARGUMENT)"
    )]
    InvalidIndex { index: u32, count: u32 },

    #[error("NVML call {call} failed: {message}")]
    Call { call: &'static str, message: String },

    /// Automatic discovery found NVIDIA software that does not work and no declaration
    /// to fall back on; registering zero GPUs would hide the broken driver.
    #[error(
        "{0}; to run this node without NVML instead, declare its GPUs with --gpus N --gpu-model \
         MODEL (--gpus 0 for a node without GPUs)"
    )]
    UnusableAndUndeclared(Box<GpuError>),

    #[error("a declared GPU model or memory size needs --gpus N as well")]
    DeclarationWithoutCount,

    #[error("declared GPUs need --gpus N (0 for a node without GPUs)")]
    DeclaredBackendWithoutCount,

    #[error("the declared GPU model must not be empty")]
    EmptyModel,

    /// A MIG or power call failed with NVML's error `code`.
    #[error("{call} on GPU {index} failed ({code}): {detail}")]
    Mig {
        call: &'static str,
        index: u32,
        code: &'static str,
        detail: String,
    },
}

impl GpuError {
    /// A MIG call's failure with NVML's usual meaning of `code`.
    pub fn mig(call: &'static str, index: u32, code: &'static str) -> Self {
        let detail = match code {
            super::NOT_SUPPORTED => "the GPU is not in MIG mode or has no MIG",
            super::INVALID_ARGUMENT => "the profile or placement is not valid for this GPU",
            super::INSUFFICIENT_RESOURCES => "the placement overlaps an existing instance",
            super::NOT_FOUND => "there is no instance there",
            super::NO_PERMISSION => "setting a power limit needs root: run the agent as root",
            _ => "see NVML's documentation of the code",
        };
        GpuError::Mig {
            call,
            index,
            code,
            detail: detail.to_string(),
        }
    }
}
