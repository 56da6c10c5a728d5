//! The Fair Tree rule, transcript style: a tree and usage written as text, the
//! standings printed as the `accounts` command shows them (depth first, best first).
//!
//! Input lines: `account NAME PARENT SHARES`, `user NAME ACCOUNT SHARES`,
//! `usage USER@ACCOUNT GPU_SECONDS` (an undeclared user counts with 1 share).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::panic::Location;

use super::rank::{standings, Standings};
use super::usage::Usage;
use super::*;
use crate::cluster::Cluster;
use crate::job::JobSpec;
use crate::placement::PlacementStrategy;
use crate::schedule::{Decision, PreemptMode, SchedJob, Scheduler};
use crate::{JobId, PolicyConfig, PolicyKind, QueueId};

struct World {
    tree: AccountTree,
    users: Vec<String>,
    usage: BTreeMap<Assoc, f64>,
}

fn world(text: &str) -> World {
    let mut w = World {
        tree: AccountTree::default(),
        users: Vec::new(),
        usage: BTreeMap::new(),
    };
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f[0] {
            "account" => {
                let parent = w.account(f[2]);
                w.tree.add(f[1], parent, f[3].parse().unwrap());
            }
            "user" => {
                let a = w.assoc(&format!("{}@{}", f[1], f[2]));
                w.tree.users.insert(a, f[3].parse().unwrap());
            }
            "usage" => {
                let a = w.assoc(f[1]);
                w.usage.insert(a, f[2].parse().unwrap());
            }
            other => panic!("unknown line {other}"),
        }
    }
    w
}

impl World {
    fn account(&self, name: &str) -> AccountId {
        if name == "root" {
            return AccountId::ROOT;
        }
        let i = self.tree.accounts.iter().position(|a| a.name == name);
        AccountId(i.unwrap_or_else(|| panic!("no account {name}")) as u32)
    }

    fn assoc(&mut self, at: &str) -> Assoc {
        let (user, account) = at.split_once('@').unwrap();
        let u = match self.users.iter().position(|x| x == user) {
            Some(i) => i,
            None => {
                self.users.push(user.into());
                self.users.len() - 1
            }
        };
        Assoc {
            account: self.account(account),
            user: crate::UserId(u as u32),
        }
    }

    /// The tree depth first, siblings in id order, each with its standing.
    fn show(&self, s: &Standings) -> String {
        let mut out = String::new();
        self.show_account(s, AccountId::ROOT, 0, &mut out);
        out
    }

    fn show_account(&self, s: &Standings, id: AccountId, depth: usize, out: &mut String) {
        let a = &s.accounts[id.0 as usize];
        let pad = "  ".repeat(depth);
        let name = &self.tree.accounts[id.0 as usize].name;
        let _ = writeln!(
            out,
            "{pad}{name}: usage {} shares {:.3} norm-usage {:.3} level {}",
            a.usage,
            a.norm_shares,
            a.norm_usage,
            lf(a.level_fs)
        );
        for c in self.tree.children(id) {
            self.show_account(s, c, depth + 1, out);
        }
        for (assoc, u) in s.users.iter().filter(|(a, _)| a.account == id) {
            let _ = writeln!(
                out,
                "{pad}  {}: shares {:.3} norm-usage {:.3} level {} rank {} factor {:.3}",
                self.users[assoc.user.index()],
                u.norm_shares,
                u.norm_usage,
                lf(u.level_fs),
                u.rank,
                u.factor
            );
        }
    }
}

fn lf(v: f64) -> String {
    if v.is_infinite() {
        "inf".into()
    } else {
        format!("{v:.3}")
    }
}

#[track_caller]
fn run(input: &str, expected: &str) {
    let w = world(input);
    let s = standings(&w.tree, &w.usage, []);
    gpusched_expect::check(Location::caller(), "fair tree", expected, &w.show(&s));
}

#[test]
fn the_worked_example_of_docs_accounts() {
    // physics holds 60 % of the shares and used 75 % of the GPU time: its level fair
    // share is 0.8, chem's (40 % for 25 %) 1.6, so every chem user ranks above every
    // physics user, however little one physics user used.
    run(
        "
        account physics root 60
        account chem root 40
        account theory physics 1
        account lab physics 1
        user ann theory 1
        user bob theory 1
        user cat lab 1
        user dan chem 3
        user eve chem 1
        usage ann@theory 600
        usage cat@lab 150
        usage dan@chem 100
        usage eve@chem 150
        ",
        "
        root: usage 1000 shares 1.000 norm-usage 1.000 level 1.000
          physics: usage 750 shares 0.600 norm-usage 0.750 level 0.800
            theory: usage 600 shares 0.500 norm-usage 0.800 level 0.625
              ann: shares 0.500 norm-usage 1.000 level 0.500 rank 1 factor 0.200
              bob: shares 0.500 norm-usage 0.000 level inf rank 2 factor 0.400
            lab: usage 150 shares 0.500 norm-usage 0.200 level 2.500
              cat: shares 1.000 norm-usage 1.000 level 1.000 rank 3 factor 0.600
          chem: usage 250 shares 0.400 norm-usage 0.250 level 1.600
            dan: shares 0.750 norm-usage 0.400 level 1.875 rank 5 factor 1.000
            eve: shares 0.250 norm-usage 0.600 level 0.417 rank 4 factor 0.800
        ",
    );
}

#[test]
fn without_usage_everyone_ties_at_the_top() {
    run(
        "
        account a root 1
        account b root 3
        user x a 1
        user y b 1
        user z b 5
        ",
        "
        root: usage 0 shares 1.000 norm-usage 1.000 level 1.000
          a: usage 0 shares 0.250 norm-usage 0.000 level inf
            x: shares 1.000 norm-usage 0.000 level inf rank 3 factor 1.000
          b: usage 0 shares 0.750 norm-usage 0.000 level inf
            y: shares 0.167 norm-usage 0.000 level inf rank 3 factor 1.000
            z: shares 0.833 norm-usage 0.000 level inf rank 3 factor 1.000
        ",
    );
}

#[test]
fn tied_accounts_have_their_children_ranked_together() {
    // a and b used exactly their shares (level 1 each): their users are ranked as one
    // set of siblings, each by its level among its own siblings.
    run(
        "
        account a root 1
        account b root 1
        usage p@a 30
        usage q@a 70
        usage r@b 100
        ",
        "
        root: usage 200 shares 1.000 norm-usage 1.000 level 1.000
          a: usage 100 shares 0.500 norm-usage 0.500 level 1.000
            p: shares 0.500 norm-usage 0.300 level 1.667 rank 3 factor 1.000
            q: shares 0.500 norm-usage 0.700 level 0.714 rank 1 factor 0.333
          b: usage 100 shares 0.500 norm-usage 0.500 level 1.000
            r: shares 1.000 norm-usage 1.000 level 1.000 rank 2 factor 0.667
        ",
    );
}

#[test]
fn users_beside_accounts_are_ranked_as_siblings() {
    // A user straight under the root competes with the accounts there.
    run(
        "
        account lab root 1
        user solo root 1
        usage solo@root 10
        usage w@lab 30
        ",
        "
        root: usage 40 shares 1.000 norm-usage 1.000 level 1.000
          lab: usage 30 shares 0.500 norm-usage 0.750 level 0.667
            w: shares 1.000 norm-usage 1.000 level 1.000 rank 1 factor 0.500
          solo: shares 0.500 norm-usage 0.250 level 2.000 rank 2 factor 1.000
        ",
    );
}

#[test]
fn usage_halves_every_half_life_and_charges_running_gpus() {
    let a = Assoc {
        account: AccountId(1),
        user: crate::UserId(0),
    };
    let mut u = Usage::default();
    u.advance(100.0, [(a, 2)], 0.0);
    assert_eq!(
        u.gpu_seconds.get(&a),
        None,
        "the first point charges nothing"
    );
    u.advance(100.0, [(a, 2)], 50.0);
    assert_eq!(u.gpu_seconds[&a], 100.0);
    u.advance(100.0, [], 150.0);
    assert_eq!(u.gpu_seconds[&a], 50.0);
    // Time going back neither decays nor charges.
    u.advance(100.0, [(a, 2)], 120.0);
    assert_eq!((u.gpu_seconds[&a], u.at), (50.0, Some(150.0)));
}

fn job(id: u64, user: u32, account: u32, submit: f64) -> SchedJob {
    SchedJob::new(JobSpec {
        id: JobId(id),
        gpus: 1,
        gpu_model: None,
        user: crate::UserId(user),
        queue: QueueId(0),
        account: AccountId(account),
        priority: 0,
        submit,
        estimate: None,
        cpu_milli: 0,
        mem_mib: 0,
        generic: BTreeMap::new(),
        gang: None,
        nodes: Vec::new(),
        prefer: Vec::new(),
        deadline: None,
    })
}

fn starts(s: &mut Scheduler, jobs: &mut [SchedJob], now: f64) -> Vec<u64> {
    for j in jobs.iter_mut() {
        j.account(now);
    }
    s.pass(jobs, now)
        .decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Start { job, .. } => Some(job.0),
            _ => None,
        })
        .collect()
}

#[test]
fn the_pass_starts_the_account_below_its_share_first_and_the_usage_survives_a_new_scheduler() {
    let mut tree = AccountTree::default();
    let heavy = tree.add("heavy", AccountId::ROOT, 1);
    let light = tree.add("light", AccountId::ROOT, 1);
    let mut cfg = PolicyConfig::new(PolicyKind::FairTree);
    cfg.fair_tree.tree = tree;
    let cluster = Cluster::uniform(1, 1, 2, "A100");
    let mk = || {
        Scheduler::new(
            &cluster,
            cfg.clone(),
            PlacementStrategy::Consolidated,
            PreemptMode::Repack,
        )
    };
    let mut s = mk();
    // heavy runs two jobs for an hour while light has nothing.
    let mut jobs = vec![job(1, 0, heavy.0, 0.0), job(2, 0, heavy.0, 0.0)];
    assert_eq!(starts(&mut s, &mut jobs, 0.0), vec![1, 2]);
    // An hour later the pass charges that hour (both still run), then both end.
    assert_eq!(starts(&mut s, &mut jobs, 3600.0), Vec::<u64>::new());
    let stored = s.fair_usage().clone();
    for j in &mut jobs {
        s.finish(j);
    }
    assert_eq!(stored.gpu_seconds.values().sum::<f64>(), 7200.0);
    // heavy submits first, light after: light goes first all the same.
    let later = vec![
        job(3, 0, heavy.0, 3600.0),
        job(4, 0, heavy.0, 3600.0),
        job(5, 1, light.0, 3601.0),
    ];
    let mut jobs = later.clone();
    // A restarted scheduler given the stored usage decides the same.
    let mut s2 = mk();
    s2.set_fair_usage(stored);
    let mut again = later.clone();
    assert_eq!(starts(&mut s, &mut jobs, 3602.0), vec![5, 3]);
    assert_eq!(starts(&mut s2, &mut again, 3602.0), vec![5, 3]);
    // Without the stored usage a new scheduler would have gone in submit order.
    let mut fresh = mk();
    let mut third = later;
    assert_eq!(starts(&mut fresh, &mut third, 3602.0), vec![3, 4]);
}
