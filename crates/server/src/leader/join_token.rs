//! Servers on one store agree on the agents' join token.
//!
//! Each server reads the join token from its own file (`--join-token-file`, by default
//! made anew in its data directory). Servers sharing a PostgreSQL store that were given
//! different files run fine until the first failover, when every agent is refused by the
//! new leader and every job waits for a node forever. So the first server on a store
//! records the token's SHA-256 in `meta`, and a server whose token differs refuses to
//! start, naming the file to copy. An SQLite store belongs to one server (its data
//! directory's lock says so), which may change its token between lives.

use std::path::Path;

use gpusched_store::Store;

/// The `meta` key of the join token's SHA-256 (hex).
pub const JOIN_TOKEN_KEY: &str = "join_token_sha256";

/// Records `hash` as the store's join token if none is, and refuses a different one.
pub(crate) async fn agree(store: &mut Store, hash: &str, file: &Path) -> anyhow::Result<()> {
    if let Some(kept) = store.meta(JOIN_TOKEN_KEY).await? {
        return same(&kept, hash, file);
    }
    let mut tx = store.begin().await?;
    tx.put_meta(JOIN_TOKEN_KEY, hash).await?;
    tx.commit().await?;
    // Two servers that started at once both wrote theirs: the last write is the store's,
    // and the other server learns it here.
    let kept = store.meta(JOIN_TOKEN_KEY).await?.unwrap_or_default();
    same(&kept, hash, file)
}

fn same(kept: &str, hash: &str, file: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(
        kept == hash,
        "this server's join token ({}) is not the one the other servers on this store use: \
         agents would be refused by this server whenever it leads. Copy the join-token file \
         of a server of this cluster to {} (mode 0600), or point --join-token-file at that \
         copy, and start again",
        file.display(),
        file.display()
    );
    Ok(())
}
