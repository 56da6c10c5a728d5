//! Newtypes for identifiers, so a GPU count can never be passed where a job id is
//! expected. Every id is made by one macro.

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident($inner:ty)) => {
        $(#[$doc])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub $inner);

        impl $name {
            /// The raw value, for indexing and printing.
            pub fn get(self) -> $inner {
                self.0
            }
            /// The raw value as a vector index.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A job, unique within one cluster (or one trace).
    JobId(u64)
);
id_type!(
    /// A node (host) of the cluster, dense from 0.
    NodeId(u32)
);
id_type!(
    /// A network switch grouping nodes, dense from 0.
    SwitchId(u32)
);
id_type!(
    /// The index of a GPU inside its node, as NVML numbers them.
    GpuIndex(u32)
);
id_type!(
    /// A user (tenant), interned to a dense number by whoever builds the workload.
    UserId(u32)
);
id_type!(
    /// A queue or virtual cluster, interned to a dense number.
    QueueId(u32)
);
