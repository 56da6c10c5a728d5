//! `GET /metrics`: Triton's inference counters under Triton's names (dashboards built
//! for Triton work on the gateway), and the gateway's own series under
//! `gpusched_gateway_*`, in base units.
//!
//! Triton's `nv_inference_*` counters are exposed as gauges so their names stay
//! verbatim (OpenMetrics counters must end in `_total`); PromQL's `rate` works on
//! either. The agent does the same for DCGM exporter's names.

use std::sync::Mutex;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::table::Table;

type Labels = Vec<(String, String)>;

/// The content type of the OpenMetrics text prometheus-client writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Seconds, 100 µs to ~100 s: the gateway's own overhead is tens of µs, a large model's
/// answer (or a stream) can take a minute.
const SECONDS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5, 10.0, 100.0,
];
/// Batch sizes, 1 to 1024 in powers of two.
const SIZES: [f64; 11] = [
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];

fn seconds() -> Histogram {
    Histogram::new(SECONDS)
}
fn sizes() -> Histogram {
    Histogram::new(SIZES)
}

type Hist = Family<Labels, Histogram, fn() -> Histogram>;

pub struct Metrics {
    registry: Mutex<Registry>,
    success: Family<Labels, Gauge>,
    failure: Family<Labels, Gauge>,
    count: Family<Labels, Gauge>,
    exec: Family<Labels, Gauge>,
    request: Hist,
    queue: Hist,
    compute: Hist,
    batch: Hist,
    in_flight: Family<Labels, Gauge>,
    queued: Family<Labels, Gauge>,
    endpoints: Family<Labels, Gauge>,
    replica_in_flight: Family<Labels, Gauge>,
    requests: Family<Labels, Counter>,
    retries: Family<Labels, Counter>,
    shed: Family<Labels, Counter>,
}

fn model_labels(model: &str, version: &str) -> Labels {
    vec![
        ("model".into(), model.into()),
        ("version".into(), version.into()),
    ]
}

fn sm(service: &str, model: &str) -> Labels {
    vec![
        ("service".into(), service.into()),
        ("model".into(), model.into()),
    ]
}

fn s(service: &str) -> Labels {
    vec![("service".into(), service.into())]
}

impl Default for Metrics {
    fn default() -> Self {
        let m = Metrics {
            registry: Mutex::new(Registry::default()),
            success: Family::default(),
            failure: Family::default(),
            count: Family::default(),
            exec: Family::default(),
            request: Family::new_with_constructor(seconds),
            queue: Family::new_with_constructor(seconds),
            compute: Family::new_with_constructor(seconds),
            batch: Family::new_with_constructor(sizes),
            in_flight: Family::default(),
            queued: Family::default(),
            endpoints: Family::default(),
            replica_in_flight: Family::default(),
            requests: Family::default(),
            retries: Family::default(),
            shed: Family::default(),
        };
        {
            let mut r = m.registry.lock().unwrap_or_else(|p| p.into_inner());
            r.register(
                "nv_inference_request_success",
                "Inference requests answered successfully (Triton's name)",
                m.success.clone(),
            );
            r.register(
                "nv_inference_request_failure",
                "Inference requests answered with an error (Triton's name)",
                m.failure.clone(),
            );
            r.register(
                "nv_inference_count",
                "Inferences performed: items of batches, requests when unbatched (Triton's name)",
                m.count.clone(),
            );
            r.register(
                "nv_inference_exec_count",
                "Model executions: batches, requests when unbatched (Triton's name)",
                m.exec.clone(),
            );
            r.register(
                "gpusched_gateway_request_duration_seconds",
                "Time from a request's arrival at the gateway to its answer's end",
                m.request.clone(),
            );
            r.register(
                "gpusched_gateway_queue_duration_seconds",
                "Time a request waited in the gateway (held for a replica or in a batch queue)",
                m.queue.clone(),
            );
            r.register(
                "gpusched_gateway_compute_duration_seconds",
                "Time a replica took to answer a request or a batch (to its headers)",
                m.compute.clone(),
            );
            r.register(
                "gpusched_gateway_batch_size",
                "Items in each batch sent to a replica",
                m.batch.clone(),
            );
            r.register(
                "gpusched_gateway_in_flight",
                "Requests at replicas, unanswered",
                m.in_flight.clone(),
            );
            r.register(
                "gpusched_gateway_queued",
                "Requests waiting in the gateway",
                m.queued.clone(),
            );
            r.register(
                "gpusched_gateway_endpoints",
                "Ready replicas of the service in the gateway's table",
                m.endpoints.clone(),
            );
            r.register(
                "gpusched_gateway_replica_in_flight",
                "Requests and batches at one replica, unanswered",
                m.replica_in_flight.clone(),
            );
            r.register(
                "gpusched_gateway_requests",
                "Requests answered, by status code",
                m.requests.clone(),
            );
            r.register(
                "gpusched_gateway_retries",
                "Requests sent again to another replica after the first failed before answering",
                m.retries.clone(),
            );
            r.register(
                "gpusched_gateway_shed",
                "Requests refused with 503 and Retry-After (queue full, held too long)",
                m.shed.clone(),
            );
        }
        m
    }
}

impl Metrics {
    /// An inference request's outcome (Triton's success/failure counters).
    pub fn inference(&self, model: &str, version: &str, ok: bool) {
        let f = if ok { &self.success } else { &self.failure };
        f.get_or_create(&model_labels(model, version)).inc();
    }

    /// One execution at a replica of `items` inferences (a batch, or one request).
    pub fn executed(&self, model: &str, version: &str, items: u64) {
        let l = model_labels(model, version);
        self.exec.get_or_create(&l).inc();
        self.count.get_or_create(&l).inc_by(items as i64);
    }

    /// A replica's time to answer a request or a batch (to its headers).
    pub fn compute(&self, service: &str, model: &str, took: f64) {
        self.compute
            .get_or_create(&sm(service, model))
            .observe(took);
    }

    pub fn batch(&self, service: &str, model: &str, items: u64) {
        self.batch
            .get_or_create(&sm(service, model))
            .observe(items as f64);
    }

    pub fn queued_for(&self, service: &str, model: &str, secs: f64) {
        self.queue.get_or_create(&sm(service, model)).observe(secs);
    }

    /// A request answered (its body's end, or its error) after `secs`.
    pub fn answered(&self, service: &str, model: &str, code: u16, secs: f64) {
        self.request
            .get_or_create(&sm(service, model))
            .observe(secs);
        let mut l = s(service);
        l.push(("code".into(), code.to_string()));
        self.requests.get_or_create(&l).inc();
    }

    pub fn retried(&self, service: &str) {
        self.retries.get_or_create(&s(service)).inc();
    }

    pub fn shed(&self, service: &str) {
        self.shed.get_or_create(&s(service)).inc();
    }

    /// The text exposition, gauges read from the table as of now.
    pub fn render(&self, table: &Table) -> String {
        let snap = table.snapshot();
        self.endpoints.clear();
        self.replica_in_flight.clear();
        for (name, svc) in &snap.services {
            self.endpoints
                .get_or_create(&s(name))
                .set(svc.endpoints.len() as i64);
            for e in &svc.endpoints {
                let mut l = s(name);
                l.push(("replica".into(), e.job.to_string()));
                self.replica_in_flight
                    .get_or_create(&l)
                    .set(e.outstanding() as i64);
            }
        }
        for (name, load) in table.loads() {
            self.in_flight
                .get_or_create(&s(&name))
                .set(load.in_flight() as i64);
            self.queued
                .get_or_create(&s(&name))
                .set(load.queued() as i64);
        }
        let mut out = String::new();
        let r = self.registry.lock().unwrap_or_else(|p| p.into_inner());
        // Writing to a String cannot fail; an encoder error would only drop the text.
        let _ = encode(&mut out, &r);
        out
    }
}
