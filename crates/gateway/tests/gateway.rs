//! The gateway end to end on loopback: a fake gpusched server answering
//! `/api/gateway/sync` with endpoint sets the test changes, fake replicas speaking the
//! Open Inference Protocol (JSON and binary) and the OpenAI API, recording what they
//! get. Every wait is for evidence (a count, a state), bounded generously; every server
//! a test starts stops with it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use gpusched_gateway::oip::batch::wants_binary;
use gpusched_gateway::oip::message::{self, HEADER_LEN};
use gpusched_gateway::oip::tensor::{self, Data, DataType};
use gpusched_gateway::{Config, Limits, Running};
use gpusched_wire::service::{
    Batching, Endpoint, EndpointSet, GatewaySync, ModelConfig, ServeProtocol, ServiceEndpoints,
};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

const TOKEN: &str = "gw-token";
/// The longest any wait for evidence lasts (a busy 2-core machine is slow, not stuck).
const PATIENCE: Duration = Duration::from_secs(30);

/// An HTTP server on loopback, stopped when dropped.
struct Served {
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(app: Router) -> Served {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    Served { url, task }
}

/// Polls `cond` until it holds.
async fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < PATIENCE, "waited {PATIENCE:?} for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

// ---- the fake gpusched server ----

#[derive(Default)]
struct ServerState {
    set: Mutex<Vec<ServiceEndpoints>>,
    syncs: Mutex<Vec<GatewaySync>>,
}

async fn sync_handler(
    State(s): State<Arc<ServerState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if auth != format!("Bearer {TOKEN}") {
        return (StatusCode::UNAUTHORIZED, "{\"error\":\"no token\"}").into_response();
    }
    let sync: GatewaySync = serde_json::from_slice(&body).unwrap();
    s.syncs.lock().unwrap().push(sync);
    let set = EndpointSet {
        services: s.set.lock().unwrap().clone(),
        sync_ms: 50,
    };
    axum::Json(set).into_response()
}

async fn fake_server() -> (Served, Arc<ServerState>) {
    let st = Arc::new(ServerState::default());
    let app = Router::new()
        .route("/api/gateway/sync", post(sync_handler))
        .with_state(st.clone());
    (serve(app).await, st)
}

fn service(
    name: &str,
    protocol: ServeProtocol,
    models: Vec<ModelConfig>,
    urls: &[&str],
) -> ServiceEndpoints {
    ServiceEndpoints {
        name: name.into(),
        protocol,
        models,
        endpoints: urls
            .iter()
            .enumerate()
            .map(|(i, u)| Endpoint {
                job: i as u64 + 1,
                url: u.to_string(),
            })
            .collect(),
        desired: urls.len() as u32,
    }
}

fn model(name: &str, batching: Option<Batching>) -> ModelConfig {
    ModelConfig {
        name: name.into(),
        batching,
    }
}

fn batching(max: u32, preferred: &[u32], delay_us: u64) -> Batching {
    Batching {
        max_batch_size: max,
        preferred_batch_sizes: preferred.to_vec(),
        max_queue_delay_us: delay_us,
        priority_levels: 0,
        default_priority_level: None,
        max_queue_size: 1024,
        default_timeout_us: 0,
        allow_timeout_override: false,
    }
}

// ---- fake replicas ----

#[derive(Default)]
struct Replica {
    /// First dimension of each infer request it got.
    batches: Mutex<Vec<i64>>,
    /// The `id` (or first input value) of each request, in arrival order.
    arrivals: Mutex<Vec<String>>,
    /// When set, each request waits for a permit before answering.
    gate: Option<Arc<Semaphore>>,
    name: String,
}

/// Answers output `y` = input `x` doubled, and for a BYTES input `s` an output `t` of
/// each string with "!" appended; binary where the request asks.
async fn infer_handler(
    State(r): State<Arc<Replica>>,
    Path(_name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let hl = headers
        .get(HEADER_LEN)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let m = match message::parse(&body, hl, "inputs") {
        Ok(m) => m,
        Err(e) => {
            return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": e}))).into_response()
        }
    };
    r.batches.lock().unwrap().push(m.tensors[0].shape[0]);
    // A batch has no id of its own: its first value tells requests apart.
    let first = tensor::into_json(m.tensors[0].datatype, m.tensors[0].data.clone().unwrap())
        .unwrap()
        .first()
        .map(Value::to_string)
        .unwrap_or_default();
    let tag =
        m.id.as_ref()
            .and_then(Value::as_str)
            .map_or(first, str::to_string);
    r.arrivals.lock().unwrap().push(tag);
    if let Some(g) = &r.gate {
        g.acquire().await.unwrap().forget();
    }
    let mut outs = Vec::new();
    for t in &m.tensors {
        let v = tensor::into_json(t.datatype, t.data.clone().unwrap()).unwrap();
        let (name, data): (&str, Vec<Value>) = match t.datatype {
            DataType::Bytes => (
                "t",
                v.iter()
                    .map(|s| json!(format!("{}!", s.as_str().unwrap())))
                    .collect(),
            ),
            DataType::F32 | DataType::F64 => (
                "y",
                v.iter().map(|x| json!(x.as_f64().unwrap() * 2.0)).collect(),
            ),
            _ => (
                "y",
                v.iter().map(|x| json!(x.as_i64().unwrap() * 2)).collect(),
            ),
        };
        outs.push(message::Tensor {
            name: name.into(),
            datatype: t.datatype,
            shape: t.shape.clone(),
            parameters: Default::default(),
            data: Some(Data::Json(data)),
        });
    }
    let answer = message::Message {
        id: m.id.clone(),
        model_name: Some(r.name.clone()),
        model_version: Some("1".into()),
        tensors: outs,
        binary: false,
        ..Default::default()
    };
    let binary_any = answer.tensors.iter().any(|t| wants_binary(&m, &t.name));
    let mut answer = answer;
    answer.binary = binary_any;
    let (body, hl) = message::encode(answer, "outputs", &|t| wants_binary(&m, &t.name)).unwrap();
    let mut resp = body.into_response();
    if let Some(n) = hl {
        resp.headers_mut().insert(HEADER_LEN, n.into());
    }
    resp
}

async fn replica(name: &str, gate: Option<Arc<Semaphore>>) -> (Served, Arc<Replica>) {
    let r = Arc::new(Replica {
        gate,
        name: name.into(),
        ..Default::default()
    });
    let app = Router::new()
        .route("/v2/models/{name}/infer", post(infer_handler))
        .route(
            "/v2/models/{name}",
            get(|State(r): State<Arc<Replica>>| async move {
                axum::Json(json!({"name": r.name, "platform": "fake"}))
            }),
        )
        .with_state(r.clone());
    (serve(app).await, r)
}

/// A replica that dies on every request: it reads the request, then closes the
/// connection without a byte of answer.
async fn dying_replica() -> (String, Arc<Mutex<u32>>, tokio::task::JoinHandle<()>) {
    use tokio::io::AsyncReadExt;
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let accepted = Arc::new(Mutex::new(0));
    let a = accepted.clone();
    let task = tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            *a.lock().unwrap() += 1;
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            drop(s);
        }
    });
    (url, accepted, task)
}

// ---- the gateway and its clients ----

fn limits() -> Limits {
    Limits {
        max_queue: 1024,
        hold_timeout: Duration::from_secs(20),
        retry_after: 1,
    }
}

async fn gateway(servers: &str, limits: Limits) -> Running {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = Config {
        listen: l.local_addr().unwrap(),
        servers: servers.into(),
        token: Some(TOKEN.into()),
        ca_certs: vec![],
        id: "test-gateway".into(),
        limits,
    };
    gpusched_gateway::start(config, l).await.unwrap()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(PATIENCE)
        .build()
        .unwrap()
}

async fn ready(gw: &Running) {
    let c = client();
    let url = format!("http://{}/v2/health/ready", gw.addr);
    let t = Instant::now();
    loop {
        if let Ok(r) = c.get(&url).send().await {
            if r.status() == 200 {
                return;
            }
        }
        assert!(t.elapsed() < PATIENCE, "the gateway never synced");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A JSON inference of `x` (INT32, shape [n, 2]) with its id.
async fn infer_json(
    gw: &Running,
    model: &str,
    id: &str,
    rows: &[[i32; 2]],
    params: Value,
) -> reqwest::Response {
    let body = json!({
        "id": id,
        "parameters": params,
        "inputs": [{"name": "x", "datatype": "INT32", "shape": [rows.len(), 2], "data": rows}],
    });
    client()
        .post(format!("http://{}/v2/models/{model}/infer", gw.addr))
        .json(&body)
        .send()
        .await
        .unwrap()
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn queued(gw: &Running, service: &str) -> u32 {
    gw.gateway.table.load(service).queued()
}

async fn timed<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(120), f)
        .await
        .expect("the test took over 2 minutes")
}

// ---- tests ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_batch_goes_at_once_and_each_request_gets_its_own_rows_back() {
    timed(async {
        let (rep, rec) = replica("m", None).await;
        let (srv, st) = fake_server().await;
        // A long delay: only reaching max_batch_size (4) can send this batch soon.
        *st.set.lock().unwrap() = vec![service(
            "svc",
            ServeProtocol::Oip,
            vec![model("m", Some(batching(4, &[], 30_000_000)))],
            &[&rep.url],
        )];
        let gw = gateway(&srv.url, limits()).await;
        ready(&gw).await;
        let t = Instant::now();
        let (a, b, c) = tokio::join!(
            infer_json(&gw, "m", "a", &[[1, 2]], json!({})),
            infer_json(&gw, "m", "b", &[[3, 4], [5, 6]], json!({})),
            infer_json(&gw, "m", "c", &[[7, 8]], json!({})),
        );
        assert!(
            t.elapsed() < Duration::from_secs(25),
            "sent at max_batch_size, not after the delay"
        );
        for (r, id, want) in [
            (a, "a", vec![2, 4]),
            (b, "b", vec![6, 8, 10, 12]),
            (c, "c", vec![14, 16]),
        ] {
            assert_eq!(r.status(), 200);
            let v: Value = r.json().await.unwrap();
            assert_eq!(v["id"], id);
            assert_eq!(v["outputs"][0]["name"], "y");
            assert_eq!(ints(&v["outputs"][0]["data"]), want);
            assert_eq!(v["outputs"][0]["shape"][0], (want.len() / 2) as i64);
        }
        assert_eq!(*rec.batches.lock().unwrap(), vec![4]);
        gw.stop().await.unwrap();
    })
    .await;
}

/// A request as `tritonclient.http` sends it: inputs in binary after the JSON, outputs
/// asked in binary.
fn binary_request(id: &str, xs: &[f32], strings: &[&str], binary_out: bool) -> (Vec<u8>, usize) {
    let x: Vec<u8> = xs.iter().flat_map(|f| f.to_le_bytes()).collect();
    let s = tensor::to_raw(
        DataType::Bytes,
        &strings.iter().map(|s| json!(s)).collect::<Vec<_>>(),
    )
    .unwrap();
    let head = json!({
        "id": id,
        "inputs": [
            {"name": "x", "datatype": "FP32", "shape": [xs.len()], "parameters": {"binary_data_size": x.len()}},
            {"name": "s", "datatype": "BYTES", "shape": [strings.len()], "parameters": {"binary_data_size": s.len()}}
        ],
        "outputs": [
            {"name": "y", "parameters": {"binary_data": binary_out}},
            {"name": "t", "parameters": {"binary_data": binary_out}}
        ]
    });
    let mut body = serde_json::to_vec(&head).unwrap();
    let n = body.len();
    body.extend(x);
    body.extend(s);
    (body, n)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_and_json_requests_batch_together_and_split_back_in_their_own_forms() {
    timed(async {
        let (rep, rec) = replica("m", None).await;
        let (srv, st) = fake_server().await;
        *st.set.lock().unwrap() = vec![service(
            "svc",
            ServeProtocol::Oip,
            vec![model("m", Some(batching(3, &[], 30_000_000)))],
            &[&rep.url],
        )];
        let gw = gateway(&srv.url, limits()).await;
        ready(&gw).await;
        let send = |(body, n): (Vec<u8>, usize)| {
            client()
                .post(format!("http://{}/v2/models/m/infer", gw.addr))
                .header(HEADER_LEN, n)
                .header("content-type", "application/octet-stream")
                .body(body)
                .send()
        };
        let (a, b) = tokio::join!(
            send(binary_request("a", &[1.5, 2.0], &["héllo", ""], true)),
            send(binary_request("b", &[4.0], &["x"], false)),
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(*rec.batches.lock().unwrap(), vec![3]);
        // a: binary outputs, parsed with the header length.
        assert_eq!(a.status(), 200);
        let hl: usize = a.headers()[HEADER_LEN].to_str().unwrap().parse().unwrap();
        let a = message::parse(&a.bytes().await.unwrap(), Some(hl), "outputs").unwrap();
        assert_eq!(a.id, Some(json!("a")));
        let y = a.tensors.iter().find(|t| t.name == "y").unwrap();
        assert_eq!(y.shape, vec![2]);
        assert!(matches!(y.data, Some(Data::Raw(_))));
        assert_eq!(
            tensor::into_json(DataType::F32, y.data.clone().unwrap()).unwrap(),
            vec![json!(3.0), json!(4.0)]
        );
        let t = a.tensors.iter().find(|t| t.name == "t").unwrap();
        assert_eq!(
            tensor::into_json(DataType::Bytes, t.data.clone().unwrap()).unwrap(),
            vec![json!("héllo!"), json!("!")]
        );
        // b: JSON outputs.
        assert_eq!(b.status(), 200);
        assert!(b.headers().get(HEADER_LEN).is_none());
        let b: Value = b.json().await.unwrap();
        assert_eq!(b["id"], "b");
        let outs = b["outputs"].as_array().unwrap();
        let y = outs.iter().find(|o| o["name"] == "y").unwrap();
        assert_eq!(y["data"], json!([8.0]));
        let t = outs.iter().find(|o| o["name"] == "t").unwrap();
        assert_eq!(t["data"], json!(["x!"]));
        gw.stop().await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preferred_size_goes_at_once_and_the_delay_sends_a_partial_batch() {
    timed(async {
        let (rep, rec) = replica("m", None).await;
        let (rep2, rec2) = replica("d", None).await;
        let (srv, st) = fake_server().await;
        *st.set.lock().unwrap() = vec![
            service(
                "svc",
                ServeProtocol::Oip,
                vec![model("m", Some(batching(8, &[2], 30_000_000)))],
                &[&rep.url],
            ),
            service(
                "delayed",
                ServeProtocol::Oip,
                vec![model("d", Some(batching(8, &[], 150_000)))],
                &[&rep2.url],
            ),
        ];
        let gw = gateway(&srv.url, limits()).await;
        ready(&gw).await;
        let t = Instant::now();
        let (a, b) = tokio::join!(
            infer_json(&gw, "m", "a", &[[1, 1]], json!({})),
            infer_json(&gw, "m", "b", &[[2, 2]], json!({})),
        );
        assert_eq!((a.status().as_u16(), b.status().as_u16()), (200, 200));
        assert!(
            t.elapsed() < Duration::from_secs(25),
            "preferred size 2 did not wait 30 s"
        );
        assert_eq!(*rec.batches.lock().unwrap(), vec![2]);
        // One request alone: sent when it has waited max_queue_delay (150 ms).
        let t = Instant::now();
        let r = infer_json(&gw, "d", "only", &[[5, 5]], json!({})).await;
        assert_eq!(r.status(), 200);
        assert!(
            t.elapsed() >= Duration::from_millis(140),
            "sent before its delay"
        );
        assert_eq!(*rec2.batches.lock().unwrap(), vec![1]);
        gw.stop().await.unwrap();
    })
    .await;
}

/// A replica busy with two requests (the batcher's two batches per replica), more
/// requests queued behind.
async fn busy_setup(b: Batching) -> (Running, Served, Arc<Replica>, Arc<Semaphore>, Served) {
    let gate = Arc::new(Semaphore::new(0));
    let (rep, rec) = replica("m", Some(gate.clone())).await;
    let (srv, st) = fake_server().await;
    *st.set.lock().unwrap() = vec![service(
        "svc",
        ServeProtocol::Oip,
        vec![model("m", Some(b))],
        &[&rep.url],
    )];
    let gw = gateway(&srv.url, limits()).await;
    ready(&gw).await;
    (gw, rep, rec, gate, srv)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_higher_priority_request_goes_before_an_earlier_lower_one() {
    timed(async {
        let mut b = batching(1, &[], 0);
        b.priority_levels = 2;
        let (gw, _rep, rec, gate, _srv) = busy_setup(b).await;
        let gw = Arc::new(gw);
        // Batches carry no id: each request's value names it at the replica.
        let spawn = |value: i32, p: u32| {
            let gw = gw.clone();
            tokio::spawn(async move {
                let params = if p == 0 {
                    json!({})
                } else {
                    json!({"priority": p})
                };
                infer_json(&gw, "m", "r", &[[value, value]], params)
                    .await
                    .status()
            })
        };
        let f1 = spawn(1, 0);
        let f2 = spawn(1, 0);
        wait_for("two requests at the replica", || {
            rec.arrivals.lock().unwrap().len() == 2
        })
        .await;
        let low = spawn(2, 2);
        wait_for("the low one queued", || queued(&gw, "svc") == 1).await;
        let high = spawn(3, 1);
        wait_for("the high one queued", || queued(&gw, "svc") == 2).await;
        gate.add_permits(1);
        wait_for("a third request at the replica", || {
            rec.arrivals.lock().unwrap().len() == 3
        })
        .await;
        assert_eq!(
            rec.arrivals.lock().unwrap()[2],
            "3",
            "the high-priority request"
        );
        gate.add_permits(10);
        for h in [f1, f2, low, high] {
            assert_eq!(h.await.unwrap(), 200);
        }
        Arc::try_unwrap(gw).ok().unwrap().stop().await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_model_queue_sheds_with_retry_after_and_a_queued_request_times_out() {
    timed(async {
        let mut b = batching(1, &[], 0);
        b.max_queue_size = 1;
        // Long enough that the queued request is still there when the next one comes,
        // even on a busy machine.
        b.default_timeout_us = 2_000_000;
        let (gw, _rep, rec, gate, _srv) = busy_setup(b).await;
        let gw = Arc::new(gw);
        let spawn = |id: &'static str| {
            let gw = gw.clone();
            tokio::spawn(async move { infer_json(&gw, "m", id, &[[1, 1]], json!({})).await })
        };
        let fillers = [spawn("f1"), spawn("f2")];
        wait_for("two requests at the replica", || {
            rec.arrivals.lock().unwrap().len() == 2
        })
        .await;
        let queued_one = spawn("q");
        wait_for("one request queued", || queued(&gw, "svc") == 1).await;
        let shed = infer_json(&gw, "m", "over", &[[1, 1]], json!({})).await;
        assert_eq!(shed.status(), 503);
        assert_eq!(shed.headers()["retry-after"], "1");
        let v: Value = shed.json().await.unwrap();
        assert!(
            v["error"].as_str().unwrap().contains("max_queue_size"),
            "{v}"
        );
        let timed_out = queued_one.await.unwrap();
        assert_eq!(timed_out.status(), 503);
        let v: Value = timed_out.json().await.unwrap();
        assert!(v["error"].as_str().unwrap().contains("timeout"), "{v}");
        gate.add_permits(10);
        for f in fillers {
            assert_eq!(f.await.unwrap().status(), 200);
        }
        let m = client()
            .get(format!("http://{}/metrics", gw.addr))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            m.contains("gpusched_gateway_shed_total{service=\"svc\"} 2"),
            "{m}"
        );
        assert!(
            m.contains("nv_inference_request_success{model=\"m\",version=\"\"} 2"),
            "{m}"
        );
        assert!(m.contains("gpusched_gateway_batch_size_bucket"), "{m}");
        Arc::try_unwrap(gw).ok().unwrap().stop().await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_spread_over_replicas_by_least_outstanding() {
    timed(async {
        let gate = Arc::new(Semaphore::new(0));
        let (a, ra) = replica("m", Some(gate.clone())).await;
        let (b, rb) = replica("m", Some(gate.clone())).await;
        let (srv, st) = fake_server().await;
        *st.set.lock().unwrap() = vec![service(
            "svc",
            ServeProtocol::Oip,
            vec![model("m", None)],
            &[&a.url, &b.url],
        )];
        let gw = Arc::new(gateway(&srv.url, limits()).await);
        ready(&gw).await;
        let mut hs = Vec::new();
        for i in 0..6 {
            let gw = gw.clone();
            hs.push(tokio::spawn(async move {
                infer_json(&gw, "m", &format!("r{i}"), &[[1, 1]], json!({}))
                    .await
                    .status()
            }));
            // One at a time, so each choice sees the last one outstanding.
            wait_for("the request at a replica", || {
                ra.arrivals.lock().unwrap().len() + rb.arrivals.lock().unwrap().len() == i + 1
            })
            .await;
        }
        assert_eq!(ra.arrivals.lock().unwrap().len(), 3);
        assert_eq!(rb.arrivals.lock().unwrap().len(), 3);
        gate.add_permits(100);
        for h in hs {
            assert_eq!(h.await.unwrap(), 200);
        }
        // A GET of model metadata goes to a replica too.
        let meta: Value = client()
            .get(format!("http://{}/v2/models/m", gw.addr))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(meta["platform"], "fake");
        Arc::try_unwrap(gw).ok().unwrap().stop().await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_dying_mid_request_is_retried_on_another() {
    timed(async {
        let (good, rec) = replica("m", None).await;
        let (dead, accepted, dead_task) = dying_replica().await;
        let (srv, st) = fake_server().await;
        *st.set.lock().unwrap() = vec![
            service(
                "svc",
                ServeProtocol::Oip,
                vec![model("m", None)],
                &[&dead, &good.url],
            ),
            service(
                "bat",
                ServeProtocol::Oip,
                vec![model("b", Some(batching(4, &[], 0)))],
                &[&dead, &good.url],
            ),
        ];
        let gw = gateway(&srv.url, limits()).await;
        ready(&gw).await;
        // Until the dying one has been chosen (ties rotate), every request succeeds.
        let mut n = 0;
        while *accepted.lock().unwrap() == 0 {
            n += 1;
            assert!(n < 50, "the dying replica was never chosen");
            let r = infer_json(&gw, "m", "x", &[[1, 2]], json!({})).await;
            assert_eq!(r.status(), 200);
        }
        // A batch too (the dying replica may be ejected by now: then it simply goes to
        // the good one).
        let r = infer_json(&gw, "b", "y", &[[1, 2]], json!({})).await;
        assert_eq!(r.status(), 200);
        assert!(!rec.batches.lock().unwrap().is_empty());
        let m = client()
            .get(format!("http://{}/metrics", gw.addr))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            m.contains("gpusched_gateway_retries_total{service=\"svc\"} 1"),
            "{m}"
        );
        gw.stop().await.unwrap();
        dead_task.abort();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_is_held_while_no_replica_is_ready_counted_as_queued_then_served() {
    timed(async {
        let (rep, _rec) = replica("m", None).await;
        let (srv, st) = fake_server().await;
        *st.set.lock().unwrap() = vec![service(
            "svc",
            ServeProtocol::Oip,
            vec![model("m", None)],
            &[],
        )];
        let gw = Arc::new(gateway(&srv.url, limits()).await);
        ready(&gw).await;
        let g = gw.clone();
        let held =
            tokio::spawn(async move { infer_json(&g, "m", "h", &[[1, 2]], json!({})).await });
        wait_for("the server told of the held request", || {
            st.syncs.lock().unwrap().iter().any(|s| {
                s.gateway == "test-gateway"
                    && s.load.iter().any(|l| l.service == "svc" && l.queued == 1)
            })
        })
        .await;
        assert!(!held.is_finished());
        *st.set.lock().unwrap() = vec![service(
            "svc",
            ServeProtocol::Oip,
            vec![model("m", None)],
            &[&rep.url],
        )];
        let r = held.await.unwrap();
        assert_eq!(r.status(), 200);
        let v: Value = r.json().await.unwrap();
        assert_eq!(ints(&v["outputs"][0]["data"]), vec![2, 4]);
        wait_for("the answer reported", || {
            st.syncs.lock().unwrap().iter().any(|s| {
                s.load
                    .iter()
                    .any(|l| l.service == "svc" && l.answered == 1 && l.p95_ms.is_some())
            })
        })
        .await;
        // An unknown model is refused naming the known ones.
        let r = infer_json(&gw, "nope", "x", &[[1, 2]], json!({})).await;
        assert_eq!(r.status(), 404);
        let v: Value = r.json().await.unwrap();
        assert!(v["error"].as_str().unwrap().contains("serves m"), "{v}");
        Arc::try_unwrap(gw).ok().unwrap().stop().await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_request_past_hold_timeout_gets_503() {
    timed(async {
        let (srv, st) = fake_server().await;
        *st.set.lock().unwrap() = vec![service(
            "svc",
            ServeProtocol::Oip,
            vec![model("m", None)],
            &[],
        )];
        let mut l = limits();
        l.hold_timeout = Duration::from_millis(300);
        let gw = gateway(&srv.url, l).await;
        ready(&gw).await;
        let r = infer_json(&gw, "m", "h", &[[1, 2]], json!({})).await;
        assert_eq!(r.status(), 503);
        assert_eq!(r.headers()["retry-after"], "1");
        gw.stop().await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_stream_reaches_the_client_chunk_by_chunk() {
    timed(async {
        let gate = Arc::new(Semaphore::new(0));
        let g = gate.clone();
        let app = Router::new().route(
            "/v1/chat/completions",
            post(move |body: Bytes| {
                let g = g.clone();
                async move {
                    let v: Value = serde_json::from_slice(&body).unwrap();
                    assert_eq!(v["stream"], true);
                    let chunks = futures_util::stream::unfold(0, move |i| {
                        let g = g.clone();
                        async move {
                            match i {
                                0 => Some((
                                    Ok::<_, std::io::Error>(Bytes::from("data: {\"n\":1}\n\n")),
                                    1,
                                )),
                                1 => {
                                    g.acquire().await.unwrap().forget();
                                    Some((
                                        Ok(Bytes::from("data: {\"n\":2}\n\ndata: [DONE]\n\n")),
                                        2,
                                    ))
                                }
                                _ => None,
                            }
                        }
                    });
                    Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(Body::from_stream(chunks))
                        .unwrap()
                }
            }),
        );
        let rep = serve(app).await;
        let (srv, st) = fake_server().await;
        *st.set.lock().unwrap() = vec![service(
            "llm",
            ServeProtocol::Openai,
            vec![model("llama", None)],
            &[&rep.url],
        )];
        let gw = gateway(&srv.url, limits()).await;
        ready(&gw).await;
        let models: Value = client()
            .get(format!("http://{}/v1/models", gw.addr))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(models["data"][0]["id"], "llama");
        let mut r = client()
            .post(format!("http://{}/v1/chat/completions", gw.addr))
            .json(&json!({"model": "llama", "stream": true, "messages": []}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["content-type"], "text/event-stream");
        // The first event arrives while the replica still holds the rest back.
        let mut first = Vec::new();
        while !first.ends_with(b"\n\n") {
            let c = r
                .chunk()
                .await
                .unwrap()
                .expect("the stream ended before its first event");
            first.extend_from_slice(&c);
        }
        assert_eq!(&first[..], b"data: {\"n\":1}\n\n");
        gate.add_permits(1);
        let mut rest = Vec::new();
        while let Some(c) = r.chunk().await.unwrap() {
            rest.extend_from_slice(&c);
        }
        assert!(rest.ends_with(b"data: [DONE]\n\n"));
        let r = client()
            .post(format!("http://{}/v1/completions", gw.addr))
            .json(&json!({"model": "gpt-9", "prompt": "x"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        let v: Value = r.json().await.unwrap();
        assert!(
            v["error"]["message"].as_str().unwrap().contains("llama"),
            "{v}"
        );
        gw.stop().await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_down_server_is_skipped_and_a_followers_redirect_is_followed_with_the_token() {
    timed(async {
        let (rep, _rec) = replica("m", None).await;
        let (leader, st) = fake_server().await;
        *st.set.lock().unwrap() = vec![service(
            "svc",
            ServeProtocol::Oip,
            vec![model("m", None)],
            &[&rep.url],
        )];
        // A port nothing listens on: bound, then closed.
        let down = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}", l.local_addr().unwrap())
        };
        let to = leader.url.clone();
        let follower = serve(Router::new().route(
            "/api/gateway/sync",
            post(move || {
                let to = to.clone();
                async move {
                    (
                        StatusCode::TEMPORARY_REDIRECT,
                        [("location", format!("{to}/api/gateway/sync"))],
                    )
                }
            }),
        ))
        .await;
        let gw = gateway(&format!("{down},{}", follower.url), limits()).await;
        ready(&gw).await;
        // The leader answers only a request with the token: the redirect kept it.
        assert!(!st.syncs.lock().unwrap().is_empty());
        let r = infer_json(&gw, "m", "x", &[[1, 2]], json!({})).await;
        assert_eq!(r.status(), 200);
        gw.stop().await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_is_reached_over_its_unix_socket() {
    timed(async {
        let st = Arc::new(ServerState::default());
        let path =
            std::env::temp_dir().join(format!("gpusched-gw-test-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let l = tokio::net::UnixListener::bind(&path).unwrap();
        // The socket needs no token (the caller is root by its uid); the fake wants one
        // anyway only over TCP, so answer here without checking.
        let s2 = st.clone();
        let app = Router::new().route(
            "/api/gateway/sync",
            post(move |body: Bytes| {
                let s = s2.clone();
                async move {
                    let sync: GatewaySync = serde_json::from_slice(&body).unwrap();
                    s.syncs.lock().unwrap().push(sync);
                    axum::Json(EndpointSet {
                        services: vec![],
                        sync_ms: 50,
                    })
                }
            }),
        );
        let task = tokio::spawn(async move {
            let _ = axum::serve(l, app).await;
        });
        let gw = gateway(&format!("unix:{}", path.display()), limits()).await;
        ready(&gw).await;
        assert_eq!(st.syncs.lock().unwrap()[0].gateway, "test-gateway");
        gw.stop().await.unwrap();
        task.abort();
        let _ = std::fs::remove_file(&path);
    })
    .await;
}

/// The real `tritonclient.http` (binary inputs and outputs by default) through the
/// gateway's batcher. Needs a Python with `tritonclient[http]` and numpy
/// (`GATEWAY_PYTHON`, default python3); skipped without. Run with
/// `cargo test -p gpusched-gateway --test gateway -- --ignored --nocapture tritonclient`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn tritonclient_interop() {
    let python = std::env::var("GATEWAY_PYTHON").unwrap_or_else(|_| "python3".into());
    let has = tokio::process::Command::new(&python)
        .args(["-c", "import tritonclient.http, numpy"])
        .status()
        .await
        .is_ok_and(|s| s.success());
    if !has {
        println!("skipped: {python} has no tritonclient[http] and numpy");
        return;
    }
    let (rep, rec) = replica("m", None).await;
    let (srv, st) = fake_server().await;
    *st.set.lock().unwrap() = vec![service(
        "svc",
        ServeProtocol::Oip,
        vec![model("m", Some(batching(8, &[], 300_000)))],
        &[&rep.url],
    )];
    let gw = gateway(&srv.url, limits()).await;
    ready(&gw).await;
    let script = r#"
import sys, numpy as np, tritonclient.http as httpclient
c = httpclient.InferenceServerClient(url=sys.argv[1], concurrency=4)
assert c.is_server_live() and c.is_server_ready() and c.is_model_ready("m")
pending = []
for i in range(4):
    x = np.array([[i, i + 1]], dtype=np.int32)
    a = httpclient.InferInput("x", list(x.shape), "INT32")
    a.set_data_from_numpy(x, binary_data=True)
    s = np.array([[("s%d" % i).encode()]], dtype=np.object_)
    b = httpclient.InferInput("s", list(s.shape), "BYTES")
    b.set_data_from_numpy(s, binary_data=(i % 2 == 0))
    outs = [httpclient.InferRequestedOutput("y", binary_data=True),
            httpclient.InferRequestedOutput("t", binary_data=(i % 2 == 1))]
    pending.append(c.async_infer("m", [a, b], outputs=outs, request_id=str(i)))
for i, p in enumerate(pending):
    r = p.get_result()
    assert r.get_response()["id"] == str(i), r.get_response()
    y = r.as_numpy("y")
    assert y.tolist() == [[2 * i, 2 * i + 2]], y
    t = r.as_numpy("t").reshape(-1)[0]
    t = t.decode() if isinstance(t, bytes) else str(t)
    assert t == "s%d!" % i, t
print("tritonclient ok")
"#;
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(&python)
            .args(["-c", script, &gw.addr.to_string()])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("tritonclient took over 60 s")
    .unwrap();
    println!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("batches the replica got: {:?}", rec.batches.lock().unwrap());
    assert!(out.status.success());
    assert_eq!(rec.batches.lock().unwrap().iter().sum::<i64>(), 4);
    gw.stop().await.unwrap();
}

/// The real `openai` Python client through the gateway: the model list, a completion,
/// a streamed chat completion, an unknown model's 404. Needs `openai` in
/// `GATEWAY_PYTHON`; skipped without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn openai_client_interop() {
    let python = std::env::var("GATEWAY_PYTHON").unwrap_or_else(|_| "python3".into());
    let has = tokio::process::Command::new(&python)
        .args(["-c", "import openai"])
        .status()
        .await
        .is_ok_and(|s| s.success());
    if !has {
        println!("skipped: {python} has no openai");
        return;
    }
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "llama",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let events = [
        chunk(json!({"role": "assistant", "content": "Hel"}), Value::Null),
        chunk(json!({"content": "lo"}), Value::Null),
        chunk(json!({}), json!("stop")),
        "data: [DONE]\n\n".to_string(),
    ];
    let app = Router::new()
        .route(
            "/v1/chat/completions",
            post(move || {
                let events = events.clone();
                async move {
                    let s = futures_util::stream::iter(
                        events
                            .into_iter()
                            .map(|e| Ok::<_, std::io::Error>(Bytes::from(e))),
                    );
                    Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(Body::from_stream(s))
                        .unwrap()
                }
            }),
        )
        .route(
            "/v1/completions",
            post(|| async {
                axum::Json(json!({"id": "x", "object": "text_completion", "created": 0,
                    "model": "llama", "choices": [{"text": "hi", "index": 0,
                    "logprobs": null, "finish_reason": "stop"}]}))
            }),
        );
    let rep = serve(app).await;
    let (srv, st) = fake_server().await;
    *st.set.lock().unwrap() = vec![service(
        "llm",
        ServeProtocol::Openai,
        vec![model("llama", None)],
        &[&rep.url],
    )];
    let gw = gateway(&srv.url, limits()).await;
    ready(&gw).await;
    let script = r#"
import sys, openai
c = openai.OpenAI(base_url="http://%s/v1" % sys.argv[1], api_key="unused", max_retries=0)
assert [m.id for m in c.models.list()] == ["llama"]
assert c.completions.create(model="llama", prompt="x").choices[0].text == "hi"
s = c.chat.completions.create(model="llama", messages=[{"role": "user", "content": "x"}], stream=True)
text = "".join(ch.choices[0].delta.content or "" for ch in s)
assert text == "Hello", text
try:
    c.completions.create(model="nope", prompt="x")
    raise SystemExit("an unknown model was served")
except openai.NotFoundError as e:
    assert "llama" in str(e), e
print("openai ok")
"#;
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(&python)
            .args(["-c", script, &gw.addr.to_string()])
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the openai client took over 60 s")
    .unwrap();
    println!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success());
    gw.stop().await.unwrap();
}

/// The gateway's own cost per unbatched request: the same trivial replica called
/// directly and through the gateway, one request at a time over a kept-alive
/// connection. Run with
/// `cargo test --release -p gpusched-gateway --test gateway -- --ignored --nocapture overhead`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn overhead() {
    let body = Bytes::from_static(
        br#"{"model_name":"m","outputs":[{"name":"y","datatype":"INT32","shape":[1],"data":[2]}]}"#,
    );
    let b2 = body.clone();
    let rep = serve(Router::new().route(
        "/v2/models/m/infer",
        post(move || {
            let b = b2.clone();
            async move { ([("content-type", "application/json")], b) }
        }),
    ))
    .await;
    let (srv, st) = fake_server().await;
    *st.set.lock().unwrap() = vec![service(
        "svc",
        ServeProtocol::Oip,
        vec![model("m", None)],
        &[&rep.url],
    )];
    let gw = gateway(&srv.url, limits()).await;
    ready(&gw).await;
    let req = Bytes::from_static(
        br#"{"inputs":[{"name":"x","datatype":"INT32","shape":[1],"data":[1]}]}"#,
    );
    let c = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .unwrap();
    let n: usize = std::env::var("GATEWAY_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let run = |url: String| {
        let c = c.clone();
        let req = req.clone();
        async move {
            for _ in 0..n / 10 {
                c.post(&url)
                    .body(req.clone())
                    .send()
                    .await
                    .unwrap()
                    .bytes()
                    .await
                    .unwrap();
            }
            let cpu0 = cpu_seconds();
            let t0 = Instant::now();
            let mut lat = Vec::with_capacity(n);
            for _ in 0..n {
                let t = Instant::now();
                let r = c.post(&url).body(req.clone()).send().await.unwrap();
                assert_eq!(r.status(), 200);
                r.bytes().await.unwrap();
                lat.push(t.elapsed().as_secs_f64() * 1e6);
            }
            let wall = t0.elapsed().as_secs_f64();
            let cpu = cpu_seconds() - cpu0;
            lat.sort_by(f64::total_cmp);
            (
                lat[n / 2],
                lat[n * 99 / 100],
                cpu / n as f64 * 1e6,
                n as f64 / wall,
            )
        }
    };
    let direct = run(format!("{}/v2/models/m/infer", rep.url)).await;
    let through = run(format!("http://{}/v2/models/m/infer", gw.addr)).await;
    let show = |what: &str, (p50, p99, cpu, rps): (f64, f64, f64, f64)| {
        println!("{what:>16}: p50 {p50:.0} us, p99 {p99:.0} us, process CPU {cpu:.0} us/request, {rps:.0} requests/s");
    };
    println!("{n} sequential unbatched requests, one kept-alive connection:");
    show("direct", direct);
    show("through gateway", through);
    println!(
        "gateway overhead: p50 +{:.0} us, p99 +{:.0} us, CPU +{:.0} us/request",
        through.0 - direct.0,
        through.1 - direct.1,
        through.2 - direct.2
    );
    gw.stop().await.unwrap();
}

/// This process's user + system CPU time, from /proc (clock ticks of 10 ms: the runs are
/// long enough for that).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|u| u.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    ticks / 100.0
}
