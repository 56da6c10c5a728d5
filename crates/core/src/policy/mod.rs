//! Which job goes first: the named scheduling policies.
//!
//! | name | preemptive | order |
//! |---|---|---|
//! | `fifo` | no | submit time; strict: the head job blocks the ones behind it |
//! | `priority` | no | priority, plus `aging_per_hour` for every hour waited; strict |
//! | `sjf` | no | the run-time estimate (jobs without one go last); strict |
//! | `srtf` | yes | shortest remaining time |
//! | `srsf` | yes | shortest remaining GPU-service (remaining time x GPUs) |
//! | `tiresias` | yes | discretized two-dimensional least-attained-service |
//! | `drf` | no | the tenant with the smallest weighted dominant share goes next |
//! | `backfill` | no | `fifo` with EASY backfilling on estimates |
//! | `blend` | yes | expected remaining GPU-service given the prediction and attained service ([`blend`]) |
//! | `fairtree` | no | the association's Fair Tree factor over an account tree ([`fairtree`]), then as `priority` |
//!
//! Preemptive policies decide each pass which jobs should run, in their order, from an
//! idle cluster; running jobs left out are preempted (see [`crate::schedule`]).

pub mod backfill;
pub mod backfill_nodes;
pub mod blend;
pub mod drf;
pub mod fairtree;
pub mod guard;
pub mod order;
pub mod queue;
pub mod ranked;
pub mod rr;
pub mod tiresias;

use std::collections::BTreeMap;

use crate::Seconds;

/// The policies gpusched knows.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PolicyKind {
    Fifo,
    Priority,
    Sjf,
    Srtf,
    Srsf,
    Tiresias,
    Drf,
    Backfill,
    Blend,
    FairTree,
    /// Earliest deadline first (`crate::deadline`): jobs with a deadline by deadline,
    /// then the others by submit time; preemptive (a job due sooner stops one due later
    /// or a best-effort one, through the checkpoint contract).
    Edf,
    /// The same order without preemption, with `backfill`'s pass: the first job that
    /// does not fit reserves its GPUs and later ones (best-effort jobs among them) start
    /// only where they do not delay it.
    EdfBackfill,
    /// Round-robin time slicing (Gandiva's; [`rr`]): a running job that has had its
    /// quantum makes way for the jobs that have waited longest, through the checkpoint
    /// contract.
    Rr,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 13] = [
        PolicyKind::Fifo,
        PolicyKind::Priority,
        PolicyKind::Sjf,
        PolicyKind::Srtf,
        PolicyKind::Srsf,
        PolicyKind::Tiresias,
        PolicyKind::Drf,
        PolicyKind::Backfill,
        PolicyKind::Blend,
        PolicyKind::FairTree,
        PolicyKind::Edf,
        PolicyKind::EdfBackfill,
        PolicyKind::Rr,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Fifo => "fifo",
            PolicyKind::Priority => "priority",
            PolicyKind::Sjf => "sjf",
            PolicyKind::Srtf => "srtf",
            PolicyKind::Srsf => "srsf",
            PolicyKind::Tiresias => "tiresias",
            PolicyKind::Drf => "drf",
            PolicyKind::Backfill => "backfill",
            PolicyKind::Blend => "blend",
            PolicyKind::FairTree => "fairtree",
            PolicyKind::Edf => "edf",
            PolicyKind::EdfBackfill => "edf-backfill",
            PolicyKind::Rr => "rr",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether the policy orders by deadline (`edf`, `edf-backfill`).
    pub fn deadlines(self) -> bool {
        matches!(self, PolicyKind::Edf | PolicyKind::EdfBackfill)
    }

    /// Whether the pass backfills behind a reservation (`backfill`, `edf-backfill`).
    pub fn backfills(self) -> bool {
        matches!(self, PolicyKind::Backfill | PolicyKind::EdfBackfill)
    }

    /// Whether the policy can take turns ([`PolicyConfig::time_slice`]): its order is
    /// one key per job, so the preemptive pass can keep it. Not `drf` and `fairtree`
    /// (the next tenant depends on what the others hold), the backfilling policies (a
    /// reservation, not an order), `tiresias` (its queues are rebuilt from the pass's
    /// order, and its queue limits are its own slices), `edf` (its plan replays its own
    /// preemptions) nor `rr` (turns are its order already).
    pub fn sliceable(self) -> bool {
        matches!(
            self,
            PolicyKind::Fifo
                | PolicyKind::Priority
                | PolicyKind::Sjf
                | PolicyKind::Srtf
                | PolicyKind::Srsf
                | PolicyKind::Blend
        )
    }

    /// Why `--time-slice` is refused under this policy, if it is (the server's and the
    /// simulator's words).
    pub fn slice_refusal(self) -> Option<String> {
        (!self.sliceable()).then(|| {
            format!(
                "--time-slice: policy `{}` cannot take turns (its order is not one key per \
                 job); use it with fifo, priority, sjf, srtf, srsf or blend, or --policy rr",
                self.name()
            )
        })
    }

    /// Whether the policy may stop a running job to start another.
    pub fn preemptive(self) -> bool {
        matches!(
            self,
            PolicyKind::Srtf
                | PolicyKind::Srsf
                | PolicyKind::Tiresias
                | PolicyKind::Blend
                | PolicyKind::Edf
                | PolicyKind::Rr
        )
    }
}

/// `blend`'s default [`PolicyConfig::promote_after`]: off. Every bound measured (K = 2,
/// 10, 50) made `blend`'s average JCT far worse on the Muri traces without bringing its
/// p99 to Tiresias' everywhere (docs/scheduling-results.md, issue 37).
pub const BLEND_PROMOTE_AFTER: f64 = 0.0;

/// Whose share `drf` balances.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Tenant {
    User,
    Queue,
}

/// A policy and its knobs. `Default` gives the values documented on each field.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyConfig {
    pub kind: PolicyKind,
    /// `priority`: points of priority gained per hour of waiting (default 1), so that
    /// nothing starves.
    pub aging_per_hour: f64,
    /// `tiresias`: attained-GPU-service limits of each queue but the last, in
    /// GPU-seconds (default 3250, 7200: three queues, the Tiresias simulator's values).
    pub las_limits: Vec<Seconds>,
    /// `tiresias`: a job in a lower queue that has waited `starvation` times its attained
    /// service is promoted back to the first queue; 0 turns promotion off (default 0,
    /// as in the Tiresias simulator's `dlas-gpu` runs).
    pub starvation: f64,
    /// `srtf`, `srsf`, `blend`: the starvation guard ([`guard`]): a job that has run and
    /// then waited `promote_after` times the service it attained since its last
    /// promotion is promoted: from then on it ranks no later than by that service alone
    /// (least attained service restarted), as Tiresias' promotion; 0 turns it off.
    /// Default [`BLEND_PROMOTE_AFTER`] (off) for `blend`, 0 for the others (they
    /// reproduce their peers' simulators as they were).
    pub promote_after: f64,
    /// `srtf`, `srsf`, `blend`: the long-job class ([`guard::long_class`]): a job whose
    /// attained GPU-service has reached this many GPU-seconds goes behind every job that
    /// has not, and the jobs past it are served first come, first served (Tiresias'
    /// last queue); 0 turns it off (default 0).
    pub fifo_after: Seconds,
    /// `drf`: the tenants to balance (default users).
    pub tenant: Tenant,
    /// `drf`: weight per tenant number; absent tenants weigh 1.
    pub weights: BTreeMap<u32, f64>,
    /// `drf`: remember past use, halving its weight every this many seconds; a tenant's
    /// share is then its GPUs now plus its decayed GPU-seconds over the half-life. None
    /// (default): only what runs now counts.
    pub usage_half_life: Option<Seconds>,
    /// `backfill`: reserve the head job's GPUs on the node where it fits earliest, and
    /// never let a job without an estimate past the reservation
    /// ([`backfill_nodes`]); off (default): the cluster-wide reservation of
    /// [`backfill`]. On in the live server.
    pub backfill_nodes: bool,
    /// `fairtree`: the account tree and the usage half-life (default: only the root, 7
    /// days).
    pub fair_tree: fairtree::FairTreeConfig,
    /// `edf`, `edf-backfill`: a job that can no longer make its deadline by what is known
    /// of its run time goes behind those that can ([`crate::deadline`]; default on;
    /// off: textbook EDF, the baseline).
    pub deadline_demote: bool,
    /// `rr`: seconds a job runs before it makes way for a waiting one (default 3600);
    /// with [`PolicyConfig::time_slice`], the turn of every other policy.
    pub rr_quantum: Seconds,
    /// Time slicing under a policy other than `rr` ([`rr::slice`]): while jobs wait, a
    /// running job that has had its turn of `rr_quantum` makes way, the waiting jobs
    /// take the GPUs in the policy's order, and no turn is cut short. Only for the
    /// policies whose order is one key per job ([`PolicyKind::sliceable`]; default off).
    pub time_slice: bool,
}

impl PolicyConfig {
    pub fn new(kind: PolicyKind) -> Self {
        PolicyConfig {
            kind,
            aging_per_hour: 1.0,
            las_limits: vec![3250.0, 7200.0],
            starvation: 0.0,
            promote_after: if kind == PolicyKind::Blend {
                BLEND_PROMOTE_AFTER
            } else {
                0.0
            },
            fifo_after: 0.0,
            tenant: Tenant::User,
            weights: BTreeMap::new(),
            usage_half_life: None,
            backfill_nodes: false,
            fair_tree: fairtree::FairTreeConfig::default(),
            deadline_demote: true,
            rr_quantum: 3600.0,
            time_slice: false,
        }
    }

    /// Whether the pass takes turns ([`PolicyConfig::time_slice`] under a policy that
    /// can).
    pub fn sliced(&self) -> bool {
        self.time_slice
            && self.kind.sliceable()
            && self.rr_quantum > 0.0
            && self.rr_quantum.is_finite()
    }

    /// How long a turn is when the jobs take turns (`rr`, or [`Self::sliced`]): a job
    /// holds its GPUs at most this long while others wait. None when they do not.
    pub fn turn(&self) -> Option<Seconds> {
        let q = self.rr_quantum;
        ((self.kind == PolicyKind::Rr || self.sliced()) && q > 0.0 && q.is_finite()).then_some(q)
    }

    /// Whether a pass may stop a running job to start another: the policy is
    /// preemptive, or it takes turns.
    pub fn preemptive(&self) -> bool {
        self.kind.preemptive() || self.sliced()
    }
}
