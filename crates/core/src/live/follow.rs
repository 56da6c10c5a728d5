//! Followers: a short waiting job queued on a busy node behind a running job of the same
//! kind, to start on that job's GPUs the moment it ends, with no round of the server in
//! between (HyperQueue's workers hold their next tasks the same way).
//!
//! Why: on the live cluster every start otherwise waits for a round trip after the end
//! it replaces (the agent reports, the server commits and passes, the agent polls). For
//! jobs of a few milliseconds that round is most of the cost of a job, on the server and
//! on the agent, and it caps the rate at which one GPU turns over. A follower is decided
//! ahead, so the agent starts it at once and reports ends and starts in batches.
//!
//! The rules keep the policy's decisions:
//! - **Only the head of the queue follows.** Waiting jobs are taken in the pass's order
//!   and the first one that cannot follow stops the walk, so no job passes one ranked
//!   before it: each follower is the job the next pass would have started on the GPUs
//!   its predecessor frees, as far as the queue stands now.
//! - **Only a job of the same kind**: same user, queue, GPUs, model, CPUs, memory and
//!   generic resources, and group (`group.rs`: an array with a `%K` limit follows only
//!   its own tasks). So a follower changes no queue or user cap and no `%K` count when
//!   it takes over: it holds exactly what its predecessor held.
//! - **Only short jobs, a few deep**: a job follows only with an estimate (walltime or
//!   prediction) of at most [`FollowConfig::under`], and at most [`FollowConfig::depth`]
//!   wait behind one running job. A job ranked higher that arrives after a follow was
//!   made waits for at most `depth` such jobs on that GPU set: the price of deciding
//!   ahead, bounded and small. (The predictor's finest bucket is a second, so the bound
//!   is in jobs of at most `under`, not a sum of their estimates.)
//! - **Only on one node, whole GPUs**, and only on nodes whose agent knows followers.
//! - **Never a serving job** (a replica of an inference service), as follower or as the
//!   job followed: a replica runs until it is stopped, so a job behind it would wait
//!   for that, and a replica must not wait for another job's end.
//! - **Only behind a job that is still short**: one that has run longer than `under`
//!   takes no new follower (its kind's estimate was wrong for it). A follower queued in
//!   the first `under` seconds of a job that then runs long still waits for it (at most
//!   `depth` of them): the server cannot take a follower back without a round trip that
//!   proves the agent has not started it (see docs/live-cluster.md).
//!
//! A follower is out of the waiting queue (no pass places it elsewhere) and holds
//! nothing until its predecessor leaves: [`LiveCluster::remove`] hands the predecessor's
//! placement to it in the same step (the GPUs never come free), [`LiveCluster::requeue`]
//! (a run lost, preempted or stopped) sends its followers back to the queue in their
//! order, and a follower removed itself (cancelled) leaves the one behind it to follow
//! its predecessor.

use std::cmp::Reverse;
use std::collections::{btree_map, BTreeMap, BinaryHeap};

use super::cluster::{LiveCluster, LivePlacement};
use super::group::JobGroup;
use crate::{JobSpec, QueueId, SchedJob, Seconds, UserId};

/// When jobs may follow (`None` on the live cluster: never).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FollowConfig {
    /// A job follows only with an estimate (walltime or prediction) of at most this.
    pub under: Seconds,
    /// Followers queued behind one running job, at most (at least 1).
    pub depth: u32,
}

/// A follow a pass decided: `job` starts on `node`'s `gpus` as soon as `after` (the
/// running job, or the follower before it) ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Follow {
    pub job: u64,
    pub after: u64,
    pub node: String,
    pub gpus: Vec<u32>,
}

/// The followers, each out of the waiting queue.
#[derive(Default)]
pub(super) struct Followers {
    pub(super) config: Option<FollowConfig>,
    /// The follower queued behind each job (a running job or a follower).
    behind: BTreeMap<u64, SchedJob>,
    /// Each follower's predecessor.
    after: BTreeMap<u64, u64>,
}

impl Followers {
    fn is_empty(&self) -> bool {
        self.behind.is_empty()
    }

    fn link(&mut self, after: u64, job: SchedJob) {
        self.after.insert(job.spec.id.0, after);
        self.behind.insert(after, job);
    }

    /// Takes the chain behind `id` out, first follower first.
    fn take_chain(&mut self, id: u64) -> Vec<SchedJob> {
        let mut chain = Vec::new();
        let mut at = id;
        while let Some(j) = self.behind.remove(&at) {
            at = j.spec.id.0;
            self.after.remove(&at);
            chain.push(j);
        }
        chain
    }

    /// How many wait behind `id`.
    fn chain_len(&self, id: u64) -> u32 {
        let mut n = 0;
        let mut at = id;
        while let Some(j) = self.behind.get(&at) {
            at = j.spec.id.0;
            n += 1;
        }
        n
    }

    /// The last job of the chain `id` heads (`id` when nobody follows it).
    fn chain_end(&self, id: u64) -> u64 {
        let mut at = id;
        while let Some(j) = self.behind.get(&at) {
            at = j.spec.id.0;
        }
        at
    }

    /// The ids queued behind `id`, in order.
    fn chain_ids(&self, id: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let mut at = id;
        while let Some(j) = self.behind.get(&at) {
            at = j.spec.id.0;
            out.push(at);
        }
        out
    }
}

/// The first part of a [`Kind`]: user, queue and GPUs, the index a round's follows look
/// running jobs up by.
type Bucket = (UserId, QueueId, u32);

fn bucket(s: &JobSpec) -> Bucket {
    (s.user, s.queue, s.gpus)
}

/// A chain that can take one more follower: its last job, and where its head runs.
struct OpenChain {
    end: u64,
    node: String,
    gpus: Vec<u32>,
}

/// Everything a follower must share with the job it follows (see the module's doc).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Kind {
    bucket: Bucket,
    model: Option<String>,
    cpu_milli: u64,
    mem_mib: u64,
    generic: BTreeMap<String, u64>,
    group: Option<u64>,
    /// Node sets (`crate::eligible`): a job follows only one with the same, so the
    /// head's node is one it may use.
    nodes: Vec<crate::eligible::NodeMask>,
}

impl Kind {
    fn of(s: &JobSpec, groups: &BTreeMap<u64, JobGroup>) -> Kind {
        Kind {
            bucket: bucket(s),
            model: s.gpu_model.clone(),
            cpu_milli: s.cpu_milli,
            mem_mib: s.mem_mib,
            generic: s.generic.clone(),
            group: groups.get(&s.id.0).map(|g| g.id),
            nodes: s.nodes.clone(),
        }
    }
}

/// The open chains of one kind, and the order they take followers in: the shortest
/// chain, then the head that started first, then the lowest id (`(length, start's
/// bits, head, index into chains)`, smallest first).
#[derive(Default)]
struct Chains {
    chains: Vec<OpenChain>,
    order: BinaryHeap<Reverse<(u32, u64, u64, usize)>>,
}

type Kinds = BTreeMap<Kind, Chains>;

impl LiveCluster {
    /// Lets short jobs follow running ones (`None`: never, the default). Only for a
    /// scheduler that does not keep an ordered queue (the live server's).
    pub fn set_follow(&mut self, config: Option<FollowConfig>) {
        self.followers.config = config.map(|c| FollowConfig {
            depth: c.depth.max(1),
            ..c
        });
    }

    /// The job `id` follows (the running job or the follower before it), if it is a
    /// follower.
    pub fn following(&self, id: u64) -> Option<u64> {
        self.followers.after.get(&id).copied()
    }

    /// The node a follower waits on: where the running job at the head of its chain
    /// holds GPUs. `None` for a job that follows nobody.
    pub fn follow_node(&self, id: u64) -> Option<String> {
        let mut at = self.following(id)?;
        while let Some(p) = self.following(at) {
            at = p;
        }
        let placed = self.jobs[self.find(at)?].placement.as_ref()?;
        let node = placed.parts.first()?.0;
        Some(self.nodes.get(node.index())?.name.clone())
    }

    /// The followers queued behind the running job `id`, first to start first.
    pub fn followers_of(&self, id: u64) -> Vec<u64> {
        if self.followers.is_empty() {
            return Vec::new();
        }
        self.followers.chain_ids(id)
    }

    /// How many followers of `job`'s kind the running jobs could still take (what an
    /// array offers as followers besides its starts).
    pub fn open_follow_slots(&self, job: &super::LiveJob) -> u64 {
        let Some(cfg) = self.followers.config else {
            return 0;
        };
        if job.slice.is_some() || job.gang.is_some() || job.gpus == 0 || job.rules.is_some() {
            return 0;
        }
        let Some(&user) = self.users.get(&job.user) else {
            return 0;
        };
        let kind = Kind {
            bucket: (user, job.queue, job.gpus),
            model: job.model.clone(),
            cpu_milli: job.cpu_milli,
            mem_mib: job.mem_mib,
            generic: job.resources.clone(),
            group: job.group.map(|g| g.id),
            nodes: Vec::new(),
        };
        self.open_heads(cfg, kind.bucket)
            .filter(|(j, _)| Kind::of(&j.spec, &self.groups) == kind)
            .map(|(_, len)| u64::from(cfg.depth - len))
            .sum()
    }

    /// The running jobs of bucket `b` that could take a follower, with their chains'
    /// lengths: one node, whole GPUs none of which is out of placement, a node whose
    /// agent follows and that is not drained, not asked to stop, chain not full. One
    /// walk of the running jobs, allocating nothing for those of other buckets.
    fn open_heads(
        &self,
        cfg: FollowConfig,
        b: Bucket,
    ) -> impl Iterator<Item = (&SchedJob, u32)> + '_ {
        self.jobs.iter().filter_map(move |j| {
            if !j.running
                || bucket(&j.spec) != b
                || j.spec.gang.is_some()
                || j.spec.gpus == 0
                || self.serving.contains(&j.spec.id.0)
            {
                return None;
            }
            let [(n, _)] = j.placement.as_ref()?.parts[..] else {
                return None;
            };
            let node = self.nodes.get(n.index())?;
            let id = j.spec.id.0;
            if !node.follows || node.closed() || self.preempts.contains(&id) {
                return None;
            }
            let len = self.followers.chain_len(id);
            if len >= cfg.depth {
                return None;
            }
            // A job that has already run longer than a follower may (as of this pass's
            // accounting) is not short, whatever its kind's estimate said: a job queued
            // behind it could wait for minutes while GPUs it fits come free elsewhere,
            // where the queue would place it at the next pass.
            if j.attained > cfg.under {
                return None;
            }
            // No new follower onto a GPU out of placement (unhealthy): it gets nothing new.
            let book = self.book.get(&node.name)?;
            if !book.out.is_empty() && book.whole_of(id).iter().any(|g| book.out.contains(g)) {
                return None;
            }
            Some((j, len))
        })
    }

    /// The chains of bucket `b` that could take a follower (see [`Self::open_heads`]),
    /// by the whole kind of their head.
    fn open_chains(&self, cfg: FollowConfig, b: Bucket) -> Kinds {
        let mut kinds = Kinds::new();
        for (j, len) in self.open_heads(cfg, b) {
            let id = j.spec.id.0;
            let Some(p) = j.placement.as_ref() else {
                continue;
            };
            let Some(node) = self.nodes.get(p.parts[0].0.index()).map(|n| &n.name) else {
                continue;
            };
            let Some(book) = self.book.get(node) else {
                continue;
            };
            let chains = kinds.entry(Kind::of(&j.spec, &self.groups)).or_default();
            let k = chains.chains.len();
            // Starts are non-negative: their bits order as they do.
            let started = j.first_start.unwrap_or(0.0).max(0.0).to_bits();
            chains.order.push(Reverse((len, started, id, k)));
            chains.chains.push(OpenChain {
                end: self.followers.chain_end(id),
                node: node.clone(),
                gpus: book.whole_of(id),
            });
        }
        kinds
    }

    /// After a pass: queues the waiting jobs at the head of the queue behind running jobs
    /// of their kind, in the pass's order, until one cannot follow (see the module's
    /// doc). Each follower leaves the waiting queue. Returns the follows made, in order.
    /// A job without an estimate follows on `guess` of its run time (the live server's
    /// prediction now, for a job queued before the cluster knew jobs like it), which
    /// does not become its estimate.
    pub fn follow_pass(&mut self, guess: impl Fn(u64) -> Option<Seconds>) -> Vec<Follow> {
        let Some(cfg) = self.followers.config else {
            return Vec::new();
        };
        // The waiting jobs in the pass's order, taken from the head while they follow;
        // the running jobs of a bucket are looked at once, when a job of it comes.
        let waiting = InOrder::new(
            self.jobs
                .iter()
                .filter(|j| !j.running)
                .map(|j| (j.rank, j.spec.id.0))
                .collect(),
        );
        let mut open: BTreeMap<Bucket, Kinds> = BTreeMap::new();
        let mut follows = Vec::new();
        for (_, id) in waiting {
            let Some(i) = self.find(id) else { break };
            let spec = &self.jobs[i].spec;
            let estimate = spec.estimate.or_else(|| guess(id));
            // A job with node sets (rules, reservations' windows) never follows: the
            // head's node may be one it must not use by the time the head ends.
            if !estimate.is_some_and(|e| e <= cfg.under)
                || !spec.nodes.is_empty()
                || spec.gang.is_some()
                || spec.gpus == 0
                || self.claims.contains_key(&id)
                || self.serving.contains(&id)
            {
                break;
            }
            let b = bucket(spec);
            let kinds = match open.entry(b) {
                btree_map::Entry::Occupied(e) => e.into_mut(),
                btree_map::Entry::Vacant(v) => v.insert(self.open_chains(cfg, b)),
            };
            let Some(chains) = kinds.get_mut(&Kind::of(spec, &self.groups)) else {
                break;
            };
            // The shortest chain, then the head that started first, then the lowest id.
            let Some(Reverse((len, started, head, k))) = chains.order.pop() else {
                break;
            };
            let c = &mut chains.chains[k];
            follows.push(Follow {
                job: id,
                after: c.end,
                node: c.node.clone(),
                gpus: c.gpus.clone(),
            });
            c.end = id;
            if len + 1 < cfg.depth {
                chains.order.push(Reverse((len + 1, started, head, k)));
            }
        }
        self.take_followers(&follows);
        follows
    }

    /// Moves the jobs of `follows` out of the waiting queue, each behind its `after`, one
    /// removal each: the list shifts its shorter side (`JobList`), and followers come from
    /// the head of the pass's order, usually the oldest jobs, at its front. Taking every
    /// job out and putting the rest back instead cost each round that made a follow a
    /// copy of the whole queue: with 10,000 jobs waiting, most of the server's work per job
    /// (docs/benchmarks-log.md (zj)).
    fn take_followers(&mut self, follows: &[Follow]) {
        for f in follows {
            if let Some(i) = self.find(f.job) {
                let job = self.jobs.remove(i);
                self.followers.link(f.after, job);
            }
        }
    }

    /// Puts a job loaded after a restart back behind `after` (a running job, or a
    /// follower restored before it). False, and it stays waiting, when `after` is
    /// neither, already has a follower, or is not of the job's kind.
    pub fn restore_follow(&mut self, id: u64, after: u64) -> bool {
        let Some(i) = self.find(id) else {
            return false;
        };
        if self.jobs[i].running || self.followers.behind.contains_key(&after) {
            return false;
        }
        let head = self.chain_head(after);
        let Some(h) = self.find(head).filter(|&h| self.jobs[h].running) else {
            return false;
        };
        let one_node = self.jobs[h]
            .placement
            .as_ref()
            .is_some_and(|p| p.parts.len() == 1);
        let groups = &self.groups;
        if !one_node || Kind::of(&self.jobs[i].spec, groups) != Kind::of(&self.jobs[h].spec, groups)
        {
            return false;
        }
        let job = self.jobs.remove(i);
        self.followers.link(after, job);
        true
    }

    /// The running job at the head of the chain `id` is in (`id` itself if it follows
    /// nobody).
    fn chain_head(&self, id: u64) -> u64 {
        let mut at = id;
        while let Some(&p) = self.followers.after.get(&at) {
            at = p;
        }
        at
    }

    /// The first follower behind `id`, which ended: it takes `id`'s GPUs (`node`,
    /// `gpus`) and room now. `None` when nobody follows `id`. A follower that could not
    /// take them (never: it asks for what `id` held) goes back to the queue with the rest
    /// of the chain, all named in `Err`.
    pub(super) fn hand_over(
        &mut self,
        id: u64,
        node: &str,
        gpus: &[u32],
        placement: crate::Placement,
        now: Seconds,
    ) -> Option<Result<LivePlacement, Vec<u64>>> {
        let mut next = self.followers.behind.remove(&id)?;
        let nid = next.spec.id.0;
        self.followers.after.remove(&nid);
        let taken = self
            .book
            .get_mut(node)
            .is_some_and(|b| b.take_whole(nid, gpus));
        if taken && self.scheduler.start_at(&mut next, placement, now) {
            self.jobs.insert(next);
            return Some(Ok(LivePlacement {
                job: nid,
                parts: vec![super::NodePart {
                    node: node.to_string(),
                    gpus: gpus.to_vec(),
                    slice: None,
                }],
            }));
        }
        if taken {
            if let Some(b) = self.book.get_mut(node) {
                b.release(nid);
            }
        }
        let mut back = vec![next];
        back.extend(self.followers.take_chain(nid));
        let ids = back.iter().map(|j| j.spec.id.0).collect();
        self.unfollow(back, now);
        Some(Err(ids))
    }

    /// `id` left without handing over (a run lost, preempted or stopped, or a waiting
    /// job removed): the followers behind it go back to the queue. A follower that leaves
    /// itself is unlinked: the one behind it follows its predecessor. Returns the jobs
    /// sent back to the queue.
    pub(super) fn drop_follows(&mut self, id: u64, now: Seconds) -> Vec<u64> {
        if self.followers.is_empty() {
            return Vec::new();
        }
        if let Some(pred) = self.followers.after.remove(&id) {
            self.followers.behind.remove(&pred);
            if let Some(next) = self.followers.behind.remove(&id) {
                self.followers.link(pred, next);
            }
            return Vec::new();
        }
        let chain = self.followers.take_chain(id);
        let ids = chain.iter().map(|j| j.spec.id.0).collect();
        self.unfollow(chain, now);
        ids
    }

    /// Takes follower `id` out of its chain (the one behind it moves up) and puts it back
    /// in the waiting queue in its place. False when `id` follows nobody.
    pub fn send_back(&mut self, id: u64, now: Seconds) -> bool {
        let Some(pred) = self.followers.after.remove(&id) else {
            return false;
        };
        let Some(job) = self.followers.behind.remove(&pred) else {
            return false;
        };
        if let Some(next) = self.followers.behind.remove(&id) {
            self.followers.link(pred, next);
        }
        self.unfollow(vec![job], now);
        true
    }

    /// Followers back in the waiting queue, with the ranks they had (their place).
    fn unfollow(&mut self, chain: Vec<SchedJob>, now: Seconds) {
        for mut j in chain {
            j.account(now);
            self.jobs.insert(j);
        }
    }

    /// Whether `id` is a follower (so out of the waiting queue).
    pub(super) fn is_follower(&self, id: u64) -> bool {
        self.followers.after.contains_key(&id)
    }
}

/// Keys taken smallest first, where usually only the first few are taken (the follow
/// pass stops at the first waiting job that cannot follow): the next ones are picked out
/// of the rest a chunk at a time (a selection, then a sort of the chunk, chunks
/// doubling), so a round with 10,000 waiting jobs does not order them all. Building a
/// heap of every waiting job was most of the server's work per job in a 10,000-job
/// batch (docs/benchmarks-log.md (zj)). Keys are distinct, so the order is the one a
/// full sort gives.
struct InOrder {
    keys: Vec<(u64, u64)>,
    /// `keys[..sorted]` are the smallest, in order.
    sorted: usize,
    next: usize,
    chunk: usize,
}

impl InOrder {
    fn new(keys: Vec<(u64, u64)>) -> Self {
        InOrder {
            keys,
            sorted: 0,
            next: 0,
            chunk: 32,
        }
    }
}

impl Iterator for InOrder {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        if self.next == self.sorted {
            let rest = &mut self.keys[self.sorted..];
            if rest.is_empty() {
                return None;
            }
            let take = self.chunk.min(rest.len());
            if take < rest.len() {
                rest.select_nth_unstable(take - 1);
            }
            rest[..take].sort_unstable();
            self.sorted += take;
            self.chunk = self.chunk.saturating_mul(2);
        }
        let key = self.keys[self.next];
        self.next += 1;
        Some(key)
    }
}

#[cfg(test)]
#[path = "follow_tests.rs"]
mod tests;
