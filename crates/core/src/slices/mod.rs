//! Parts of GPUs on a live cluster: shares of a GPU and MIG instances, placed by the same
//! code the sharing simulator measures.
//!
//! - [`mig`]: a MIG GPU's layout (which memory slices its GPU instances take), and the
//!   ways a profile can be placed on it, each with a cost: an idle instance that already
//!   exists costs nothing, creating one in free slices costs a re-layout, and destroying
//!   idle instances to make room costs more. A GPU whose layout is static offers only
//!   the first kind.
//! - [`share`]: which GPU a share of one GPU goes to, by the simulator's strategies
//!   (`best-fit`, `worst-fit`, `fgd`, ...) over the live cluster's free GPU thousandths,
//!   with the recent demand ([`crate::sharing::demand`]) as FGD's target workload.
//!
//! The whole-GPU scheduler never sees a GPU in MIG mode, and a GPU that holds shares is
//! taken out of its free map while it does (see [`crate::live`]).

pub mod mig;
pub mod share;

pub use mig::{span_mask, MigGpu, MigOption, MigSlot};
pub use share::{choose_share, ShareGpu, ShareHost};
