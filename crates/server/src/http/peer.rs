//! The address of a TCP client as the listener saw it, for the agents' registration: an
//! agent that does not say where other nodes reach it (`--advertise-addr`, older agents)
//! is reachable, as far as the server knows, where its connection came from.

use std::net::SocketAddr;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use tokio::net::TcpListener;

use crate::bounded::Bounded;
use crate::tls::TlsListener;

/// The remote address of a TCP (or TLS) connection.
#[derive(Clone, Copy, Debug)]
pub struct TcpPeer(pub SocketAddr);

impl Connected<IncomingStream<'_, Bounded<TcpListener>>> for TcpPeer {
    fn connect_info(stream: IncomingStream<'_, Bounded<TcpListener>>) -> Self {
        TcpPeer(*stream.remote_addr())
    }
}

impl Connected<IncomingStream<'_, Bounded<TlsListener>>> for TcpPeer {
    fn connect_info(stream: IncomingStream<'_, Bounded<TlsListener>>) -> Self {
        TcpPeer(*stream.remote_addr())
    }
}

#[cfg(test)]
mod tests {
    use gpusched_wire::Register;

    /// An agent that registers over TCP without `advertise_addr` is recorded at the
    /// address its connection came from (loopback here); one that says is kept as said.
    #[tokio::test]
    async fn an_agent_without_an_address_is_recorded_where_it_connected_from() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let listen = "127.0.0.1:0".parse().expect("an address");
        let cfg = crate::config::ServerConfig::new(dir.path().to_path_buf(), listen);
        let bound = crate::bind(cfg).await.expect("the server binds");
        let (url, token) = (bound.url(), bound.join_token().to_string());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(bound.serve(async {
            let _ = stopped.await;
        }));
        let http = reqwest::Client::new();
        for (node, said) in [("quiet", None), ("says", Some("10.1.2.3"))] {
            let reg = Register {
                node: node.into(),
                containment: None,
                agent_version: "test".into(),
                gpus: vec![],
                cpus: 1,
                mem_mib: 1024,
                mps: false,
                log_url: None,
                log_token: None,
                resources: Default::default(),
                features: Vec::new(),
                advertise_addr: said.map(String::from),
                location: Default::default(),
                gpu_links: vec![],
                running: vec![],
                events: vec![],
            };
            let resp = http
                .post(format!("{url}/api/agent/register"))
                .bearer_auth(&token)
                .header(
                    gpusched_wire::agent::PROTOCOL_HEADER,
                    gpusched_wire::agent::AGENT_PROTOCOL,
                )
                .json(&reg)
                .send()
                .await
                .expect("the server answers");
            assert!(resp.status().is_success(), "{}", resp.status());
        }
        let _ = stop.send(());
        server
            .await
            .expect("the server task")
            .expect("the server stops cleanly");
        let mut store = gpusched_store::Store::open_dir(dir.path())
            .await
            .expect("the store opens");
        let nodes = store.load_nodes().await.expect("the nodes load");
        let addr = |name: &str| {
            nodes
                .iter()
                .find(|n| n.register.node == name)
                .and_then(|n| n.register.advertise_addr.clone())
        };
        assert_eq!(addr("quiet").as_deref(), Some("127.0.0.1"));
        assert_eq!(addr("says").as_deref(), Some("10.1.2.3"));
    }
}
