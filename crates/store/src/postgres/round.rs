//! A round's writes on PostgreSQL (`sql/round.rs`): through sqlx's connection, statement
//! by statement (each one a round trip to the database anyway), in one fenced
//! transaction.

use gpusched_wire::history::{AuditEntry, JobEvent};

use crate::array_task::CompactTask;
use crate::sql::array_tasks;
use crate::sql::dialect::pow2_chunks;
use crate::sql::round::{
    job_chunk, JobRows, RoundTarget, RoundWrites, NODE_UPSERT, RESERVATION_DELETE,
    RESERVATION_UPSERT, SERVICE_DELETE, SERVICE_UPSERT, TOKEN_UPSERT,
};
use crate::sql::values::Val;
use crate::sql::{Store, StoreTx};
use crate::stored_job::StoredJob;
use crate::StoreError;

/// Writes `w` in one transaction of the store's connection, after the job rows of
/// `rows` (if given), drawn a chunk at a time (`Store::write_round_streamed`).
pub(crate) async fn write_round(
    store: &mut Store,
    w: RoundWrites,
    rows: Option<JobRows<'_>>,
) -> Result<(), StoreError> {
    let mut tx = store.begin().await?;
    if let Some(JobRows { first, more }) = rows {
        tx.put_jobs(&first).await?;
        drop(first);
        loop {
            let chunk = job_chunk(more);
            if chunk.is_empty() {
                break;
            }
            tx.put_jobs(&chunk).await?;
        }
    }
    w.write_to(&mut tx).await?;
    tx.commit().await
}

/// Each kind as the transaction writes it outside a round too.
impl RoundTarget for StoreTx<'_> {
    async fn jobs(&mut self, rows: &[StoredJob]) -> Result<(), StoreError> {
        self.put_jobs(rows).await
    }

    async fn tasks(&mut self, tasks: &[CompactTask]) -> Result<(), StoreError> {
        let d = crate::sql::Dialect::Postgres;
        for chunk in pow2_chunks(tasks, array_tasks::ROWS_PER_STATEMENT) {
            let mut vals = Vec::with_capacity(chunk.len() * array_tasks::COLUMNS.len());
            for t in chunk {
                vals.extend(array_tasks::values(t)?);
            }
            self.execute_vals(&array_tasks::upsert_rows(d, chunk.len()), &vals)
                .await?;
        }
        Ok(())
    }

    async fn promote(&mut self, id: u64) -> Result<Vec<JobEvent>, StoreError> {
        let events = self.compact_events(id).await?;
        let key = crate::sql::values::int(id, "id", id)?;
        self.execute_vals(array_tasks::DELETE, &[Val::Int(key)])
            .await?;
        Ok(events)
    }

    async fn node(&mut self, name: &str, data: &str) -> Result<(), StoreError> {
        self.execute_vals(
            NODE_UPSERT,
            &[Val::Text(name.into()), Val::Text(data.into())],
        )
        .await
    }

    async fn token(&mut self, id: i64, hash: &str, data: &str) -> Result<(), StoreError> {
        let vals = [Val::Int(id), Val::Text(hash.into()), Val::Text(data.into())];
        self.execute_vals(TOKEN_UPSERT, &vals).await
    }

    async fn service(&mut self, name: &str, data: &str) -> Result<(), StoreError> {
        self.execute_vals(
            SERVICE_UPSERT,
            &[Val::Text(name.into()), Val::Text(data.into())],
        )
        .await
    }

    async fn service_gone(&mut self, name: &str) -> Result<(), StoreError> {
        self.execute_vals(SERVICE_DELETE, &[Val::Text(name.into())])
            .await
    }

    async fn reservation(&mut self, name: &str, data: &str) -> Result<(), StoreError> {
        self.execute_vals(
            RESERVATION_UPSERT,
            &[Val::Text(name.into()), Val::Text(data.into())],
        )
        .await
    }

    async fn reservation_gone(&mut self, name: &str) -> Result<(), StoreError> {
        self.execute_vals(RESERVATION_DELETE, &[Val::Text(name.into())])
            .await
    }

    async fn step(&mut self, job: i64, step: i64, data: &str) -> Result<(), StoreError> {
        self.execute_vals(
            crate::sql::steps::STEP_UPSERT,
            &[Val::Int(job), Val::Int(step), Val::Text(data.into())],
        )
        .await
    }

    async fn events(&mut self, events: &[(u64, JobEvent)], keep: u32) -> Result<(), StoreError> {
        self.add_events(events, keep).await
    }

    async fn audit(&mut self, entry: &AuditEntry) -> Result<(), StoreError> {
        self.add_audit(entry).await
    }

    async fn meta(&mut self, key: &str, value: &str) -> Result<(), StoreError> {
        self.put_meta(key, value).await
    }
}
