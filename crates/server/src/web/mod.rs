//! The web dashboard: hand-written HTML, CSS and JavaScript (crates/server/assets/),
//! embedded in the binary so building it needs no Node.js, served at `GET /` and
//! `GET /ui/{*path}`. The assets hold no data and need no token; the page itself asks
//! the `/api` endpoints for everything with the bearer token the user signs in with,
//! so the server's authorization decides what it shows (docs/dashboard.md).

use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::http::ApiErr;

/// One embedded file: its path under `/ui/`, content type and bytes.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $ty:expr) => {
        Asset {
            path: $path,
            content_type: $ty,
            body: include_bytes!(concat!("../../assets/", $path)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every asset the dashboard has; nothing else under `/ui/` is served.
const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("style.css", "text/css; charset=utf-8"),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("js/app.js", JS),
    asset!("js/api.js", JS),
    asset!("js/dom.js", JS),
    asset!("js/format.js", JS),
    asset!("js/signin.js", JS),
    asset!("js/overview.js", JS),
    asset!("js/queue.js", JS),
    asset!("js/job.js", JS),
    asset!("js/queues.js", JS),
    asset!("js/usage.js", JS),
    asset!("js/nodes.js", JS),
    asset!("js/services.js", JS),
];

/// Scripts, styles, images and API calls from this origin only; no inline script or
/// style element, no framing (the page holds a token), no plugins.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// True for the paths the dashboard serves (public: they hold no data).
pub fn is_dashboard(path: &str) -> bool {
    path == "/" || path.starts_with("/ui/")
}

/// `GET /`: the page itself.
pub async fn index(headers: HeaderMap) -> Response {
    serve(&ASSETS[0], &headers)
}

/// `GET /ui/{*path}`: one asset, or 404 naming what exists.
pub async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    match ASSETS.iter().find(|a| a.path == path) {
        Some(a) => serve(a, &headers),
        None => ApiErr(
            StatusCode::NOT_FOUND,
            format!(
                "the dashboard has no file {path:?}; open the dashboard at / (its files are \
                 built into this server, so a page of another gpusched version may ask for \
                 files this one lacks: reload the page)"
            ),
        )
        .into_response(),
    }
}

/// Strong validators, one per asset, hashed once: the browser revalidates every load
/// (`no-cache`) and gets 304 while the binary is the same, so an upgraded server's
/// page is never mixed with an old cached script.
fn etag(a: &Asset) -> &'static str {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    let tags = TAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| {
                let h = Sha256::digest(a.body);
                format!("\"{}\"", hex::encode(&h[..12]))
            })
            .collect()
    });
    let i = ASSETS
        .iter()
        .position(|x| x.path == a.path)
        .expect("an asset of the table");
    &tags[i]
}

fn serve(a: &Asset, req: &HeaderMap) -> Response {
    let tag = etag(a);
    let fresh = req
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let mut resp = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        a.body.into_response()
    };
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(a.content_type),
    );
    h.insert(header::ETAG, HeaderValue::from_static(tag));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every asset the page loads is in the table: each `/ui/...` the HTML names and
    /// each module a script imports exists, so a file added to assets/ but not to the
    /// table (or renamed) fails here, not in a browser.
    #[test]
    fn every_referenced_asset_is_served() {
        let mut missing = Vec::new();
        for a in ASSETS {
            let text = std::str::from_utf8(a.body).expect("assets are UTF-8");
            for (i, _) in text.match_indices("/ui/") {
                let rest = &text[i + 4..];
                let end = rest.find(['"', '\'', '`', ')', ' ']).unwrap_or(rest.len());
                let name = &rest[..end];
                if !name.is_empty() && !ASSETS.iter().any(|x| x.path == name) {
                    missing.push(format!("{} names /ui/{name}", a.path));
                }
            }
            // Module imports are relative to the importing script (all under js/).
            for (i, _) in text.match_indices("from './") {
                let rest = &text[i + 8..];
                let name = format!("js/{}", &rest[..rest.find('\'').unwrap_or(rest.len())]);
                if !ASSETS.iter().any(|x| x.path == name) {
                    missing.push(format!("{} imports {name}", a.path));
                }
            }
        }
        assert!(missing.is_empty(), "{missing:?}");
    }

    /// No inline script or handler attribute: the CSP would block it, silently.
    #[test]
    fn the_page_has_no_inline_script() {
        let html = std::str::from_utf8(ASSETS[0].body).unwrap();
        assert!(ASSETS[0].path == "index.html");
        for line in html.lines() {
            if line.contains("<script") {
                assert!(line.contains("src="), "inline script: {line}");
            }
            assert!(!line.contains(" onclick="), "inline handler: {line}");
            assert!(!line.contains("<style"), "inline style element: {line}");
        }
        for a in ASSETS.iter().filter(|a| a.path.ends_with(".js")) {
            let js = std::str::from_utf8(a.body).unwrap();
            assert!(
                !js.contains("innerHTML"),
                "{}: build the DOM with textContent",
                a.path
            );
        }
    }

    /// The overview's counts, run by Node.js on the module as served: GPUs of an offline
    /// node are neither in use nor in the total. Without Node.js the test says so and
    /// passes (scripts/install_test_deps.sh installs it), except under CI, where it fails.
    #[test]
    fn the_overview_counts_only_the_gpus_of_online_nodes() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/js");
        let script = "import { counts } from './overview.js';
            const gpu = (index, job) => ({ index, job, slices: [] });
            const c = counts([
              { state: 'online', gpus: [gpu(0, 7), gpu(1, null)] },
              { state: 'offline', gpus: [gpu(0, null), gpu(1, null), gpu(2, null)] },
              { state: 'unknown', gpus: [gpu(0, 9)] },
            ]);
            process.stdout.write(JSON.stringify(c));";
        let Some(node) = gpusched_store::testing::require_program(
            "the_overview_counts_only_the_gpus_of_online_nodes",
            "node",
            "nodejs",
        ) else {
            return;
        };
        let out = std::process::Command::new(node)
            .args(["--input-type=module", "-e", script])
            .current_dir(dir)
            .output()
            .expect("run node");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (&c["online"], &c["gpus"], &c["busy"], &c["offline"]),
            (&1.into(), &2.into(), &1.into(), &4.into()),
            "{c}"
        );
    }

    #[test]
    fn the_tags_differ_per_asset() {
        let mut tags: Vec<&str> = ASSETS.iter().map(etag).collect();
        tags.sort();
        tags.dedup();
        assert_eq!(tags.len(), ASSETS.len());
    }
}
