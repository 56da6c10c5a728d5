//! Duration models: what slows a running job down in the simulator.
//!
//! - [`PassOverhead::Muri`]: the Muri/Tiresias simulators charge every running job a
//!   fixed pause at *every* scheduling event (checkpoint, restart and warm-up, as they
//!   profiled it per model and GPU count), whether or not the job was moved; the pause is
//!   not part of the job's predicted end. gpusched reproduces this to compare with them.
//!   The table is the Muri authors' profile (seconds); models or GPU counts outside it
//!   cost 10 s, as in the peer.
//! - Locality: a job spread over more nodes than it needs progresses `1 / penalty` as
//!   fast (Tiresias and Muri model a cross-node slowdown the same way); 1.0 turns it off.

/// The per-event pause charged to running jobs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PassOverhead {
    None,
    Muri,
}

impl PassOverhead {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "none" => Some(PassOverhead::None),
            "muri" => Some(PassOverhead::Muri),
            _ => None,
        }
    }

    /// Seconds of progress a running job of `model` on `gpus` GPUs loses per event.
    pub fn seconds(self, model: Option<&str>, gpus: u32) -> f64 {
        match self {
            PassOverhead::None => 0.0,
            PassOverhead::Muri => muri_overhead(model, gpus),
        }
    }
}

fn muri_overhead(model: Option<&str>, gpus: u32) -> f64 {
    // Columns: 1, 2, 4, 8, 16, 32 GPUs.
    const TABLE: [(&str, [u8; 6]); 8] = [
        ("vgg16", [7, 7, 8, 9, 9, 10]),
        ("vgg19", [7, 7, 8, 9, 10, 10]),
        ("resnet18", [4, 5, 5, 7, 7, 7]),
        ("shufflenet_v2_x1_0", [4, 4, 5, 5, 7, 8]),
        ("bert", [10, 10, 10, 10, 10, 10]),
        ("gpt2", [10, 10, 10, 10, 10, 10]),
        ("a2c", [38, 39, 39, 46, 46, 46]),
        ("dqn", [5, 5, 6, 6, 8, 8]),
    ];
    let column = match gpus {
        1 => 0,
        2 => 1,
        4 => 2,
        8 => 3,
        16 => 4,
        32 => 5,
        _ => return 10.0,
    };
    model
        .and_then(|m| TABLE.iter().find(|(name, _)| *name == m))
        .map_or(10.0, |(_, row)| row[column] as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn muri_table_lookups_and_defaults() {
        assert_eq!(PassOverhead::Muri.seconds(Some("a2c"), 8), 46.0);
        assert_eq!(PassOverhead::Muri.seconds(Some("resnet18"), 2), 5.0);
        assert_eq!(PassOverhead::Muri.seconds(Some("unknown"), 2), 10.0);
        assert_eq!(PassOverhead::Muri.seconds(Some("dqn"), 3), 10.0);
        assert_eq!(PassOverhead::None.seconds(Some("a2c"), 8), 0.0);
    }
}
