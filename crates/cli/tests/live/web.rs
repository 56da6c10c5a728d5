//! The web dashboard's files as the server serves them: public (no token), with their
//! content types, a strict Content-Security-Policy and nosniff, revalidated by ETag;
//! an unknown file is a 404 that says so. The pages themselves are driven in a real
//! browser by scripts/browser_test.sh.

use crate::support::*;

/// The `error` of an ApiError body (the whole body if it is not one).
fn error_of(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_string))
        .unwrap_or_else(|| body.to_string())
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[test]
fn dashboard_assets_are_public_typed_and_locked_down() {
    let (_d, data) = scratch();
    let (_server, url) = server(&data, free_port(), &["--private-jobs"]);

    // The page, then every file it names, with no token at all.
    let (code, head, html) = http_full(&url, None, "GET", "/", None);
    assert_eq!(code, 200, "{head}");
    assert_eq!(
        header(&head, "content-type"),
        Some("text/html; charset=utf-8")
    );
    let mut names: Vec<String> = html
        .match_indices("\"/ui/")
        .map(|(i, _)| {
            let rest = &html[i + 1..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect();
    names.push("/ui/js/job.js".into());
    names.push("/ui/index.html".into());
    assert!(names.len() >= 4, "the page names its files: {names:?}");
    for path in &names {
        let (code, head, body) = http_full(&url, None, "GET", path, None);
        assert_eq!(code, 200, "{path} without a token: {head}");
        let want = match path.rsplit('.').next().unwrap() {
            "js" => "text/javascript; charset=utf-8",
            "css" => "text/css; charset=utf-8",
            "svg" => "image/svg+xml",
            "html" => "text/html; charset=utf-8",
            other => panic!("an asset of an unexpected kind: {other}"),
        };
        assert_eq!(header(&head, "content-type"), Some(want), "{path}");
        let csp = header(&head, "content-security-policy").unwrap_or("");
        assert!(csp.starts_with("default-src 'self'"), "{path}: {csp}");
        assert!(
            csp.contains("script-src 'self'") && !csp.contains("unsafe"),
            "{csp}"
        );
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert_eq!(header(&head, "x-content-type-options"), Some("nosniff"));
        assert_eq!(header(&head, "cache-control"), Some("no-cache"), "{path}");
        assert!(!body.is_empty(), "{path} is empty");

        // Revalidation: the same ETag gets 304 without the body.
        let tag = header(&head, "etag").expect("an ETag");
        let (code, _, _) = http_headers(&url, None, &[("If-None-Match", tag)], "GET", path, None);
        assert_eq!(code, 304, "{path} with its own ETag");
        let (code, _, _) = http_headers(
            &url,
            None,
            &[("If-None-Match", "\"stale\"")],
            "GET",
            path,
            None,
        );
        assert_eq!(code, 200, "{path} with another ETag");
    }

    // An unknown file, or a path that tries to leave the table: 404 with words.
    for path in [
        "/ui/missing.js",
        "/ui/../Cargo.toml",
        "/ui/%2e%2e/Cargo.toml",
        "/ui/js",
    ] {
        let (code, body) = http_with(&url, None, "GET", path, None);
        assert_eq!(code, 404, "{path}: {body}");
        assert!(
            error_of(&body).contains("dashboard") || error_of(&body).contains("no such endpoint"),
            "{path}: {body}"
        );
    }
    let (_, body) = http_with(&url, None, "GET", "/ui/missing.js", None);
    assert!(error_of(&body).contains("\"missing.js\""), "{body}");

    // Public files open nothing else: the data the page shows still needs a token.
    for path in ["/api/nodes", "/api/jobs", "/api/whoami"] {
        let (code, _) = http_with(&url, None, "GET", path, None);
        assert_eq!(code, 401, "{path} without a token");
    }
}

/// The job page's first read: `tail` gives the last bytes of a log and where they start
/// (`x-gpusched-log-offset`), so a long log is not read from its beginning; reading on
/// from there is the usual `offset`, and with both nothing before the offset comes.
#[test]
fn logs_tail_gives_the_last_bytes_and_their_offset() {
    let (_d, dir) = scratch();
    let (_server, url) = server(&dir.join("data"), 0, &[]);
    let _a = agent(&url, "n1", &dir.join("a"), Gpus::Declared(1));
    let id = submit(&url, &["--cwd", "/tmp", "--", "sh", "-c", "seq 1 1000"]);
    let v = wait_job(&url, id, SLOW);
    assert_eq!(v["state"], "succeeded", "{v}");
    let all = (1..=1000).map(|i| format!("{i}\n")).collect::<String>();
    let token = stdout(&cli(&url, &["token", "create", "viewer", "--admin"]))
        .trim()
        .to_string();

    let (code, head, body) = http_full(
        &url,
        Some(&token),
        "GET",
        &format!("/api/jobs/{id}/logs?tail=9"),
        None,
    );
    assert_eq!(code, 200, "{head}\n{body}");
    assert_eq!(body, "999\n1000\n");
    let start = all.len() - 9;
    assert_eq!(
        header(&head, "x-gpusched-log-offset"),
        Some(start.to_string().as_str())
    );
    assert_eq!(header(&head, "x-gpusched-job-state"), Some("succeeded"));
    // A tail longer than the log is the whole log, from 0; an offset read says its own.
    let (_, head, body) = http_full(
        &url,
        Some(&token),
        "GET",
        &format!("/api/jobs/{id}/logs?tail=100000"),
        None,
    );
    assert_eq!(
        (body.as_str(), header(&head, "x-gpusched-log-offset")),
        (all.as_str(), Some("0"))
    );
    let (_, head, body) = http_full(
        &url,
        Some(&token),
        "GET",
        &format!("/api/jobs/{id}/logs?offset={start}"),
        None,
    );
    assert_eq!(body, "999\n1000\n");
    assert_eq!(
        header(&head, "x-gpusched-log-offset"),
        Some(start.to_string().as_str())
    );

    // With an offset too: the tail, but nothing before the offset.
    let (_, head, body) = http_full(
        &url,
        Some(&token),
        "GET",
        &format!("/api/jobs/{id}/logs?tail=100&offset={}", start + 4),
        None,
    );
    assert_eq!(body, "1000\n");
    assert_eq!(
        header(&head, "x-gpusched-log-offset"),
        Some((start + 4).to_string().as_str())
    );
}
