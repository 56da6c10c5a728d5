//! Ended jobs, read from the store: the server keeps only live jobs in memory (pending,
//! starting, running), so every read of a job that ended comes here: one row by id or
//! client token, a page of a list, the usage aggregate, the counts per state, and the
//! purge of old ones. Schema 7 adds the indexes these need.

use futures_util::TryStreamExt;
use sqlx::{AnyConnection, Row};

use std::collections::HashMap;

use super::dialect::{Dialect, Marks};
use super::{array_tasks, jobs};
use crate::stored_job::StoredJob;
use crate::StoreError;

/// Schema 7: what the reads of ended jobs look up. Lists walk the primary key newest
/// first; a user's list (and every list under `--private-jobs`) walks (user, id); usage
/// windows and purges look up the end time. Each index costs every write a little (see
/// the note in `jobs.rs`), so there are only these.
pub const ADD_HISTORY_INDEXES: &[&str] = &[
    "CREATE INDEX jobs_user_id ON jobs(user, id)",
    "CREATE INDEX jobs_end_ms ON jobs(end_ms) WHERE end_ms IS NOT NULL",
];

/// The terminal states as SQL (the wire names, as stored).
const TERMINAL: &str = "('succeeded', 'failed', 'cancelled', 'timed_out')";

/// What a page of ended jobs asks for: ids in `[from, to)`, newest first, at most
/// `limit`, in one of `states` (all terminal ones when empty), of `user`, on `node`
/// (its first node or any part's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndedQuery {
    pub from: u64,
    pub to: u64,
    pub limit: usize,
    pub states: Vec<gpusched_wire::JobState>,
    pub user: Option<String>,
    pub node: Option<String>,
    /// Which rows of arrays' tasks: all, none, or one array's only.
    pub tasks: TaskRows,
}

/// Which ended task rows a page holds: a list of jobs shows an array as one item (its
/// tasks only when asked, or by node, where tasks are what ran); an array's task list
/// holds its own tasks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskRows {
    #[default]
    All,
    None,
    Of(u64),
}

/// One user's (or queue's) ended jobs in a usage window, summed by the database.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UsageSum {
    pub key: String,
    pub jobs: u64,
    pub gpu_hours: f64,
    pub succeeded: u64,
    pub failed: u64,
    pub cancelled: u64,
    pub timed_out: u64,
    /// Seconds from submission to start, summed over `jobs` (all of them started).
    pub wait_s: f64,
    pub energy_j: u64,
    /// CPU milliseconds measured (schema 11), each job's whole.
    pub cpu_ms: u64,
    /// Peak memory (GiB) x nodes x hours run in the window.
    pub mem_gib_hours: f64,
    /// Interactive allocations' GPU-seconds held idle (schema 15), each job's whole.
    pub idle_gpu_s: u64,
    /// Steps that ran in the jobs, and their GPU-seconds (schema 15), each job's whole.
    pub steps: u64,
    pub step_gpu_s: u64,
}

fn select(filter: &str) -> String {
    format!(
        "SELECT {} FROM jobs WHERE {filter}",
        jobs::all_columns().join(", ")
    )
}

fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The jobs that are not over (the server's working set at start), by id.
/// Live compact tasks are rebuilt from their arrays' rows, which are live too (an array
/// ends after its last task).
pub async fn load_live(conn: &mut AnyConnection) -> Result<Vec<StoredJob>, StoreError> {
    let sql = select(&format!("state NOT IN {TERMINAL} ORDER BY id"));
    let rows = sqlx::query(&sql).fetch_all(&mut *conn).await?;
    let mut jobs: Vec<StoredJob> = rows.iter().map(jobs::decode).collect::<Result<_, _>>()?;
    let sql = array_tasks::select(&format!("t.state NOT IN {TERMINAL} ORDER BY t.id"));
    let arrays: HashMap<u64, &StoredJob> = jobs
        .iter()
        .filter(|j| j.array.is_some())
        .map(|j| (j.id, j))
        .collect();
    let tasks = array_tasks::rebuilt(conn, &sql, &[], Some(&arrays)).await?;
    if !tasks.is_empty() {
        jobs.extend(tasks);
        jobs.sort_unstable_by_key(|j| j.id);
    }
    Ok(jobs)
}

/// The ids of the live tasks kept as compact records (the server writes them so while
/// they stay exactly what their record rebuilds).
pub async fn live_compact(conn: &mut AnyConnection) -> Result<Vec<u64>, StoreError> {
    let sql = format!("SELECT id FROM array_tasks WHERE state NOT IN {TERMINAL} ORDER BY id");
    let ids: Vec<i64> = sqlx::query_scalar(&sql).fetch_all(conn).await?;
    Ok(ids.into_iter().map(|i| i.max(0) as u64).collect())
}

/// The highest job id ever stored (0 for none), so ids are never reused: the table's,
/// or the one a purge noted before it deleted rows (`purge`), whichever is higher.
pub async fn max_id(conn: &mut AnyConnection, d: Dialect) -> Result<u64, StoreError> {
    let sql = format!(
        "SELECT {g}({g}(COALESCE((SELECT MAX(id) FROM jobs), 0),
                        COALESCE((SELECT MAX(id) FROM array_tasks), 0)),
                   COALESCE((SELECT CAST(value AS BIGINT) FROM meta
                             WHERE key = 'max_job_id'), 0))",
        g = d.greatest()
    );
    let id: Option<i64> = sqlx::query_scalar(&sql).fetch_one(conn).await?;
    Ok(id.map_or(0, |i| i.max(0) as u64))
}

/// One job, whatever its state: its row, or its compact record rebuilt.
pub async fn get(conn: &mut AnyConnection, id: u64) -> Result<Option<StoredJob>, StoreError> {
    if let Some(j) = get_row(&mut *conn, id).await? {
        return Ok(Some(j));
    }
    let sql = array_tasks::select("t.id = $1");
    Ok(array_tasks::rebuilt(conn, &sql, &[i64_of(id)], None)
        .await?
        .pop())
}

/// One job's row of `jobs` (an array's is always there).
pub(crate) async fn get_row(
    conn: &mut AnyConnection,
    id: u64,
) -> Result<Option<StoredJob>, StoreError> {
    let row = sqlx::query(&select("id = $1"))
        .bind(i64_of(id))
        .fetch_optional(conn)
        .await?;
    row.as_ref().map(jobs::decode).transpose()
}

/// Task `index` of array `array_id`, once it was written (the `jobs_array` and
/// `array_tasks_array` indexes).
pub async fn task(
    conn: &mut AnyConnection,
    array_id: u64,
    index: u32,
) -> Result<Option<StoredJob>, StoreError> {
    let row = sqlx::query(&select("array_id = $1 AND array_index = $2"))
        .bind(i64_of(array_id))
        .bind(i64::from(index))
        .fetch_optional(&mut *conn)
        .await?;
    if let Some(row) = row {
        return jobs::decode(&row).map(Some);
    }
    let sql = array_tasks::select("t.array_id = $1 AND t.array_index = $2");
    let binds = [i64_of(array_id), i64::from(index)];
    Ok(array_tasks::rebuilt(conn, &sql, &binds, None).await?.pop())
}

/// The job a client token (as stored: `user/token`) was accepted as.
pub async fn id_by_token(conn: &mut AnyConnection, token: &str) -> Result<Option<u64>, StoreError> {
    let id: Option<i64> = sqlx::query_scalar("SELECT id FROM jobs WHERE client_token = $1")
        .bind(token)
        .fetch_optional(conn)
        .await?;
    Ok(id.map(|i| i.max(0) as u64))
}

/// A page of ended jobs, newest first.
pub async fn page(
    conn: &mut AnyConnection,
    d: Dialect,
    q: &EndedQuery,
) -> Result<Vec<StoredJob>, StoreError> {
    let states: Vec<&str> = q
        .states
        .iter()
        .filter(|s| s.is_terminal())
        .map(|s| s.name())
        .collect();
    let mut m = Marks::default();
    let mut filter = format!("id >= {} AND id < {}", m.next(), m.next());
    if states.is_empty() {
        filter.push_str(&format!(" AND state IN {TERMINAL}"));
    } else {
        filter.push_str(&format!(" AND state IN ({})", m.list(states.len())));
    }
    if q.user.is_some() {
        filter.push_str(&format!(" AND \"user\" = {}", m.next()));
    }
    if q.node.is_some() {
        let (a, b) = (m.next(), m.next());
        // A gang's parts are a JSON list of objects with a `node`.
        filter.push_str(&match d {
            Dialect::Sqlite => format!(
                " AND (node = {a} OR EXISTS (SELECT 1 FROM json_each(jobs.parts) \
                 WHERE json_extract(json_each.value, '$.node') = {b}))"
            ),
            Dialect::Postgres => format!(
                " AND (node = {a} OR EXISTS (SELECT 1 FROM \
                 jsonb_array_elements(jobs.parts::jsonb) AS p WHERE p ->> 'node' = {b}))"
            ),
        });
    }
    match q.tasks {
        TaskRows::All => {}
        TaskRows::None => filter.push_str(" AND array_id IS NULL"),
        TaskRows::Of(_) => filter.push_str(&format!(" AND array_id = {}", m.next())),
    }
    filter.push_str(&format!(" ORDER BY id DESC LIMIT {}", m.next()));
    let sql = select(&filter);
    let mut query = sqlx::query(&sql).bind(i64_of(q.from)).bind(i64_of(q.to));
    for s in &states {
        query = query.bind(*s);
    }
    if let Some(u) = &q.user {
        query = query.bind(u);
    }
    if let Some(n) = &q.node {
        query = query.bind(n).bind(n);
    }
    if let TaskRows::Of(a) = q.tasks {
        query = query.bind(i64_of(a));
    }
    // Decoded row by row as they arrive: a page may be 100,000 jobs, and holding every
    // row as the driver gives it (each column named and boxed) beside the decoded jobs
    // doubled a large page's memory.
    let mut rows = query
        .bind(i64::try_from(q.limit).unwrap_or(i64::MAX))
        .fetch(&mut *conn);
    let mut out = Vec::new();
    while let Some(row) = rows.try_next().await? {
        out.push(jobs::decode(&row)?);
    }
    drop(rows);
    if q.tasks == TaskRows::None {
        return Ok(out);
    }
    let tasks = compact_page(conn, q, &states).await?;
    if tasks.is_empty() {
        return Ok(out);
    }
    // Both newest first: merged, the page's first `limit`.
    out.extend(tasks);
    out.sort_unstable_by_key(|j| std::cmp::Reverse(j.id));
    out.truncate(q.limit);
    Ok(out)
}

/// The compact tasks of a page (`page`'s filters on `array_tasks`; a task's user is its
/// array's, and a compact task runs on one node).
async fn compact_page(
    conn: &mut AnyConnection,
    q: &EndedQuery,
    states: &[&str],
) -> Result<Vec<StoredJob>, StoreError> {
    let mut m = Marks::default();
    let mut filter = format!("t.id >= {} AND t.id < {}", m.next(), m.next());
    let mut binds = vec![i64_of(q.from), i64_of(q.to)];
    if states.is_empty() {
        filter.push_str(&format!(" AND t.state IN {TERMINAL}"));
    } else {
        // The states are known names: written inline, as their list's marks would bind.
        let names: Vec<String> = states.iter().map(|s| format!("'{s}'")).collect();
        filter.push_str(&format!(" AND t.state IN ({})", names.join(", ")));
    }
    if q.user.is_some() {
        filter.push_str(&format!(
            " AND t.array_id IN (SELECT id FROM jobs WHERE \"user\" = {})",
            m.next()
        ));
    }
    if q.node.is_some() {
        filter.push_str(&format!(" AND t.node = {}", m.next()));
    }
    if let TaskRows::Of(a) = q.tasks {
        filter.push_str(&format!(" AND t.array_id = {}", m.next()));
        binds.push(i64_of(a));
    }
    filter.push_str(&format!(" ORDER BY t.id DESC LIMIT {}", m.next()));
    let sql = array_tasks::select(&filter);
    // Text binds (user, node) go through their own query: `rebuilt` binds integers.
    let mut query = sqlx::query(&sql).bind(binds[0]).bind(binds[1]);
    if let Some(u) = &q.user {
        query = query.bind(u.as_str());
    }
    if let Some(n) = &q.node {
        query = query.bind(n.as_str());
    }
    for b in &binds[2..] {
        query = query.bind(*b);
    }
    let rows = query
        .bind(i64::try_from(q.limit).unwrap_or(i64::MAX))
        .fetch_all(&mut *conn)
        .await?;
    let tasks: Vec<_> = rows
        .iter()
        .map(array_tasks::decode)
        .collect::<Result<_, _>>()?;
    array_tasks::rebuild_all(conn, tasks, None).await
}

/// GPU-hours, outcomes, waits and energy of the ended jobs that ran in the window from
/// `since` (ended at or after it), per user (`by_queue` false) or queue, of `user` only
/// when given. A slice counts as its fraction of a GPU, as in the server's live sum.
pub async fn usage(
    conn: &mut AnyConnection,
    d: Dialect,
    since: u64,
    by_queue: bool,
    user: Option<&str>,
) -> Result<Vec<UsageSum>, StoreError> {
    let key = if by_queue { "queue" } else { "\"user\"" };
    usage_by(conn, d, since, key, user).await
}

/// As [`usage`], per account (`root` for a job charged to none; schema 16's column).
pub async fn usage_by_account(
    conn: &mut AnyConnection,
    d: Dialect,
    since: u64,
    user: Option<&str>,
) -> Result<Vec<UsageSum>, StoreError> {
    usage_by(conn, d, since, "COALESCE(account, 'root')", user).await
}

/// The usage aggregate grouped by the SQL expression `key`.
async fn usage_by(
    conn: &mut AnyConnection,
    d: Dialect,
    since: u64,
    key: &str,
    user: Option<&str>,
) -> Result<Vec<UsageSum>, StoreError> {
    let user_filter = if user.is_some() {
        " AND \"user\" = $2"
    } else {
        ""
    };
    let sql = usage_sql(d, &format!("{key} AS k"), key, user_filter);
    let mut q = sqlx::query(&sql).bind(i64_of(since));
    if let Some(u) = user {
        q = q.bind(u);
    }
    let rows = q.fetch_all(conn).await?;
    rows.iter()
        .map(|r| usage_sum(r).map_err(StoreError::from))
        .collect()
}

/// Every ended job's usage over all time, per (user, queue): the user, and the sum keyed
/// by the queue. What the server keeps up to date as jobs end (`state/ended.rs`), so
/// that a report over all time does not read every row.
pub async fn usage_by_user_and_queue(
    conn: &mut AnyConnection,
    d: Dialect,
) -> Result<Vec<(String, UsageSum)>, StoreError> {
    let sql = usage_sql(d, "\"user\" AS u, queue AS k", "\"user\", queue", "");
    let rows = sqlx::query(&sql).bind(0_i64).fetch_all(conn).await?;
    rows.iter()
        .map(|r| Ok((r.try_get("u")?, usage_sum(r)?)))
        .collect()
}

/// What the usage sums read: every job row but an array's (an array holds nothing
/// itself: its tasks are charged, as in the server's live sum), and every compact task
/// with what it takes from its array (a compact task holds no slice, steps or idle time:
/// those need a row).
const USAGE_ROWS: &str = "(SELECT \"user\", queue, account, gpus, slice_at, state, submit_ms,
        start_ms, end_ms, energy_j, used_cpu_ms, used_mem_peak_bytes, nodes, idle_gpu_s,
        steps_run, step_gpu_s FROM jobs WHERE array_spec IS NULL
     UNION ALL
     SELECT a.\"user\", t.queue, a.account, a.gpus, NULL, t.state, a.submit_ms, t.start_ms,
        t.end_ms, t.energy_j, t.used_cpu_ms, t.used_mem_peak_bytes, a.nodes, NULL, 0, 0
     FROM array_tasks t JOIN jobs a ON a.id = t.array_id)";

/// The usage aggregate selecting `keys` (the sum's key named `k`), grouped and ordered
/// by `group`, from `$1`, with `user_filter` (on `$2`) added to the condition.
fn usage_sql(d: Dialect, keys: &str, group: &str, user_filter: &str) -> String {
    // The same sums in each dialect: SQLite's JSON path and two-argument MAX; on
    // PostgreSQL, jsonb, GREATEST, and casts so that no sum comes back as NUMERIC.
    match d {
        Dialect::Sqlite => format!(
            "SELECT {keys}, COUNT(*) AS n,
            SUM((gpus * 1000 + COALESCE(json_extract(slice_at, '$.milli'), 0)) / 1000.0
                * MAX(end_ms - MAX(start_ms, $1), 0) / 3600000.0) AS gpu_hours,
            SUM(state = 'succeeded') AS ok, SUM(state = 'failed') AS failed,
            SUM(state = 'cancelled') AS cancelled, SUM(state = 'timed_out') AS timed_out,
            SUM(MAX(start_ms - submit_ms, 0) / 1000.0) AS wait_s,
            SUM(COALESCE(energy_j, 0)) AS energy_j,
            SUM(COALESCE(used_cpu_ms, 0)) AS cpu_ms,
            SUM(COALESCE(used_mem_peak_bytes, 0) / 1073741824.0 * MAX(nodes, 1)
                * MAX(end_ms - MAX(start_ms, $1), 0) / 3600000.0) AS mem_gib_hours,
            SUM(COALESCE(idle_gpu_s, 0)) AS idle_gpu_s,
            SUM(steps_run) AS steps_run, SUM(step_gpu_s) AS step_gpu_s
         FROM {USAGE_ROWS} j
         WHERE state IN {TERMINAL} AND start_ms IS NOT NULL AND end_ms >= $1{user_filter}
         GROUP BY {group} ORDER BY {group}"
        ),
        Dialect::Postgres => format!(
            "SELECT {keys}, COUNT(*) AS n,
            SUM((gpus * 1000 + COALESCE((slice_at::jsonb ->> 'milli')::float8, 0)) / 1000.0::float8
                * GREATEST(end_ms - GREATEST(start_ms, $1), 0) / 3600000.0::float8) AS gpu_hours,
            COUNT(*) FILTER (WHERE state = 'succeeded') AS ok,
            COUNT(*) FILTER (WHERE state = 'failed') AS failed,
            COUNT(*) FILTER (WHERE state = 'cancelled') AS cancelled,
            COUNT(*) FILTER (WHERE state = 'timed_out') AS timed_out,
            SUM(GREATEST(start_ms - submit_ms, 0) / 1000.0::float8) AS wait_s,
            CAST(SUM(COALESCE(energy_j, 0)) AS BIGINT) AS energy_j,
            CAST(SUM(COALESCE(used_cpu_ms, 0)) AS BIGINT) AS cpu_ms,
            SUM(COALESCE(used_mem_peak_bytes, 0) / 1073741824.0::float8 * GREATEST(nodes, 1)
                * GREATEST(end_ms - GREATEST(start_ms, $1), 0) / 3600000.0::float8) AS mem_gib_hours,
            CAST(SUM(COALESCE(idle_gpu_s, 0)) AS BIGINT) AS idle_gpu_s,
            CAST(SUM(steps_run) AS BIGINT) AS steps_run,
            CAST(SUM(step_gpu_s) AS BIGINT) AS step_gpu_s
         FROM {USAGE_ROWS} j
         WHERE state IN {TERMINAL} AND start_ms IS NOT NULL AND end_ms >= $1{user_filter}
         GROUP BY {group} ORDER BY {group}"
        ),
    }
}

/// One row of [`usage_sql`].
fn usage_sum(r: &sqlx::any::AnyRow) -> Result<UsageSum, sqlx::Error> {
    let n = |c: &str| -> Result<u64, sqlx::Error> {
        Ok(r.try_get::<Option<i64>, _>(c)?.unwrap_or(0).max(0) as u64)
    };
    Ok(UsageSum {
        key: r.try_get("k")?,
        jobs: n("n")?,
        gpu_hours: r.try_get::<Option<f64>, _>("gpu_hours")?.unwrap_or(0.0),
        succeeded: n("ok")?,
        failed: n("failed")?,
        cancelled: n("cancelled")?,
        timed_out: n("timed_out")?,
        wait_s: r.try_get::<Option<f64>, _>("wait_s")?.unwrap_or(0.0),
        energy_j: n("energy_j")?,
        cpu_ms: n("cpu_ms")?,
        mem_gib_hours: r.try_get::<Option<f64>, _>("mem_gib_hours")?.unwrap_or(0.0),
        idle_gpu_s: n("idle_gpu_s")?,
        steps: n("steps_run")?,
        step_gpu_s: n("step_gpu_s")?,
    })
}

/// Ended jobs per (queue, state), for the metrics' levels.
pub async fn counts(
    conn: &mut AnyConnection,
) -> Result<Vec<(String, gpusched_wire::JobState, u64)>, StoreError> {
    let sql = format!(
        "SELECT queue, state, COUNT(*) FROM (SELECT queue, state FROM jobs
           UNION ALL SELECT queue, state FROM array_tasks) j
         WHERE state IN {TERMINAL} GROUP BY queue, state"
    );
    let rows: Vec<(String, String, i64)> = sqlx::query_as(&sql).fetch_all(conn).await?;
    rows.into_iter()
        .map(|(q, s, n)| {
            let state = gpusched_wire::JobState::parse(&s).ok_or_else(|| StoreError::Row {
                what: format!("jobs of queue {q}"),
                why: format!("unknown state `{s}`"),
            })?;
            Ok((q, state, n.max(0) as u64))
        })
        .collect()
}

/// Deletes the ended jobs that ended before `before_ms` (their timelines go with them,
/// by schema 5's trigger); never a live job. Returns how many.
pub async fn purge(
    conn: &mut AnyConnection,
    d: Dialect,
    before_ms: u64,
) -> Result<u64, StoreError> {
    // The newest job may be among those deleted: its id stays issued.
    let max = max_id(&mut *conn, d).await?;
    sqlx::query(
        "INSERT INTO meta (key, value) VALUES ('max_job_id', $1)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )
    .bind(max.to_string())
    .execute(&mut *conn)
    .await?;
    // Their steps go with them (schema 13).
    let steps = format!(
        "DELETE FROM steps WHERE job_id IN \
         (SELECT id FROM jobs WHERE state IN {TERMINAL} AND end_ms < $1)"
    );
    sqlx::query(&steps)
        .bind(i64_of(before_ms))
        .execute(&mut *conn)
        .await?;
    // Compact tasks: their timelines' first events (in `job_events` from before they
    // were compact) with them, then the tasks that ended before, and those of arrays
    // that go (an array ends after its tasks, so none should be left; none may be).
    let gone = format!(
        "(SELECT id FROM array_tasks WHERE state IN {TERMINAL} AND end_ms < $1
          UNION ALL SELECT t.id FROM array_tasks t JOIN jobs a ON a.id = t.array_id
          WHERE a.state IN {TERMINAL} AND a.end_ms < $1)"
    );
    let mut tasks = 0;
    for sql in [
        format!("DELETE FROM job_events WHERE job IN {gone}"),
        format!("DELETE FROM array_tasks WHERE id IN {gone}"),
    ] {
        tasks = sqlx::query(&sql)
            .bind(i64_of(before_ms))
            .execute(&mut *conn)
            .await?
            .rows_affected();
    }
    let sql = format!("DELETE FROM jobs WHERE state IN {TERMINAL} AND end_ms < $1");
    let done = sqlx::query(&sql)
        .bind(i64_of(before_ms))
        .execute(conn)
        .await?;
    Ok(done.rows_affected() + tasks)
}

#[cfg(test)]
mod tests {
    use super::EndedQuery;
    use crate::sql::test_dbs::{test_dbs, TestDb};
    use crate::sql::Store;
    use crate::StoredJob;
    use gpusched_wire::JobState;

    /// Job `id` of `user` in `state`, on `node`, ran from `start` to `end` (ms) on
    /// `gpus` whole GPUs (or none and a slice of `milli`).
    fn job(id: u64, user: &str, state: JobState, node: &str, run: (u64, u64)) -> StoredJob {
        let mut j = crate::stored_job::tests::full_stored();
        if state.is_terminal() {
            j.end_reason = j.note.take();
        }
        let v = &mut j;
        v.id = id;
        v.user = user.into();
        v.queue = format!("q-{user}");
        v.state = state;
        v.node = Some(node.into());
        v.parts.clear();
        v.gpus = 2;
        v.slice = None;
        v.slice_at = None;
        v.submit_ms = run.0.saturating_sub(1_000);
        v.start_ms = Some(run.0);
        v.end_ms = (state.is_terminal()).then_some(run.1);
        v.energy_j = Some(3_600);
        v.client_token = Some(format!("{user}/t{id}"));
        // A plain job: an array's own row is charged nothing (its tasks are).
        v.array = None;
        v.array_progress = None;
        j
    }

    async fn store_with(db: &TestDb, jobs: &[StoredJob]) -> Store {
        let mut s = db.open().await;
        let mut tx = s.begin().await.unwrap();
        for j in jobs {
            tx.put_job(j).await.unwrap();
        }
        tx.commit().await.unwrap();
        s
    }

    fn ids(jobs: &[StoredJob]) -> Vec<u64> {
        jobs.iter().map(|j| j.id).collect()
    }

    fn sample() -> Vec<StoredJob> {
        use JobState::*;
        vec![
            job(1, "ann", Succeeded, "n1", (10_000, 3_610_000)),
            job(2, "bob", Failed, "n2", (20_000, 30_000)),
            job(3, "ann", Running, "n1", (40_000, 0)),
            job(4, "ann", Cancelled, "n2", (50_000, 7_250_000)),
            job(5, "bob", Pending, "n1", (60_000, 0)),
            job(6, "ann", TimedOut, "n1", (70_000, 80_000)),
        ]
    }

    #[tokio::test]
    async fn only_live_jobs_load_and_the_highest_id_is_kept() {
        for db in &test_dbs("only_live_jobs_load_and_the_highest_id_is_kept").await {
            let mut s = store_with(db, &[]).await;
            assert_eq!(s.max_job_id().await.unwrap(), 0);
            let mut tx = s.begin().await.unwrap();
            for j in sample() {
                tx.put_job(&j).await.unwrap();
            }
            tx.commit().await.unwrap();
            assert_eq!(ids(&s.load_live_jobs().await.unwrap()), [3, 5]);
            assert_eq!(s.max_job_id().await.unwrap(), 6);
            assert_eq!(s.job(4).await.unwrap().unwrap(), sample()[3]);
            assert_eq!(s.job(9).await.unwrap(), None);
            assert_eq!(s.job_by_token("bob/t2").await.unwrap(), Some(2));
            assert_eq!(s.job_by_token("ann/t2").await.unwrap(), None);
        }
    }

    #[tokio::test]
    async fn pages_of_ended_jobs_go_newest_first_with_every_filter() {
        for db in &test_dbs("pages_of_ended_jobs_go_newest_first_with_every_filter").await {
            let mut s = store_with(db, &sample()).await;
            let all = EndedQuery {
                from: 0,
                to: u64::MAX,
                limit: 10,
                ..Default::default()
            };
            assert_eq!(ids(&s.ended_jobs(&all).await.unwrap()), [6, 4, 2, 1]);
            let q = EndedQuery {
                limit: 2,
                ..all.clone()
            };
            assert_eq!(ids(&s.ended_jobs(&q).await.unwrap()), [6, 4]);
            let q = EndedQuery {
                from: 2,
                to: 6,
                ..all.clone()
            };
            assert_eq!(ids(&s.ended_jobs(&q).await.unwrap()), [4, 2]);
            let q = EndedQuery {
                states: vec![JobState::Failed, JobState::TimedOut, JobState::Pending],
                ..all.clone()
            };
            assert_eq!(ids(&s.ended_jobs(&q).await.unwrap()), [6, 2]);
            let q = EndedQuery {
                user: Some("ann".into()),
                ..all.clone()
            };
            assert_eq!(ids(&s.ended_jobs(&q).await.unwrap()), [6, 4, 1]);
            let q = EndedQuery {
                node: Some("n2".into()),
                ..all.clone()
            };
            assert_eq!(ids(&s.ended_jobs(&q).await.unwrap()), [4, 2]);
            // A gang's other parts count as its nodes too.
            let mut gang = job(7, "cy", JobState::Succeeded, "n1", (1, 2));
            gang.parts = crate::stored_job::tests::full_stored().parts;
            let mut tx = s.begin().await.unwrap();
            tx.put_job(&gang).await.unwrap();
            tx.commit().await.unwrap();
            assert_eq!(ids(&s.ended_jobs(&q).await.unwrap()), [7, 4, 2]);
        }
    }

    #[tokio::test]
    async fn usage_sums_the_ended_jobs_in_the_window() {
        for db in &test_dbs("usage_sums_the_ended_jobs_in_the_window").await {
            let mut jobs = sample();
            // A MIG slice of 428 thousandths for an hour, ended in the window.
            let mut slice = job(7, "bob", JobState::Succeeded, "n1", (0, 3_600_000));
            slice.gpus = 0;
            slice.slice_at = crate::stored_job::tests::full_stored().slice_at;
            // Its agent measured nothing: it adds no CPU and no memory (not zeros read
            // as a measure).
            slice.usage = None;
            jobs.push(slice);
            let mut s = store_with(db, &jobs).await;
            let rows = s.ended_usage(0, false, None).await.unwrap();
            let ann = &rows[0];
            assert_eq!((ann.key.as_str(), ann.jobs), ("ann", 3));
            // 2 GPUs x (1 h + 2 h - 0.0028 h + 10 s).
            let want = 2.0 * (3_600_000.0 + 7_200_000.0 + 10_000.0) / 3_600_000.0;
            assert!((ann.gpu_hours - want).abs() < 1e-9, "{}", ann.gpu_hours);
            assert_eq!(
                (ann.succeeded, ann.failed, ann.cancelled, ann.timed_out),
                (1, 0, 1, 1)
            );
            assert!((ann.wait_s - 3.0).abs() < 1e-9);
            assert_eq!(ann.energy_j, 3 * 3_600);
            // Each job's CPU whole; its 3 GiB peak on each of its 2 nodes over the hours
            // it ran (2 GPUs each, so 3 times its GPU-hours).
            assert_eq!(ann.cpu_ms, 3 * 3_723_000);
            let want = 3.0 * ann.gpu_hours;
            assert!(
                (ann.mem_gib_hours - want).abs() < 1e-9,
                "{}",
                ann.mem_gib_hours
            );
            let bob = &rows[1];
            assert_eq!((bob.key.as_str(), bob.jobs, bob.failed), ("bob", 2, 1));
            assert_eq!(bob.cpu_ms, 3_723_000);
            let want = 3.0 * 2.0 * 10_000.0 / 3_600_000.0;
            assert!(
                (bob.mem_gib_hours - want).abs() < 1e-9,
                "{}",
                bob.mem_gib_hours
            );
            let want = 2.0 * 10_000.0 / 3_600_000.0 + 0.428;
            assert!((bob.gpu_hours - want).abs() < 1e-9, "{}", bob.gpu_hours);
            // From 1 h on: job 1 ended at 1 h 0 min 10 s, job 4 ran 1 h 0 min 50 s after it.
            let rows = s.ended_usage(3_600_000, true, Some("ann")).await.unwrap();
            assert_eq!(rows.len(), 1);
            assert_eq!((rows[0].key.as_str(), rows[0].jobs), ("q-ann", 2));
            let want = 2.0 * (10_000.0 + 3_650_000.0) / 3_600_000.0;
            assert!(
                (rows[0].gpu_hours - want).abs() < 1e-9,
                "{}",
                rows[0].gpu_hours
            );
        }
    }

    #[tokio::test]
    async fn usage_per_user_and_queue_adds_up_to_the_usage_per_user() {
        for db in &test_dbs("usage_per_user_and_queue_adds_up_to_the_usage_per_user").await {
            let mut jobs = sample();
            // One of ann's jobs in another queue, so one user has two pairs.
            jobs[0].queue = "other".into();
            let mut s = store_with(db, &jobs).await;
            let pairs = s.ended_usage_by_user_and_queue().await.unwrap();
            let keys: Vec<(&str, &str)> = pairs
                .iter()
                .map(|(u, sum)| (u.as_str(), sum.key.as_str()))
                .collect();
            assert_eq!(keys, [("ann", "other"), ("ann", "q-ann"), ("bob", "q-bob")]);
            for per_user in s.ended_usage(0, false, None).await.unwrap() {
                let mine = pairs.iter().filter(|(u, _)| *u == per_user.key);
                let (jobs, hours, wait, energy, ok) =
                    mine.fold((0, 0.0, 0.0, 0, 0), |a, (_, p)| {
                        (
                            a.0 + p.jobs,
                            a.1 + p.gpu_hours,
                            a.2 + p.wait_s,
                            a.3 + p.energy_j,
                            a.4 + p.succeeded,
                        )
                    });
                assert_eq!(
                    (jobs, energy, ok),
                    (per_user.jobs, per_user.energy_j, per_user.succeeded)
                );
                assert!(
                    (hours - per_user.gpu_hours).abs() < 1e-9,
                    "{hours} {per_user:?}"
                );
                assert!((wait - per_user.wait_s).abs() < 1e-9, "{wait} {per_user:?}");
            }
        }
    }

    #[tokio::test]
    async fn a_purge_deletes_old_ended_jobs_with_their_timelines_and_never_a_live_one() {
        for db in
            &test_dbs("a_purge_deletes_old_ended_jobs_with_their_timelines_and_never_a_live_one")
                .await
        {
            let mut s = store_with(db, &sample()).await;
            let ev = gpusched_wire::history::JobEvent {
                at_ms: 1,
                kind: gpusched_wire::history::JobEventKind::Submitted,
                attempt: 0,
                nodes: Vec::new(),
                detail: String::new(),
            };
            let mut tx = s.begin().await.unwrap();
            for id in [2, 3, 6] {
                tx.add_job_events(id, std::slice::from_ref(&ev), 10)
                    .await
                    .unwrap();
            }
            tx.commit().await.unwrap();
            let counts = s.ended_counts().await.unwrap();
            assert_eq!(counts.len(), 4, "{counts:?}");
            let mut tx = s.begin().await.unwrap();
            // Jobs 2 and 6 ended before 100 s; 1 and 4 after; 3 and 5 are live.
            assert_eq!(tx.purge_ended(100_000).await.unwrap(), 2);
            tx.commit().await.unwrap();
            let left: Vec<u64> = s.load_jobs().await.unwrap().iter().map(|j| j.id).collect();
            assert_eq!(left, [1, 3, 4, 5]);
            assert!(s.job_events(2).await.unwrap().events.is_empty());
            assert!(s.job_events(6).await.unwrap().events.is_empty());
            assert_eq!(s.job_events(3).await.unwrap().events.len(), 1);
            let mut tx = s.begin().await.unwrap();
            assert_eq!(tx.purge_ended(u64::MAX / 2).await.unwrap(), 2);
            tx.commit().await.unwrap();
            assert_eq!(ids(&s.load_live_jobs().await.unwrap()), [3, 5]);
            assert_eq!(s.ended_counts().await.unwrap(), []);
            // Job 6 is gone, but its id stays issued.
            assert_eq!(s.max_job_id().await.unwrap(), 6);
        }
    }
}
