//! Trusting a server's private certificate (`--ca-cert FILE`, `GPUSCHED_CA_CERT`), and
//! saying why a TLS connection failed. Shared by the agent and the CLI, which reach the
//! server through the same reqwest and rustls.

use std::path::Path;

use anyhow::Context;

/// The certificates of a PEM file given as `--ca-cert`: every `BEGIN CERTIFICATE` block
/// (a bundle may hold several). A file that holds none (a private key given by mistake,
/// a DER file, an empty file) is refused here, naming it: reqwest would accept it and
/// every connection would then fail as an untrusted server.
pub fn read_ca_certs(path: &Path) -> anyhow::Result<Vec<reqwest::Certificate>> {
    let pem = std::fs::read(path)
        .with_context(|| format!("cannot read the CA certificate {}", path.display()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .with_context(|| format!("{} is not a PEM certificate", path.display()))?;
    if certs.is_empty() {
        let key = String::from_utf8_lossy(&pem).contains("PRIVATE KEY");
        anyhow::bail!(
            "{} holds no PEM certificate (no `-----BEGIN CERTIFICATE-----` block{}); give \
             --ca-cert the server's certificate (the file its --tls-cert names) or the CA \
             certificate that signed it",
            path.display(),
            if key { "; it holds a private key" } else { "" }
        );
    }
    Ok(certs)
}

pub use gpusched_wire::text::error_chain;

/// Whether a connection failed on the server's certificate, from its error chain:
/// rustls says `invalid peer certificate: REASON` for each such refusal.
pub fn is_certificate_error(chain: &str) -> bool {
    chain.contains("invalid peer certificate")
}

/// What to do about a certificate refusal (`chain`, from [`error_chain`]) of the server at
/// `server`, for a client given `ca_cert` (None: only the system's roots). None for
/// another error.
pub fn certificate_advice(server: &str, chain: &str, ca_cert: Option<&Path>) -> Option<String> {
    if !is_certificate_error(chain) {
        return None;
    }
    let reason = chain
        .rsplit("invalid peer certificate: ")
        .next()
        .unwrap_or(chain);
    let fix = if reason.contains("NotValidForName") {
        "its certificate does not name the host in --server: use a name or address it \
         names, or have its operator add this one (subjectAltName)"
            .to_string()
    } else if reason.contains("Expired") || reason.contains("NotValidYet") {
        "its certificate is outside its validity dates: its operator should renew it (or \
         this host's clock is wrong)"
            .to_string()
    } else {
        match ca_cert {
            Some(path) => format!(
                "{} (--ca-cert, GPUSCHED_CA_CERT) neither is that certificate nor signed \
                 it: give the server's certificate (the file its --tls-cert names) or the \
                 CA that signed it",
                path.display()
            ),
            None => "give the server's certificate (the file its --tls-cert names) or the \
                     CA that signed it with --ca-cert FILE (or GPUSCHED_CA_CERT=FILE)"
                .to_string(),
        }
    };
    Some(format!(
        "the server at {server} presents a certificate this host does not trust ({reason}); \
         {fix}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn a_file_without_a_certificate_is_refused_naming_it() {
        let dir = std::env::temp_dir().join(format!("gpusched-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = file(
            &dir,
            "key.pem",
            "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIB8XsLKb3wJkC2qU4Ww3xYf6n8u0Jb2iWQyGQ1p5fW3T\n-----END PRIVATE KEY-----\n",
        );
        let e = read_ca_certs(&key).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{} holds no PEM certificate", key.display())),
            "{e}"
        );
        assert!(e.contains("it holds a private key"), "{e}");
        assert!(e.contains("--ca-cert"), "{e}");
        let empty = file(&dir, "empty.pem", "");
        let e = read_ca_certs(&empty).unwrap_err().to_string();
        assert!(e.contains("holds no PEM certificate"), "{e}");
        assert!(!e.contains("private key"), "{e}");
        let missing = dir.join("missing.pem");
        let e = read_ca_certs(&missing).unwrap_err().to_string();
        assert!(e.starts_with("cannot read the CA certificate"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[derive(Debug)]
    struct E(&'static str, Option<Box<E>>);
    impl std::fmt::Display for E {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for E {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn the_chain_says_every_cause_once() {
        let e = E(
            "error sending request for url (https://gpu1:6450/api/agents/register)",
            Some(Box::new(E(
                "client error (Connect)",
                Some(Box::new(E(
                    "invalid peer certificate: UnknownIssuer",
                    Some(Box::new(E("invalid peer certificate: UnknownIssuer", None))),
                ))),
            ))),
        );
        assert_eq!(
            error_chain(&e),
            "error sending request for url (https://gpu1:6450/api/agents/register): \
             client error (Connect): invalid peer certificate: UnknownIssuer"
        );
    }

    #[test]
    fn certificate_refusals_say_what_to_give() {
        let chain = "error sending request: client error (Connect): invalid peer \
                     certificate: UnknownIssuer";
        let a = certificate_advice("https://gpu1:6450", chain, None).unwrap();
        assert!(
            a.starts_with(
                "the server at https://gpu1:6450 presents a certificate this host does not \
                 trust (UnknownIssuer)"
            ),
            "{a}"
        );
        assert!(
            a.contains("--ca-cert FILE (or GPUSCHED_CA_CERT=FILE)"),
            "{a}"
        );
        assert!(!a.contains("gpusched up"), "{a}");
        let a = certificate_advice("s", chain, Some(Path::new("/etc/ca.pem"))).unwrap();
        assert!(
            a.contains("/etc/ca.pem (--ca-cert, GPUSCHED_CA_CERT) neither"),
            "{a}"
        );
        let a = certificate_advice("s", "invalid peer certificate: NotValidForName", None);
        assert!(a.unwrap().contains("does not name the host in --server"));
        let a = certificate_advice("s", "invalid peer certificate: Expired", None);
        assert!(a.unwrap().contains("renew"));
        assert_eq!(certificate_advice("s", "connection refused", None), None);
    }
}
