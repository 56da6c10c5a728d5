//! The calls on advance reservations (`/api/reservations*`).

use gpusched_wire::reservation::{ReservationList, ReservationSpec, ReservationView};
use hyper::Method;

use super::{url_component, Client};

impl Client {
    /// A new reservation (admins only).
    pub async fn reservation_create(
        &self,
        spec: &ReservationSpec,
    ) -> anyhow::Result<ReservationView> {
        self.json(Method::POST, "/api/reservations", Some(spec))
            .await
    }

    pub async fn reservations(&self) -> anyhow::Result<ReservationList> {
        self.json(Method::GET, "/api/reservations", None::<&()>)
            .await
    }

    pub async fn reservation(&self, name: &str) -> anyhow::Result<ReservationView> {
        let path = format!("/api/reservations/{}", url_component(name));
        self.json(Method::GET, &path, None::<&()>).await
    }

    /// New terms for the reservation named in `spec` (admins only).
    pub async fn reservation_update(
        &self,
        spec: &ReservationSpec,
    ) -> anyhow::Result<ReservationView> {
        let path = format!("/api/reservations/{}", url_component(&spec.name));
        self.json(Method::PUT, &path, Some(spec)).await
    }

    /// Removes a reservation (admins only); the answer is the one removed.
    pub async fn reservation_delete(&self, name: &str) -> anyhow::Result<ReservationView> {
        let path = format!("/api/reservations/{}", url_component(name));
        self.json(Method::DELETE, &path, None::<&()>).await
    }
}
