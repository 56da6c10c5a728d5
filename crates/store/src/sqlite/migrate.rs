//! SQLite's schema versions, oldest first: the store's history since schema 1 (the
//! code that applies them, and PostgreSQL's own list, are in `sql/migrate.rs` and
//! `postgres/migrate.rs`).

use sqlx::AnyConnection;

use super::v1;
use crate::sql::migrate::{
    placement_steps, services_steps, Migration, Step, CONTAIN_NAME, PLACEMENT_NAME, SERVICES_NAME,
    UNWRITTEN_TASKS,
};
use crate::sql::Dialect;
use crate::sql::{ended, history, jobs, lease};
use crate::StoreError;

/// The newest SQLite schema this binary knows.
pub const LATEST: i64 = 17;

/// Every SQLite schema version, oldest first.
pub fn migrations() -> Vec<Migration> {
    let mut v2 = vec![
        // The index would follow the renamed table and clash with the new one's.
        Step::Sql("DROP INDEX IF EXISTS jobs_state"),
        Step::Sql("ALTER TABLE jobs RENAME TO jobs_v1"),
    ];
    v2.extend(jobs::CREATE_V2.iter().map(|s| Step::Sql(s)));
    v2.push(Step::Rust(|c| Box::pin(upgrade_v1_jobs(c))));
    v2.push(Step::Sql("DROP TABLE jobs_v1"));
    vec![
        Migration {
            version: 1,
            name: "jobs as JSON rows of the API type",
            steps: v1::SCHEMA.iter().map(|s| Step::Sql(s)).collect(),
        },
        Migration {
            version: 2,
            name: "jobs as the server's own model, one column per fact",
            steps: v2,
        },
        Migration {
            version: 3,
            name: "gang jobs: nodes, GPUs per node, split, tasks per node, parts, master port",
            steps: jobs::ADD_GANG_COLUMNS
                .iter()
                .map(|s| Step::Sql(s))
                .collect(),
        },
        Migration {
            version: 4,
            name: "energy per job: Joules its GPUs drew",
            steps: jobs::ADD_ENERGY_COLUMNS
                .iter()
                .map(|s| Step::Sql(s))
                .collect(),
        },
        Migration {
            version: 5,
            name: "history: each job's timeline (job_events) and the audit log of admin actions",
            steps: history::CREATE_V5.iter().map(|s| Step::Sql(s)).collect(),
        },
        Migration {
            version: 6,
            name: "dependency kinds (after_any, after_notok), holds, and arrays (one row each; task rows name their array)",
            steps: jobs::ADD_WORKFLOW_COLUMNS
                .iter()
                .map(|s| Step::Sql(s))
                .collect(),
        },
        Migration {
            version: 7,
            name: "history at scale: indexes for reading ended jobs from the store",
            steps: ended::ADD_HISTORY_INDEXES
                .iter()
                .map(|s| Step::Sql(s))
                .collect(),
        },
        Migration {
            version: 8,
            name: "leader lease: the epoch, holder and URL of the leading server",
            steps: std::iter::once(Step::Rust(|c| Box::pin(add_array_progress(c))))
                .chain(lease::CREATE_V8.iter().map(|s| Step::Sql(s)))
                .collect(),
        },
        Migration {
            version: 9,
            name: "followers: the job a pending one is queued behind, and attempts taken back",
            steps: jobs::ADD_FOLLOW_COLUMNS
                .iter()
                .map(|s| Step::Sql(s))
                .collect(),
        },
        UNWRITTEN_TASKS,
        Migration {
            version: 11,
            name: CONTAIN_NAME,
            steps: jobs::ADD_CONTAIN_COLUMNS
                .iter()
                .map(|s| Step::Sql(s))
                .collect(),
        },
        Migration {
            version: 12,
            name: SERVICES_NAME,
            steps: services_steps(),
        },
        Migration {
            version: 13,
            name: PLACEMENT_NAME,
            steps: placement_steps(Dialect::Sqlite),
        },
        Migration {
            version: 14,
            name: crate::sql::migrate::STEPS_NAME,
            steps: crate::sql::migrate::steps_steps(),
        },
        Migration {
            version: 15,
            name: crate::sql::migrate::ALLOC_USE_NAME,
            steps: crate::sql::migrate::alloc_use_steps(Dialect::Sqlite),
        },
        Migration {
            version: 16,
            name: crate::sql::migrate::ACCOUNTS_NAME,
            steps: crate::sql::migrate::accounts_steps(),
        },
        Migration {
            version: 17,
            name: crate::sql::migrate::ARRAY_TASKS_NAME,
            steps: crate::sql::migrate::array_tasks_steps(Dialect::Sqlite),
        },
    ]
}

/// Schema 1's rows, converted one by one; one that does not decode fails the upgrade
/// (rolled back, the database left at schema 1) and is named.
async fn upgrade_v1_jobs(conn: &mut AnyConnection) -> Result<(), StoreError> {
    let rows: Vec<(i64, String)> = sqlx::query_as("SELECT id, data FROM jobs_v1 ORDER BY id")
        .fetch_all(&mut *conn)
        .await?;
    for (id, data) in rows {
        let old: v1::V1Job = serde_json::from_str(&data).map_err(|source| StoreError::Corrupt {
            what: format!("job {id} (schema 1)"),
            source,
        })?;
        let row = old.upgrade().map_err(|why| StoreError::Row {
            what: format!("job {id} (schema 1)"),
            why,
        })?;
        jobs::put_as(&mut *conn, &row, jobs::Layout::V2).await?;
    }
    Ok(())
}

/// Schema 6 as main first had it (760d8a6, 2026-12-01, to ca5faf8, which added the column
/// to schema 6 without a new version) had no `array_progress`: a database written by
/// main in between, at schema 6 or 7, reached later schemas without it and then could not
/// be read ("no such column: array_progress"; the fixture of schema 6,
/// tests/fixtures/v6-2026-12-01). The column is added where it is missing; every other
/// database has it already and is left as it is.
async fn add_array_progress(conn: &mut AnyConnection) -> Result<(), StoreError> {
    let has: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pragma_table_info('jobs') WHERE name = 'array_progress'",
    )
    .fetch_one(&mut *conn)
    .await?;
    if has == 0 {
        sqlx::query("ALTER TABLE jobs ADD COLUMN array_progress TEXT")
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}
