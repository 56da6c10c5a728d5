//! The FGD experiment on the default Alibaba v2023 pod list and its 14 variants, one row
//! per list: unallocated GPU % at 100% arrived (mean over seeds) for each strategy, and
//! the family means. Lists and seeds run on all cores.
//!
//! `cargo run --release -p gpusched-sim --example share_lists -- [STRATEGIES] [SEEDS]
//! [LISTS] [SVG]` with STRATEGIES comma-separated (default `fgd,fgd-fit`), SEEDS `42..51`,
//! LISTS comma-separated (default: all 15), and SVG a path for the plot of unallocated GPU
//! against arrived load on the first list (each line the mean over seeds). Each list row
//! shows every strategy's mean, its difference from the first strategy and the standard
//! error of that difference over seeds.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use gpusched_core::sharing::ShareStrategy;
use gpusched_sim::sharing::plot::unallocated_vs_arrived;
use gpusched_sim::sharing::{bin_by_arrived, mean_bins, run, Bins, ShareWorkload};
use gpusched_sim::trace::openb;

const LISTS: [&str; 15] = [
    "default",
    "gpushare20",
    "gpushare40",
    "gpushare60",
    "gpushare80",
    "gpushare100",
    "multigpu20",
    "multigpu30",
    "multigpu40",
    "multigpu50",
    "gpuspec05",
    "gpuspec10",
    "gpuspec20",
    "gpuspec25",
    "gpuspec33",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let strategies: Vec<ShareStrategy> = args
        .get(1)
        .map_or("fgd,fgd-fit", String::as_str)
        .split(',')
        .map(|s| ShareStrategy::parse(s).expect("strategy"))
        .collect();
    let seeds: Vec<i64> = match args
        .get(2)
        .map(String::as_str)
        .unwrap_or("42..51")
        .to_string()
        .as_str()
    {
        s if s.contains("..") => {
            let (a, b) = s.split_once("..").unwrap();
            (a.parse().unwrap()..=b.parse().unwrap()).collect()
        }
        s => s.split(',').map(|x| x.parse().unwrap()).collect(),
    };
    let lists: Vec<&str> = match args.get(3).filter(|l| *l != "all") {
        Some(l) => l
            .split(',')
            .map(|s| LISTS.iter().find(|x| **x == s).copied().expect("list"))
            .collect(),
        None => LISTS.to_vec(),
    };
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/alibaba-v2023");
    let nodes = openb::read_nodes(&dir.join("openb_node_list_gpu_node.csv")).unwrap();
    let workloads: Vec<ShareWorkload> = lists
        .iter()
        .map(|l| ShareWorkload {
            nodes: nodes.clone(),
            pods: openb::read_pods(&dir.join(format!("openb_pod_list_{l}.csv"))).unwrap(),
            source: l.to_string(),
        })
        .collect();
    let jobs: Vec<(usize, usize, i64)> = (0..workloads.len())
        .flat_map(|w| (0..strategies.len()).map(move |s| (w, s)))
        .flat_map(|(w, s)| seeds.iter().map(move |&x| (w, s, x)))
        .collect();
    let next = AtomicUsize::new(0);
    let first_list: Mutex<Vec<Vec<(i64, Bins)>>> = Mutex::new(vec![Vec::new(); strategies.len()]);
    let results = Mutex::new(vec![vec![0.0f64; strategies.len()]; workloads.len()]);
    let per_seed = Mutex::new(vec![
        vec![vec![0.0f64; seeds.len()]; strategies.len()];
        workloads.len()
    ]);
    let time = Mutex::new(vec![0.0f64; strategies.len()]);
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(w, s, seed)) = jobs.get(k) else {
                    break;
                };
                let t = Instant::now();
                let r = run(&workloads[w], strategies[s], seed).unwrap();
                time.lock().unwrap()[s] += t.elapsed().as_secs_f64();
                let b = bin_by_arrived(&r);
                let u = b.unallocated_at(100).unwrap();
                if w == 0 {
                    first_list.lock().unwrap()[s].push((seed, b));
                }
                results.lock().unwrap()[w][s] += u / seeds.len() as f64;
                let si = seeds.iter().position(|&x| x == seed).unwrap();
                per_seed.lock().unwrap()[w][s][si] = u;
            });
        }
    });
    let results = results.into_inner().unwrap();
    let per_seed = per_seed.into_inner().unwrap();
    // Standard error of the mean paired difference (strategy - first strategy), per list.
    let se = |w: usize, s: usize| -> f64 {
        let d: Vec<f64> = (0..seeds.len())
            .map(|i| per_seed[w][s][i] - per_seed[w][0][i])
            .collect();
        let n = d.len() as f64;
        let m = d.iter().sum::<f64>() / n;
        (d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0) / n).sqrt()
    };
    print!("| list |");
    for s in &strategies {
        print!(" {} |", s.name());
    }
    println!();
    let mut fam: Vec<(String, Vec<f64>, usize)> = Vec::new();
    for (w, row) in results.iter().enumerate() {
        print!("| {} |", lists[w]);
        for (s, v) in row.iter().enumerate() {
            if s == 0 {
                print!(" {v:.3} |");
            } else {
                print!(" {v:.3} ({:+.3} ± {:.3}) |", v - row[0], se(w, s));
            }
        }
        println!();
        let f = lists[w]
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .to_string();
        match fam.iter_mut().find(|x| x.0 == f) {
            Some(x) => {
                for (a, b) in x.1.iter_mut().zip(row) {
                    *a += b;
                }
                x.2 += 1;
            }
            None => fam.push((f, row.clone(), 1)),
        }
    }
    for (f, sums, n) in fam {
        print!("| {f} mean |");
        for v in &sums {
            print!(" {:.3} ({:+.3}) |", v / n as f64, (v - sums[0]) / n as f64);
        }
        println!();
    }
    let runs = (seeds.len() * workloads.len()) as f64;
    for (s, t) in strategies.iter().zip(time.into_inner().unwrap()) {
        println!("{}: {:.0} ms per run", s.name(), t / runs * 1e3);
    }
    println!("wall {:.1} s", started.elapsed().as_secs_f64());
    if let Some(svg) = args.get(4) {
        let mut first = first_list.into_inner().unwrap();
        let means: Vec<(String, Bins)> = strategies
            .iter()
            .zip(first.iter_mut())
            .map(|(s, runs)| {
                runs.sort_by_key(|r| r.0);
                let bins: Vec<Bins> = runs.iter().map(|r| r.1.clone()).collect();
                (s.name().to_string(), mean_bins(&bins))
            })
            .collect();
        let series: Vec<(String, &Bins)> = means.iter().map(|(n, b)| (n.clone(), b)).collect();
        unallocated_vs_arrived(std::path::Path::new(svg), &series).unwrap();
        println!("wrote {svg} ({})", lists[0]);
    }
}
