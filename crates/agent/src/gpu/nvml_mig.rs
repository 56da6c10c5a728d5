//! MIG through NVML's C API: reading a GPU's MIG mode, listing its GPU instances, and
//! creating and destroying instances with a compute instance spanning each. nvml-wrapper
//! 0.10 wraps none of these calls, so this module loads the library a second time through
//! its raw bindings (`dlopen` hands back the same library, and NVML counts its
//! initialisations).
//!
//! Every call is checked for presence first: a driver too old for MIG (before R450)
//! makes this module unavailable instead of failing later. Calls follow NVIDIA's NVML
//! reference ("Multi Instance GPU Management"): placements are in memory slices, a GPU
//! instance must lose its compute instances before it can be destroyed, and a MIG device
//! (the `MIG-…` UUID `CUDA_VISIBLE_DEVICES` takes) exists only once a compute instance
//! does.

use std::ffi::{c_char, c_uint, CStr, OsStr};
use std::ptr;

use nvml_wrapper_sys::bindings::*;

use super::{
    GpuError, MigInstanceFacts, INSUFFICIENT_RESOURCES, INVALID_ARGUMENT, NOT_FOUND, NOT_SUPPORTED,
};

/// GPU instance profiles of the A100 and H100 tables gpusched knows: 1, 2, 3, 4 and 7
/// slices, and the one-slice profile with twice the memory (`1g.10gb` on 40 GB parts,
/// `1g.20gb` on 80 GB ones).
const GPU_PROFILES: [c_uint; 6] = [
    NVML_GPU_INSTANCE_PROFILE_1_SLICE,
    NVML_GPU_INSTANCE_PROFILE_2_SLICE,
    NVML_GPU_INSTANCE_PROFILE_3_SLICE,
    NVML_GPU_INSTANCE_PROFILE_4_SLICE,
    NVML_GPU_INSTANCE_PROFILE_7_SLICE,
    NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2,
];

pub struct NvmlMig {
    lib: NvmlLib,
}

// SAFETY: NVML is thread-safe (NVIDIA's reference: "all NVML calls are thread safe");
// the loaded library's function table is read-only after loading.
unsafe impl Send for NvmlMig {}
unsafe impl Sync for NvmlMig {}

/// A profile as this GPU reports it.
struct Profile {
    id: c_uint,
    name: String,
    slices: c_uint,
    instances: c_uint,
}

impl NvmlMig {
    /// Loads NVML for MIG calls; `None` where the library or a MIG call is missing.
    pub fn load(name: &OsStr) -> Option<Self> {
        // SAFETY: loading NVML runs only its (driver-provided) initialisers.
        let lib = unsafe { NvmlLib::new(name) }.ok()?;
        let present = lib.nvmlInit_v2.is_ok()
            && lib.nvmlShutdown.is_ok()
            && lib.nvmlDeviceGetHandleByIndex_v2.is_ok()
            && lib.nvmlDeviceGetMigMode.is_ok()
            && lib.nvmlDeviceGetGpuInstanceProfileInfo.is_ok()
            && lib.nvmlDeviceGetGpuInstances.is_ok()
            && lib.nvmlGpuInstanceGetInfo.is_ok()
            && lib.nvmlDeviceCreateGpuInstanceWithPlacement.is_ok()
            && lib.nvmlGpuInstanceDestroy.is_ok()
            && lib.nvmlGpuInstanceGetComputeInstanceProfileInfo.is_ok()
            && lib.nvmlGpuInstanceCreateComputeInstance.is_ok()
            && lib.nvmlGpuInstanceGetComputeInstances.is_ok()
            && lib.nvmlComputeInstanceDestroy.is_ok()
            && lib.nvmlDeviceGetMaxMigDeviceCount.is_ok()
            && lib.nvmlDeviceGetMigDeviceHandleByIndex.is_ok()
            && lib.nvmlDeviceGetGpuInstanceId.is_ok()
            && lib.nvmlDeviceGetUUID.is_ok();
        // SAFETY: every function used is present (checked above).
        if !present || unsafe { lib.nvmlInit_v2() } != nvmlReturn_enum_NVML_SUCCESS {
            return None;
        }
        Some(NvmlMig { lib })
    }

    fn device(&self, index: u32, call: &'static str) -> Result<nvmlDevice_t, GpuError> {
        let mut dev: nvmlDevice_t = ptr::null_mut();
        // SAFETY: `dev` is a valid out pointer.
        let r = unsafe { self.lib.nvmlDeviceGetHandleByIndex_v2(index, &mut dev) };
        check(r, call, index)?;
        Ok(dev)
    }

    /// Whether MIG is enabled now; `None` on a GPU without MIG.
    pub fn mig_mode(&self, index: u32) -> Result<Option<bool>, GpuError> {
        let dev = self.device(index, "nvmlDeviceGetMigMode")?;
        let (mut current, mut pending) = (0, 0);
        // SAFETY: valid device handle and out pointers.
        let r = unsafe {
            self.lib
                .nvmlDeviceGetMigMode(dev, &mut current, &mut pending)
        };
        if r == nvmlReturn_enum_NVML_ERROR_NOT_SUPPORTED {
            return Ok(None);
        }
        check(r, "nvmlDeviceGetMigMode", index)?;
        Ok(Some(current == NVML_DEVICE_MIG_ENABLE))
    }

    fn profiles(&self, dev: nvmlDevice_t, index: u32) -> Result<Vec<Profile>, GpuError> {
        let mut out = Vec::new();
        for p in GPU_PROFILES {
            // SAFETY: zeroed plain C struct as an out parameter.
            let mut info: nvmlGpuInstanceProfileInfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: valid device handle and out pointer.
            let r = unsafe {
                self.lib
                    .nvmlDeviceGetGpuInstanceProfileInfo(dev, p, &mut info)
            };
            if r == nvmlReturn_enum_NVML_ERROR_NOT_SUPPORTED
                || r == nvmlReturn_enum_NVML_ERROR_INVALID_ARGUMENT
            {
                continue; // this GPU has no such profile
            }
            check(r, "nvmlDeviceGetGpuInstanceProfileInfo", index)?;
            out.push(Profile {
                id: info.id,
                name: self
                    .profile_name_v2(dev, p)
                    .unwrap_or_else(|| profile_name(info.sliceCount, info.memorySizeMB)),
                slices: info.sliceCount,
                instances: info.instanceCount,
            });
        }
        Ok(out)
    }

    /// The driver's own profile name (`MIG 1g.10gb` → `1g.10gb`), from drivers that have
    /// the versioned call.
    fn profile_name_v2(&self, dev: nvmlDevice_t, p: c_uint) -> Option<String> {
        let f = self
            .lib
            .nvmlDeviceGetGpuInstanceProfileInfoV
            .as_ref()
            .ok()?;
        // SAFETY: zeroed plain C struct; NVML reads `version` first.
        let mut info: nvmlGpuInstanceProfileInfo_v2_t = unsafe { std::mem::zeroed() };
        info.version = std::mem::size_of::<nvmlGpuInstanceProfileInfo_v2_t>() as c_uint | (2 << 24);
        // SAFETY: the symbol is present; valid handle and out pointer.
        if unsafe { f(dev, p, &mut info) } != nvmlReturn_enum_NVML_SUCCESS {
            return None;
        }
        // SAFETY: NVML writes a NUL-terminated string into the 96-byte array.
        let name = unsafe { CStr::from_ptr(info.name.as_ptr()) }.to_string_lossy();
        let name = name.trim().trim_start_matches("MIG ").to_string();
        (!name.is_empty()).then_some(name)
    }

    /// Every GPU instance with its profile, placement and MIG device UUID.
    fn list(&self, index: u32) -> Result<Vec<(nvmlGpuInstance_t, MigInstanceFacts)>, GpuError> {
        const CALL: &str = "nvmlDeviceGetGpuInstances";
        let dev = self.device(index, CALL)?;
        let uuids = self.mig_device_uuids(dev, index)?;
        let mut out = Vec::new();
        for p in self.profiles(dev, index)? {
            let mut handles: Vec<nvmlGpuInstance_t> =
                vec![ptr::null_mut(); p.instances.max(1) as usize];
            let mut count: c_uint = 0;
            // SAFETY: `handles` has room for `instanceCount` handles.
            let r = unsafe {
                self.lib
                    .nvmlDeviceGetGpuInstances(dev, p.id, handles.as_mut_ptr(), &mut count)
            };
            check(r, CALL, index)?;
            for &gi in handles.iter().take(count as usize) {
                // SAFETY: zeroed plain C struct; `gi` came from NVML just now.
                let mut info: nvmlGpuInstanceInfo_t = unsafe { std::mem::zeroed() };
                let r = unsafe { self.lib.nvmlGpuInstanceGetInfo(gi, &mut info) };
                check(r, "nvmlGpuInstanceGetInfo", index)?;
                out.push((
                    gi,
                    MigInstanceFacts {
                        profile: p.name.clone(),
                        start: info.placement.start as u8,
                        size: info.placement.size as u8,
                        uuid: uuids.iter().find(|u| u.0 == info.id).map(|u| u.1.clone()),
                    },
                ));
            }
        }
        out.sort_by_key(|i| i.1.start);
        Ok(out)
    }

    /// (GPU instance id, `MIG-…` UUID) of every MIG device (one per compute instance).
    fn mig_device_uuids(
        &self,
        dev: nvmlDevice_t,
        index: u32,
    ) -> Result<Vec<(c_uint, String)>, GpuError> {
        let mut max: c_uint = 0;
        // SAFETY: valid handle and out pointer.
        let r = unsafe { self.lib.nvmlDeviceGetMaxMigDeviceCount(dev, &mut max) };
        check(r, "nvmlDeviceGetMaxMigDeviceCount", index)?;
        let mut out = Vec::new();
        for i in 0..max {
            let mut mig: nvmlDevice_t = ptr::null_mut();
            // SAFETY: valid handle and out pointer; NOT_FOUND for an empty slot.
            let r = unsafe {
                self.lib
                    .nvmlDeviceGetMigDeviceHandleByIndex(dev, i, &mut mig)
            };
            if r == nvmlReturn_enum_NVML_ERROR_NOT_FOUND {
                continue;
            }
            check(r, "nvmlDeviceGetMigDeviceHandleByIndex", index)?;
            let mut gid: c_uint = 0;
            // SAFETY: `mig` is a MIG device handle from NVML.
            let r = unsafe { self.lib.nvmlDeviceGetGpuInstanceId(mig, &mut gid) };
            check(r, "nvmlDeviceGetGpuInstanceId", index)?;
            let mut buf = [0 as c_char; NVML_DEVICE_UUID_V2_BUFFER_SIZE as usize];
            // SAFETY: the buffer has the documented size for UUIDs.
            let r = unsafe {
                self.lib
                    .nvmlDeviceGetUUID(mig, buf.as_mut_ptr(), buf.len() as c_uint)
            };
            check(r, "nvmlDeviceGetUUID", index)?;
            // SAFETY: NVML wrote a NUL-terminated string.
            let uuid = unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned();
            out.push((gid, uuid));
        }
        Ok(out)
    }

    pub fn instances(&self, index: u32) -> Result<Vec<MigInstanceFacts>, GpuError> {
        Ok(self.list(index)?.into_iter().map(|(_, f)| f).collect())
    }

    pub fn create(
        &self,
        index: u32,
        profile: &str,
        start: u8,
    ) -> Result<MigInstanceFacts, GpuError> {
        const CALL: &str = "nvmlDeviceCreateGpuInstanceWithPlacement";
        let dev = self.device(index, CALL)?;
        let p = self
            .profiles(dev, index)?
            .into_iter()
            .find(|p| p.name == profile)
            .ok_or_else(|| GpuError::mig(CALL, index, INVALID_ARGUMENT))?;
        let placement = nvmlGpuInstancePlacement_t {
            start: c_uint::from(start),
            size: 0, // NVML takes the size from the profile
        };
        let mut gi: nvmlGpuInstance_t = ptr::null_mut();
        // SAFETY: valid handle, placement and out pointer.
        let r = unsafe {
            self.lib
                .nvmlDeviceCreateGpuInstanceWithPlacement(dev, p.id, &placement, &mut gi)
        };
        check(r, CALL, index)?;
        if let Err(e) = self.create_compute_instance(gi, p.slices, index) {
            // Leave no half-made instance behind.
            // SAFETY: `gi` was created above and has no compute instance.
            unsafe { self.lib.nvmlGpuInstanceDestroy(gi) };
            return Err(e);
        }
        self.list(index)?
            .into_iter()
            .map(|(_, f)| f)
            .find(|f| f.start == start)
            .ok_or_else(|| GpuError::mig(CALL, index, NOT_FOUND))
    }

    /// One compute instance over all of the GPU instance's slices, sharing its engines.
    fn create_compute_instance(
        &self,
        gi: nvmlGpuInstance_t,
        slices: c_uint,
        index: u32,
    ) -> Result<(), GpuError> {
        let ci_profile = match slices {
            1 => NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE,
            2 => NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE,
            3 => NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE,
            4 => NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE,
            6 => NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE,
            7 => NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE,
            _ => NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE,
        };
        // SAFETY: zeroed plain C struct as an out parameter; `gi` is live.
        let mut info: nvmlComputeInstanceProfileInfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            self.lib.nvmlGpuInstanceGetComputeInstanceProfileInfo(
                gi,
                ci_profile,
                NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED,
                &mut info,
            )
        };
        check(r, "nvmlGpuInstanceGetComputeInstanceProfileInfo", index)?;
        let mut ci: nvmlComputeInstance_t = ptr::null_mut();
        // SAFETY: `gi` is live; valid out pointer.
        let r = unsafe {
            self.lib
                .nvmlGpuInstanceCreateComputeInstance(gi, info.id, &mut ci)
        };
        check(r, "nvmlGpuInstanceCreateComputeInstance", index)
    }

    pub fn destroy(&self, index: u32, start: u8) -> Result<(), GpuError> {
        const CALL: &str = "nvmlGpuInstanceDestroy";
        let gi = self
            .list(index)?
            .into_iter()
            .find(|(_, f)| f.start == start)
            .map(|(gi, _)| gi)
            .ok_or_else(|| GpuError::mig(CALL, index, NOT_FOUND))?;
        // Compute instances first: NVML refuses to destroy a GPU instance that has any.
        for p in 0..NVML_COMPUTE_INSTANCE_PROFILE_COUNT {
            // SAFETY: zeroed plain C struct; `gi` is live.
            let mut info: nvmlComputeInstanceProfileInfo_t = unsafe { std::mem::zeroed() };
            let r = unsafe {
                self.lib.nvmlGpuInstanceGetComputeInstanceProfileInfo(
                    gi,
                    p,
                    NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED,
                    &mut info,
                )
            };
            if r != nvmlReturn_enum_NVML_SUCCESS {
                continue; // not a profile of this instance
            }
            let mut cis: Vec<nvmlComputeInstance_t> =
                vec![ptr::null_mut(); info.instanceCount.max(1) as usize];
            let mut count: c_uint = 0;
            // SAFETY: `cis` has room for `instanceCount` handles.
            let r = unsafe {
                self.lib.nvmlGpuInstanceGetComputeInstances(
                    gi,
                    info.id,
                    cis.as_mut_ptr(),
                    &mut count,
                )
            };
            check(r, "nvmlGpuInstanceGetComputeInstances", index)?;
            for &ci in cis.iter().take(count as usize) {
                // SAFETY: `ci` came from NVML just now.
                let r = unsafe { self.lib.nvmlComputeInstanceDestroy(ci) };
                check(r, "nvmlComputeInstanceDestroy", index)?;
            }
        }
        // SAFETY: `gi` is live and has no compute instance left.
        let r = unsafe { self.lib.nvmlGpuInstanceDestroy(gi) };
        check(r, CALL, index)
    }
}

impl Drop for NvmlMig {
    fn drop(&mut self) {
        // SAFETY: balances the successful nvmlInit_v2 of `load`.
        unsafe { self.lib.nvmlShutdown() };
    }
}

/// `1g.10gb`-style name from slices and MiB, for drivers without the versioned call:
/// memory rounded up to whole GB, as NVIDIA's profile names do.
fn profile_name(slices: c_uint, memory_mib: u64) -> String {
    format!("{slices}g.{}gb", memory_mib.div_ceil(1024))
}

fn check(r: nvmlReturn_t, call: &'static str, index: u32) -> Result<(), GpuError> {
    #[allow(non_upper_case_globals)]
    let code = match r {
        nvmlReturn_enum_NVML_SUCCESS => return Ok(()),
        nvmlReturn_enum_NVML_ERROR_NOT_SUPPORTED => NOT_SUPPORTED,
        nvmlReturn_enum_NVML_ERROR_INVALID_ARGUMENT => INVALID_ARGUMENT,
        nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_RESOURCES => INSUFFICIENT_RESOURCES,
        nvmlReturn_enum_NVML_ERROR_NOT_FOUND => NOT_FOUND,
        nvmlReturn_enum_NVML_ERROR_NO_PERMISSION => return Err(GpuError::NoPermission),
        nvmlReturn_enum_NVML_ERROR_IN_USE => "NVML_ERROR_IN_USE",
        _ => "NVML_ERROR_UNKNOWN",
    };
    Err(GpuError::mig(call, index, code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fallback_names_match_nvidias_profile_names() {
        // Memory sizes NVML reports for A100-40GB and 80 GB parts.
        assert_eq!(profile_name(1, 4864), "1g.5gb");
        assert_eq!(profile_name(1, 9856), "1g.10gb");
        assert_eq!(profile_name(3, 40192), "3g.40gb");
    }

    #[test]
    fn return_codes_become_the_documented_names() {
        assert!(check(nvmlReturn_enum_NVML_SUCCESS, "x", 0).is_ok());
        let e = check(nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_RESOURCES, "x", 0).unwrap_err();
        assert!(
            e.to_string().contains("NVML_ERROR_INSUFFICIENT_RESOURCES"),
            "{e}"
        );
        assert_eq!(
            check(nvmlReturn_enum_NVML_ERROR_NO_PERMISSION, "x", 0),
            Err(GpuError::NoPermission)
        );
    }

    #[test]
    fn loading_without_the_library_is_none_not_a_panic() {
        assert!(NvmlMig::load(OsStr::new("libnvidia-ml-does-not-exist.so")).is_none());
    }
}
