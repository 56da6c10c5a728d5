//! A round's writes on PostgreSQL (`sql/round.rs`): through sqlx's connection, statement
//! by statement (each one a round trip to the database anyway), in one fenced
//! transaction.

use crate::sql::round::{RoundWrites, NODE_UPSERT, TOKEN_UPSERT};
use crate::sql::values::Val;
use crate::sql::Store;
use crate::StoreError;

/// Writes `w` in one transaction of the store's connection.
pub(crate) async fn write_round(store: &mut Store, w: RoundWrites) -> Result<(), StoreError> {
    let mut tx = store.begin().await?;
    tx.put_stored_jobs(&w.jobs).await?;
    for (name, data) in &w.nodes {
        tx.execute_vals(
            NODE_UPSERT,
            &[Val::Text(name.into()), Val::Text(data.into())],
        )
        .await?;
    }
    for (id, hash, data) in &w.tokens {
        let vals = [
            Val::Int(*id),
            Val::Text(hash.into()),
            Val::Text(data.into()),
        ];
        tx.execute_vals(TOKEN_UPSERT, &vals).await?;
    }
    tx.add_events(&w.events, w.keep).await?;
    for entry in &w.audit {
        tx.add_audit(entry).await?;
    }
    for (key, value) in &w.meta {
        tx.put_meta(key, value).await?;
    }
    tx.commit().await
}
