//! What the agent says when it cannot reach a server.

#[test]
fn an_unreachable_server_says_why_and_a_refused_certificate_what_to_give() {
    let unreachable = super::super::client::unreachable;
    let chain = "error sending request for url (https://gpu1:6450/api/agents/register): \
                 client error (Connect): invalid peer certificate: UnknownIssuer";
    let said = unreachable("https://gpu1:6450", chain, None);
    assert_eq!(
        said,
        "cannot reach the server: the server at https://gpu1:6450 presents a certificate \
         this host does not trust (UnknownIssuer); give the server's certificate (the file \
         its --tls-cert names) or the CA that signed it with --ca-cert FILE (or \
         GPUSCHED_CA_CERT=FILE); retrying"
    );
    let said = unreachable(
        "https://gpu1:6450",
        chain,
        Some(std::path::Path::new("/etc/gpusched/ca.pem")),
    );
    assert!(
        said.contains("/etc/gpusched/ca.pem (--ca-cert, GPUSCHED_CA_CERT)"),
        "{said}"
    );
    let refused = "error sending request for url (http://gpu1:6450/): client error \
                   (Connect): tcp connect error: Connection refused (os error 111)";
    assert_eq!(
        unreachable("http://gpu1:6450", refused, None),
        format!("cannot reach the server at http://gpu1:6450 ({refused}); retrying")
    );
}
