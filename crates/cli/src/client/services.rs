//! The calls on inference services (`/api/services*`).

use gpusched_wire::{ServiceList, ServiceSpec, ServiceView};
use hyper::Method;

use super::{url_component, Client};

impl Client {
    pub async fn service_create(&self, spec: &ServiceSpec) -> anyhow::Result<ServiceView> {
        self.json(Method::POST, "/api/services", Some(spec)).await
    }

    pub async fn services(&self) -> anyhow::Result<ServiceList> {
        self.json(Method::GET, "/api/services", None::<&()>).await
    }

    pub async fn service(&self, name: &str) -> anyhow::Result<ServiceView> {
        let path = format!("/api/services/{}", url_component(name));
        self.json(Method::GET, &path, None::<&()>).await
    }

    /// A new spec for the service named in it: a rolling update when the replica's
    /// template changed, else only its count, autoscaling or rollout settings.
    pub async fn service_update(&self, spec: &ServiceSpec) -> anyhow::Result<ServiceView> {
        let path = format!("/api/services/{}", url_component(&spec.name));
        self.json(Method::PUT, &path, Some(spec)).await
    }

    pub async fn service_delete(&self, name: &str) -> anyhow::Result<ServiceView> {
        let path = format!("/api/services/{}", url_component(name));
        self.json(Method::DELETE, &path, None::<&()>).await
    }
}
