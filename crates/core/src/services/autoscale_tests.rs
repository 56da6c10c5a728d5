//! The autoscaler under step and noisy loads: stabilised rises and falls, no flapping,
//! scale to zero after the idle time, immediate scale from zero, the latency objective.

use super::autoscale::*;

const S: u64 = 1_000;

fn rule(min: u32, max: u32, up_s: u64, down_s: u64) -> AutoscaleRule {
    AutoscaleRule {
        min,
        max,
        target_in_flight: 4.0,
        latency_p95_ms: None,
        up_window_ms: up_s * S,
        down_window_ms: down_s * S,
        idle_to_zero_ms: 300 * S,
    }
}

fn load(in_flight: u32) -> Load {
    Load {
        in_flight,
        ..Default::default()
    }
}

/// Feeds `f(second)` once a second over `[from, to)`; the desired counts.
fn run(
    a: &mut Autoscaler,
    r: &AutoscaleRule,
    from: u64,
    to: u64,
    f: impl Fn(u64) -> Load,
) -> Vec<u32> {
    (from..to).map(|t| a.desired(r, f(t), t * S)).collect()
}

#[test]
fn a_rise_waits_for_the_up_window_and_a_fall_for_the_down_window() {
    let r = rule(1, 10, 30, 60);
    let mut a = Autoscaler::new(1);
    assert_eq!(run(&mut a, &r, 0, 10, |_| load(4)), vec![1; 10]);
    // Load for 5 replicas from second 10: acted on once it held 30 s.
    let d = run(&mut a, &r, 10, 41, |_| load(20));
    assert_eq!(d[..30], [1; 30]);
    assert_eq!(d[30], 5, "at second 40");
    // Load for 2 from second 41: the fall waits until no 5 is left in the last 60 s.
    let d = run(&mut a, &r, 41, 102, |_| load(8));
    assert_eq!(d[..60], [5; 60]);
    assert_eq!(d[60], 2, "at second 101");
}

#[test]
fn without_an_up_window_a_rise_is_at_once_and_within_the_bounds() {
    let r = rule(2, 6, 0, 60);
    let mut a = Autoscaler::new(2);
    assert_eq!(a.desired(&r, load(0), 0), 2, "min");
    assert_eq!(a.desired(&r, load(13), S), 4);
    assert_eq!(a.desired(&r, load(400), 2 * S), 6, "max");
}

#[test]
fn a_noisy_load_does_not_flap() {
    let r = rule(1, 10, 30, 60);
    let mut a = Autoscaler::new(4);
    // 3 and 5 replicas' worth, alternating every 10 s, for 10 minutes.
    let d = run(&mut a, &r, 0, 600, |t| {
        load(if (t / 10) % 2 == 0 { 12 } else { 20 })
    });
    assert!(d.iter().all(|&n| n == 4), "{d:?}");
    // Spikes of a second above a steady load never scale up.
    let d = run(&mut a, &r, 600, 1200, |t| {
        load(if t % 7 == 0 { 40 } else { 16 })
    });
    assert!(d.iter().all(|&n| n == 4), "{d:?}");
}

#[test]
fn scale_to_zero_only_after_the_idle_time() {
    let r = rule(0, 10, 0, 60);
    let mut a = Autoscaler::new(0);
    assert_eq!(a.desired(&r, load(0), 0), 0, "never used: stays at zero");
    assert_eq!(a.desired(&r, load(8), S), 2);
    // Last request at second 100.
    run(&mut a, &r, 2, 101, |_| load(8));
    let d = run(&mut a, &r, 101, 401, |_| load(0));
    // Down to 1 once the down window passed the last 2, then 1 until the idle time.
    assert_eq!(d[..60], [2; 60], "seconds 101-160");
    assert!(d[60..299].iter().all(|&n| n == 1), "seconds 161-399");
    assert_eq!(d[299], 0, "second 400: 300 s since the last request");
}

#[test]
fn a_held_request_scales_up_from_zero_at_once() {
    let r = rule(0, 10, 60, 60);
    let mut a = Autoscaler::new(0);
    let held = Load {
        queued: 9,
        ..Default::default()
    };
    assert_eq!(a.desired(&r, held, 0), 3, "no up window from zero");
    // Above zero the up window applies again.
    assert_eq!(a.desired(&r, load(40), S), 3);
}

#[test]
fn a_missed_latency_objective_adds_a_replica() {
    let r = AutoscaleRule {
        latency_p95_ms: Some(200),
        ..rule(1, 10, 0, 60)
    };
    let mut a = Autoscaler::new(2);
    let slow = Load {
        in_flight: 4,
        queued: 0,
        p95_ms: Some(250.0),
    };
    assert_eq!(a.desired(&r, slow, 0), 3);
    assert_eq!(a.desired(&r, slow, S), 4);
    let fast = Load {
        p95_ms: Some(100.0),
        ..slow
    };
    assert_eq!(a.desired(&r, fast, 2 * S), 4, "held by the down window");
}

#[test]
fn a_restarted_autoscaler_keeps_its_count_through_the_windows() {
    let r = rule(0, 10, 30, 60);
    let mut a = Autoscaler::new(3);
    // No load at all: 3 held by the down window, then 1 until the idle time.
    let d = run(&mut a, &r, 0, 301, |_| load(0));
    assert_eq!(d[..61], [3; 61]);
    assert_eq!(d[61], 1);
    assert_eq!(d[300], 0);
}

#[test]
fn the_history_is_bounded_by_the_windows() {
    let r = rule(1, 10, 30, 60);
    let mut a = Autoscaler::new(1);
    run(&mut a, &r, 0, 10_000, |t| load((t % 40) as u32));
    assert!(a.history() <= 62, "{}", a.history());
}
