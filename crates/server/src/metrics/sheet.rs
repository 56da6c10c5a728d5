//! Series computed at scrape time, written out as they were added: a collector the
//! scrape's registry encodes (so no series outlives the scrape that computed it: a node
//! that left, a GPU no longer held, simply stop appearing).

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

/// A series' labels, in the order they are written.
pub type Labels = Vec<(&'static str, String)>;

#[derive(Debug)]
struct Family {
    name: &'static str,
    help: &'static str,
    /// An info family (`NAME_info{...} 1`) instead of a gauge.
    info: bool,
    samples: Vec<(Labels, f64)>,
}

#[derive(Debug, Default)]
pub struct Sheet {
    families: Vec<Family>,
}

impl Sheet {
    /// Starts a gauge family; `add` appends its samples.
    pub fn gauge(&mut self, name: &'static str, help: &'static str) -> &mut Self {
        self.families.push(Family {
            name,
            help,
            info: false,
            samples: Vec::new(),
        });
        self
    }

    /// Starts an info family named `NAME_info` (give `NAME` without the suffix).
    pub fn info(&mut self, name: &'static str, help: &'static str) -> &mut Self {
        self.gauge(name, help);
        if let Some(f) = self.families.last_mut() {
            f.info = true;
        }
        self
    }

    /// A sample of the family started last.
    pub fn add(&mut self, labels: Labels, value: f64) -> &mut Self {
        if let Some(f) = self.families.last_mut() {
            f.samples.push((labels, value));
        }
        self
    }
}

impl Collector for Sheet {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for f in &self.families {
            // A family without samples would be a HELP and TYPE with nothing under them.
            if f.samples.is_empty() {
                continue;
            }
            let kind = if f.info {
                MetricType::Info
            } else {
                MetricType::Gauge
            };
            let mut m = encoder.encode_descriptor(f.name, f.help, None, kind)?;
            for (labels, value) in &f.samples {
                if f.info {
                    m.encode_info(labels)?;
                } else {
                    m.encode_family(labels)?.encode_gauge(value)?;
                }
            }
        }
        Ok(())
    }
}
