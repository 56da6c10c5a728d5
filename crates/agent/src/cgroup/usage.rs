//! Reading what a part used from its cgroup's files (pure parsers; `job.rs` reads the
//! files).

/// The value of `key` in a flat keyed file (`memory.events`, `cpu.stat`,
/// `memory.oom_control`): lines of `key value`.
pub fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let mut it = line.split_whitespace();
        (it.next()? == key).then_some(())?;
        it.next()?.parse().ok()
    })
}

/// The `total=` of the `some` line of a pressure file (`cpu.pressure`,
/// `memory.pressure`): microseconds some task stalled, since the cgroup was made.
pub fn pressure_total_us(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

/// A number alone in a file (`cpuacct.usage`, `memory.peak`).
pub fn number(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_kernels_formats() {
        let cpu_stat = "usage_usec 2500123\nuser_usec 2000000\nsystem_usec 500123\n";
        assert_eq!(keyed(cpu_stat, "usage_usec"), Some(2_500_123));
        assert_eq!(keyed(cpu_stat, "usage"), None);
        let events = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n";
        assert_eq!(keyed(events, "oom_kill"), Some(1));
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
        assert_eq!(keyed(v1, "oom_kill"), Some(2));
        let pressure = "some avg10=0.00 avg60=0.12 avg300=0.05 total=81234\n\
                        full avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n";
        assert_eq!(pressure_total_us(pressure), Some(81_234));
        assert_eq!(pressure_total_us(""), None);
        assert_eq!(number("123456789\n"), Some(123_456_789));
        assert_eq!(number("max\n"), None);
    }
}
