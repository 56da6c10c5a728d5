//! Which local address this host uses to reach the server: the default address the
//! agent advertises to other nodes (`MASTER_ADDR`, hostfiles). Connecting a UDP socket
//! sends nothing; it only makes the kernel pick the route and its source address.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

/// The local IP of the route to `server` (`http(s)://host:port`).
pub async fn local_addr_towards(server: &str) -> io::Result<IpAddr> {
    let url = reqwest::Url::parse(server)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{server}: {e}")))?;
    let host = url.host_str().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{server} names no host"),
        )
    })?;
    // `[::1]` comes bracketed from the URL.
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let target = tokio::net::lookup_host((host.as_str(), port))
        .await?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address")))?;
    local_addr_to(target)
}

fn local_addr_to(target: SocketAddr) -> io::Result<IpAddr> {
    let any: IpAddr = match target {
        SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let socket = UdpSocket::bind(SocketAddr::new(any, 0))?;
    socket.connect(target)?;
    Ok(socket.local_addr()?.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_server_on_loopback_is_reached_from_loopback() {
        let ip = local_addr_towards("http://127.0.0.1:6450").await.unwrap();
        assert_eq!(ip, IpAddr::from([127, 0, 0, 1]));
        let ip = local_addr_towards("http://localhost:6450").await.unwrap();
        assert!(ip.is_loopback(), "{ip}");
    }

    #[tokio::test]
    async fn a_url_without_a_host_is_an_error() {
        assert!(local_addr_towards("not a url").await.is_err());
    }
}
