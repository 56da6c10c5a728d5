//! The OpenAPI 3.1 document, generated from the handlers' annotations and the wire
//! types, so it cannot drift from the code.

use axum::Json;
use gpusched_core::resources::{mig_profiles_for, MIG_MODELS};
use utoipa::OpenApi;

use super::limits::Shedding;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "gpusched",
        description = "GPU cluster scheduler: jobs, nodes, logs and the agent protocol."
    ),
    paths(
        super::health,
        super::jobs::submit,
        super::jobs::submit_batch,
        super::jobs::list,
        super::jobs::get_job,
        super::jobs::cancel,
        super::cancel::cancel_many,
        super::jobs::checkpoint,
        super::steps::start,
        super::hold::hold,
        super::hold::release,
        super::hold::update,
        super::workflow::submit_workflow,
        super::arrays::list,
        super::arrays::get,
        super::arrays::cancel,
        super::jobs::wait,
        super::jobs::logs,
        super::jobs::nodes,
        super::jobs::usage,
        super::jobs::queues,
        super::accounts::list,
        super::agent::register,
        super::agent::poll,
        super::agent::report,
        super::steps::attach,
        super::tokens::create,
        super::tokens::list,
        super::tokens::revoke,
        super::tokens::whoami,
        super::nodes::drain,
        super::nodes::resume,
        super::history::events,
        super::history::audit,
        super::history::purge,
        super::export::jobs,
        super::services::create,
        super::services::list,
        super::services::get,
        super::services::update,
        super::services::delete,
        super::services::sync,
        super::reservations::create,
        super::reservations::list,
        super::reservations::get,
        super::reservations::update,
        super::reservations::delete,
    ),
    // Operations are grouped by the resource they act on (a generated client's modules).
    tags(
        (name = "jobs", description = "Submit, list, read, change, cancel and wait for jobs; their logs."),
        (name = "arrays", description = "The tasks of a job array."),
        (name = "workflows", description = "Several jobs with dependencies, submitted at once."),
        (name = "nodes", description = "The nodes and their GPUs; drain and resume (admins)."),
        (name = "queues", description = "The queues and their limits."),
        (name = "accounts", description = "The account tree: shares, decayed usage and fair-share factors."),
        (name = "usage", description = "GPU usage per user and queue."),
        (name = "reservations", description = "Advance reservations: nodes held for a window, for some users or queues, or for maintenance."),
        (name = "services", description = "Inference services: replicas kept running, probed, rolled out and scaled; the gateways' sync."),
        (name = "history", description = "Ended jobs, job timelines, the audit log and purges."),
        (name = "tokens", description = "API tokens (admins) and who the caller is."),
        (name = "agent", description = "The protocol between the server and its node agents (join token only)."),
        (name = "server", description = "Health, leadership and this document."),
    ),
    modifiers(&BearerAuth, &Shedding),
    security(("bearer" = []))
)]
pub struct ApiDoc;

/// Declares the bearer-token scheme (the Unix socket needs none).
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

#[utoipa::path(get, path = "/api/openapi.json", operation_id = "openapi_document", tag = "server", security(()),
    responses((status = 200, description = "this document", content_type = "application/json")))]
pub async fn document() -> Json<serde_json::Value> {
    Json(contract())
}

/// The document as served: utoipa's, with the constraints the server enforces that
/// utoipa's attributes cannot state (see `refine`).
pub fn contract() -> serde_json::Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).expect("the document serializes");
    refine(&mut doc);
    doc
}

/// No NUL byte: no program can receive one.
const NO_NUL: &str = r"^[^\x00]*$";

/// What `validate::check_submit` enforces beyond single fields' bounds: the program is
/// not empty, no argument or variable holds a NUL, variable names have no `=`, at most
/// one form of GPU request, and MIG profiles by name.
fn refine(doc: &mut serde_json::Value) {
    use serde_json::json;
    bound_unsigned(doc);
    let submit = &mut doc["components"]["schemas"]["JobSubmit"];
    let props = &mut submit["properties"];
    props["command"]["items"] = json!({ "type": "string", "pattern": NO_NUL });
    props["command"]["prefixItems"] =
        json!([{ "type": "string", "minLength": 1, "pattern": NO_NUL }]);
    props["env"]["propertyNames"] = json!({ "pattern": r"^[^=\x00]+$" });
    props["env"]["additionalProperties"] = json!({ "type": "string", "pattern": NO_NUL });
    let mut profiles: Vec<String> = MIG_MODELS
        .iter()
        .filter_map(|m| mig_profiles_for(m))
        .flatten()
        .map(|p| p.name)
        .collect();
    profiles.sort();
    profiles.dedup();
    let mut names: Vec<serde_json::Value> = profiles.into_iter().map(Into::into).collect();
    names.push(serde_json::Value::Null);
    props["mig"]["enum"] = names.into();
    // `gpus`, `gpu_share`, `gpu_mem`, `mig`: at most one of them, a null counting as absent.
    let forms = ["gpus", "gpu_share", "gpu_mem", "mig"];
    let mut pairs = Vec::new();
    for (i, a) in forms.iter().enumerate() {
        for b in &forms[i + 1..] {
            pairs.push(json!({
                "required": [a, b],
                "properties": { *a: { "not": { "type": "null" } }, *b: { "not": { "type": "null" } } }
            }));
        }
    }
    // `resources` (non-empty) go with whole GPUs or none, never with part of a GPU.
    for slice in ["gpu_share", "gpu_mem", "mig"] {
        pairs.push(json!({
            "required": ["resources", slice],
            "properties": {
                "resources": { "type": "object", "minProperties": 1 },
                slice: { "not": { "type": "null" } }
            }
        }));
    }
    submit["not"] = json!({ "anyOf": pairs });
    resource_map(&mut submit["properties"]["resources"]);
    resource_map(&mut doc["components"]["schemas"]["Register"]["properties"]["resources"]);
    link_submissions(doc);
    follower_redirects(doc);
}

/// Every operation but `/api/health` may be answered by a follower (a server that does
/// not lead, `crate::leader`) with 307 to the same path on the leader, and with 503 and
/// `Retry-After` while no leader is known.
fn follower_redirects(doc: &mut serde_json::Value) {
    use serde_json::json;
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        if path == "/api/health" {
            continue;
        }
        let Some(ops) = item.as_object_mut() else {
            continue;
        };
        for op in ops.values_mut() {
            let responses = &mut op["responses"];
            responses["307"] = json!({
                "description": "This server does not lead: repeat the request (same method and body) at `Location`, the same path on the leader's advertised URL.",
                "headers": { "location": { "description": "The same path on the leader", "schema": { "type": "string" } } },
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ApiError" } } }
            });
            if responses.get("503").is_none() {
                responses["503"] = json!({
                    "description": "No server leads right now (an election is under way); retry after `Retry-After` seconds or ask another server.",
                    "headers": { "Retry-After": { "description": "seconds to wait before sending the request again", "schema": { "type": "integer", "minimum": 1 } } },
                    "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ApiError" } } }
                });
            }
        }
    }
}

/// A map of generic resources (a job's ask, a node's declaration): the names and counts
/// `gpusched_wire::resource::check_map` accepts.
fn resource_map(schema: &mut serde_json::Value) {
    use gpusched_wire::resource::{MAX_COUNT, MAX_RESOURCES, NAME_PATTERN};
    schema["propertyNames"] = serde_json::json!({ "pattern": NAME_PATTERN });
    schema["maxProperties"] = MAX_RESOURCES.into();
    schema["additionalProperties"] =
        serde_json::json!({ "type": "integer", "minimum": 1, "maximum": MAX_COUNT });
}

/// Every operation's `operationId`.
#[cfg(test)]
fn operations_ids(doc: &serde_json::Value) -> Vec<&str> {
    doc["paths"]
        .as_object()
        .into_iter()
        .flat_map(|paths| paths.values())
        .filter_map(|item| item.as_object())
        .flat_map(|item| item.values())
        .filter_map(|op| op["operationId"].as_str())
        .collect()
}

/// OpenAPI links from a submission to what can be done with the job it made, so a
/// client (and schemathesis' stateful phase) knows where the ids lead.
fn link_submissions(doc: &mut serde_json::Value) {
    use serde_json::json;
    let targets = [
        ("GetJob", "get_job"),
        ("CancelJob", "cancel_job"),
        ("WaitForJob", "wait_for_job"),
        ("JobLogs", "get_job_logs"),
        ("CheckpointJob", "checkpoint_job"),
    ];
    for path in ["/api/jobs", "/api/jobs/batch"] {
        let created = &mut doc["paths"][path]["post"]["responses"]["201"];
        for (name, op) in targets {
            created["links"][name] = json!({
                "operationId": op,
                "parameters": { "id": "$response.body#/ids/0" },
                "description": "the (first) job this submission made"
            });
        }
    }
}

/// Unsigned integers get their type's maximum: JSON Schema's `integer` has no bound, and
/// a value past it is refused (400) like any other malformed field.
fn bound_unsigned(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            // utoipa spells them `u-int64`; the common spelling is `uint64`.
            let most: Option<(u64, &str)> = match map.get("format").and_then(|f| f.as_str()) {
                Some("u-int8" | "uint8") => Some((u8::MAX.into(), "uint8")),
                Some("u-int16" | "uint16") => Some((u16::MAX.into(), "uint16")),
                Some("u-int32" | "uint32") => Some((u32::MAX.into(), "uint32")),
                Some("u-int64" | "uint64") => Some((u64::MAX, "uint64")),
                _ => None,
            };
            if let Some((most, format)) = most {
                map.insert("format".into(), format.into());
                map.entry("maximum").or_insert(most.into());
                map.entry("minimum").or_insert(0.into());
            }
            map.values_mut().for_each(bound_unsigned);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(bound_unsigned),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::contract;

    fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
        let mut out = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                out.push((method.clone(), path.clone(), op));
            }
        }
        out
    }

    #[test]
    fn every_operation_documents_its_errors_and_who_may_call_it() {
        let doc = contract();
        assert_eq!(
            doc["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
        assert_eq!(doc["security"], serde_json::json!([{ "bearer": [] }]));
        let public = ["/api/health", "/api/openapi.json"];
        let ops = operations(&doc);
        assert_eq!(ops.len(), 47, "a new operation: check its errors here too");
        for (method, path, op) in ops {
            let responses = op["responses"].as_object().unwrap();
            if public.contains(&path.as_str()) {
                assert_eq!(op["security"], serde_json::json!([{}]), "{method} {path}");
                continue;
            }
            for code in ["307", "401", "403", "503"] {
                assert!(responses.contains_key(code), "{method} {path} lacks {code}");
            }
            let takes_input = op.get("requestBody").is_some()
                || op["parameters"].as_array().is_some_and(|p| !p.is_empty());
            if takes_input {
                assert!(responses.contains_key("400"), "{method} {path} lacks 400");
            }
            if op.get("requestBody").is_some() {
                assert!(responses.contains_key("413"), "{method} {path} lacks 413");
            }
            for (code, r) in responses {
                if code.starts_with('4') || code.starts_with('5') {
                    assert_eq!(
                        r["content"]["application/json"]["schema"]["$ref"],
                        "#/components/schemas/ApiError",
                        "{method} {path} {code}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_schemas_state_what_the_server_enforces() {
        let doc = contract();
        let s = &doc["components"]["schemas"];
        let submit = &s["JobSubmit"]["properties"];
        assert_eq!(submit["command"]["minItems"], 1);
        assert_eq!(submit["command"]["prefixItems"][0]["minLength"], 1);
        assert_eq!(submit["gpus"]["minimum"], 0);
        assert_eq!(submit["resources"]["additionalProperties"]["minimum"], 1);
        assert_eq!(
            s["Register"]["properties"]["resources"]["propertyNames"]["pattern"],
            gpusched_wire::resource::NAME_PATTERN
        );
        assert_eq!(submit["walltime_s"]["minimum"], 1);
        assert!(submit["mig"]["enum"]
            .as_array()
            .unwrap()
            .contains(&"1g.10gb".into()));
        // Six pairs of GPU forms, and `resources` with each of the three slice forms.
        assert_eq!(s["JobSubmit"]["not"]["anyOf"].as_array().unwrap().len(), 9);
        assert_eq!(s["BatchSubmit"]["properties"]["jobs"]["minItems"], 1);
        // Unsigned integers carry their type's bounds.
        assert_eq!(submit["after"]["items"]["maximum"], u64::MAX);
        let list = doc["paths"]["/api/jobs"]["get"]["parameters"]
            .as_array()
            .unwrap();
        let limit = list.iter().find(|p| p["name"] == "limit").unwrap();
        assert_eq!(
            (&limit["schema"]["minimum"], &limit["schema"]["maximum"]),
            (&1.into(), &100_000.into())
        );
        // Containment (issue 32): what an attempt used, on the job and in the agent's
        // end report; what a node enforces, on the node and in the agent's registration.
        assert!(
            s["Usage"]["properties"]["cpu_ms"].is_object(),
            "{}",
            s["Usage"]
        );
        assert!(s["Containment"]["properties"]["enforced"].is_object());
        assert!(s["CgroupMode"].is_object());
        for (schema, field, refers) in [
            ("JobView", "usage", "Usage"),
            ("NodeView", "containment", "Containment"),
            ("Register", "containment", "Containment"),
        ] {
            let text = s[schema]["properties"][field].to_string();
            assert!(
                text.contains(&format!("#/components/schemas/{refers}")),
                "{schema}.{field}: {text}"
            );
        }
        let job = &s["JobView"]["properties"];
        assert!(job["image"].is_object() && job["pids_max"].is_object());
        // A GPU as `nodes` shows it carries its holders, which the schema allows.
        let gpu = &s["GpuView"];
        assert!(gpu["properties"]["job"].is_object() && gpu["properties"]["slices"].is_object());
        assert_ne!(gpu["additionalProperties"], false);
    }

    /// What a client generator needs: each operation named once (OpenAPI requires
    /// `operationId`s to be unique; generators otherwise rename or drop functions), tags
    /// that name resources, each declared with a description, and logs typed as bytes.
    #[test]
    fn operations_have_unique_ids_and_resource_tags_and_logs_are_binary() {
        let doc = contract();
        let mut ids = std::collections::BTreeMap::new();
        for (method, path, op) in operations(&doc) {
            let id = op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
            if let Some(other) = ids.insert(id.to_string(), format!("{method} {path}")) {
                panic!("operationId {id} is both {other} and {method} {path}");
            }
            assert!(
                id.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{method} {path}: operationId {id} is not snake_case"
            );
            let tags = op["tags"].as_array().map(Vec::as_slice).unwrap_or_default();
            assert_eq!(tags.len(), 1, "{method} {path}: tags {tags:?}");
            for tag in tags {
                let tag = tag.as_str().unwrap();
                assert!(
                    !tag.contains("::") && !tag.contains("super") && !tag.contains("crate"),
                    "{method} {path}: tag {tag:?} is a Rust module path, not a resource"
                );
                let declared = doc["tags"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|t| t["name"] == tag);
                assert!(
                    declared.is_some_and(|t| t["description"].is_string()),
                    "{method} {path}: tag {tag:?} is not declared with a description"
                );
            }
        }
        assert_eq!(ids.len(), 47);
        // Every 503 says when to come back (`error::retry_after_on_503`).
        for (method, path, op) in operations(&doc) {
            if let Some(r) = op["responses"].get("503") {
                let headers = r["headers"].as_object();
                assert!(
                    headers
                        .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("retry-after"))),
                    "{method} {path}: its 503 documents no Retry-After"
                );
            }
        }
        let logs = &doc["paths"]["/api/jobs/{id}/logs"]["get"]["responses"]["200"]["content"];
        assert_eq!(
            logs["application/octet-stream"]["schema"],
            serde_json::json!({ "type": "string", "format": "binary" })
        );
    }

    #[test]
    fn submissions_link_to_the_operations_on_their_job() {
        let doc = contract();
        let ids: Vec<&str> = super::operations_ids(&doc);
        for path in ["/api/jobs", "/api/jobs/batch"] {
            let links = doc["paths"][path]["post"]["responses"]["201"]["links"]
                .as_object()
                .unwrap();
            assert_eq!(links.len(), 5, "{path}");
            for link in links.values() {
                let op = link["operationId"].as_str().unwrap();
                assert!(
                    ids.contains(&op),
                    "{path} links to {op}, which is not an operation"
                );
            }
        }
    }
}
