//! Advance reservations (`/api/reservations`, docs/reservations.md): admins create,
//! change and delete them; everyone may list them.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use gpusched_wire::reservation::{ReservationList, ReservationSpec, ReservationView};

use super::auth::person;
use super::error::{ApiErr, JsonBody};
use super::App;
use crate::actor::Cmd;
use crate::auth::Caller;

/// Create a reservation (admins): its nodes (named, or picked for `gpus`) are held for
/// its window; 409 when the name is taken, a node is unknown or held by an overlapping
/// reservation.
#[utoipa::path(post, path = "/api/reservations", operation_id = "create_reservation", tag = "reservations", request_body = ReservationSpec,
    responses((status = 201, body = ReservationView), super::responses::Submit))]
pub async fn create(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    JsonBody(spec): JsonBody<ReservationSpec>,
) -> Result<(StatusCode, Json<ReservationView>), ApiErr> {
    let who = person(&caller)?;
    let v = app.ask(|r| Cmd::CreateReservation(spec, who, r)).await?;
    Ok((StatusCode::CREATED, Json(v)))
}

/// Every reservation, by name.
#[utoipa::path(get, path = "/api/reservations", operation_id = "list_reservations", tag = "reservations",
    responses((status = 200, body = ReservationList), super::responses::Read))]
pub async fn list(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
) -> Result<Json<ReservationList>, ApiErr> {
    person(&caller)?;
    Ok(Json(app.ask(Cmd::Reservations).await?))
}

/// One reservation, with the jobs in it.
#[utoipa::path(get, path = "/api/reservations/{name}", operation_id = "get_reservation", tag = "reservations", params(("name" = String, Path)),
    responses((status = 200, body = ReservationView), super::responses::ReadService))]
pub async fn get(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> Result<Json<ReservationView>, ApiErr> {
    person(&caller)?;
    Ok(Json(app.ask(|r| Cmd::Reservation(name, r)).await?))
}

/// New terms for a reservation (admins), checked as a new one's are.
#[utoipa::path(put, path = "/api/reservations/{name}", operation_id = "update_reservation", tag = "reservations", params(("name" = String, Path)),
    request_body = ReservationSpec,
    responses((status = 200, body = ReservationView), super::responses::UpdateService))]
pub async fn update(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
    JsonBody(spec): JsonBody<ReservationSpec>,
) -> Result<Json<ReservationView>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(
        app.ask(|r| Cmd::UpdateReservation(name, spec, who, r))
            .await?,
    ))
}

/// Delete a reservation (admins); 409 while jobs that have not ended name it.
#[utoipa::path(delete, path = "/api/reservations/{name}", operation_id = "delete_reservation", tag = "reservations", params(("name" = String, Path)),
    responses((status = 200, body = ReservationView), super::responses::ChangeJobState))]
pub async fn delete(
    State(app): State<App>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> Result<Json<ReservationView>, ApiErr> {
    let who = person(&caller)?;
    Ok(Json(
        app.ask(|r| Cmd::DeleteReservation(name, who, r)).await?,
    ))
}
