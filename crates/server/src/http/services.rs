//! Inference services (`/api/services`) and the gateways' sync (`/api/gateway/sync`).

use std::collections::BTreeSet;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use gpusched_wire::{EndpointSet, GatewaySync, ServiceList, ServiceSpec, ServiceView};

use super::auth::{gateway, person};
use super::error::{ApiErr, JsonBody};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// Create a service: its replicas (each a job made from `replica`, checked as a
/// submission is) start, are probed, and take traffic through gateways once ready.
/// 409 when the name is taken or no node could ever hold a replica.
#[utoipa::path(post, path = "/api/services", operation_id = "create_service", tag = "services", request_body = ServiceSpec,
    responses((status = 201, body = ServiceView), super::responses::Submit))]
pub async fn create(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(spec): JsonBody<ServiceSpec>,
) -> Result<(StatusCode, Json<ServiceView>), ApiErr> {
    let who = person(&caller)?;
    let mut users = BTreeSet::from([who.user.clone()]);
    if who.admin {
        users.extend(spec.replica.user.clone());
    }
    let groups = app.groups.resolve(users).await;
    let v = app
        .ask(|r| Cmd::CreateService(spec, who, groups, r))
        .await?;
    Ok((StatusCode::CREATED, Json(v)))
}

/// Every service, with its replicas; another user's without its command and the
/// values of its environment.
#[utoipa::path(get, path = "/api/services", operation_id = "list_services", tag = "services",
    responses((status = 200, body = ServiceList), super::responses::Read))]
pub async fn list(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<ServiceList>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Services(who, r)).await?))
}

/// One service, with its replicas.
#[utoipa::path(get, path = "/api/services/{name}", operation_id = "get_service", tag = "services", params(("name" = String, Path)),
    responses((status = 200, body = ServiceView), super::responses::ReadService))]
pub async fn get(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> Result<Json<ServiceView>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Service(name, who, r)).await?))
}

/// Change a service (its owner or an admin). A change of the replica template
/// (`replica`, `readiness`, `liveness`, `protocol`, `models`) rolls out a new version,
/// `rollout.max_surge` new replicas at a time, each old one draining only once enough
/// are ready; `replicas`, `autoscale` and `rollout` apply in place.
#[utoipa::path(put, path = "/api/services/{name}", operation_id = "update_service", tag = "services", params(("name" = String, Path)),
    request_body = ServiceSpec,
    responses((status = 200, body = ServiceView), super::responses::UpdateService))]
pub async fn update(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
    JsonBody(spec): JsonBody<ServiceSpec>,
) -> Result<Json<ServiceView>, ApiErr> {
    let who = person(&caller)?;
    // The replica's queue's access rule needs the owner's groups: an admin may update
    // another user's service, so the owner is looked up first.
    let mut users = BTreeSet::from([who.user.clone()]);
    if who.admin {
        let owner = app
            .ask(|r| Cmd::Service(name.clone(), who.clone(), r))
            .await?
            .user;
        users.insert(owner);
    }
    let groups = app.groups.resolve(users).await;
    Ok(Json(
        app.ask(|r| Cmd::UpdateService(name, spec, who, groups, r))
            .await?,
    ))
}

/// Delete a service (its owner or an admin): its replicas leave the endpoints, drain
/// and stop; the service is gone with the last of them.
#[utoipa::path(delete, path = "/api/services/{name}", operation_id = "delete_service", tag = "services", params(("name" = String, Path)),
    responses((status = 200, body = ServiceView), super::responses::ChangeService))]
pub async fn delete(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> Result<Json<ServiceView>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(app.ask(|r| Cmd::DeleteService(name, who, r)).await?))
}

/// A gateway's sync (a token of the gateway role, or an admin): its load per service
/// in, every service's ready endpoints and batching out (docs/gateway.md).
#[utoipa::path(post, path = "/api/gateway/sync", operation_id = "gateway_sync", tag = "services", request_body = GatewaySync,
    responses((status = 200, body = EndpointSet), super::responses::Sync))]
pub async fn sync(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(sync): JsonBody<GatewaySync>,
) -> Result<Json<EndpointSet>, ApiErr> {
    gateway(&caller)?;
    let n = sync.gateway.chars().count();
    if !(1..=128).contains(&n) {
        return Err(ApiErr(
            StatusCode::BAD_REQUEST,
            format!(
                "`gateway` must name the gateway in 1 to 128 characters (got {n}); `gpusched \
                 gateway --id` sets it"
            ),
        ));
    }
    Ok(Json(app.ask(|r| Cmd::GatewaySync(sync, r)).await?))
}
