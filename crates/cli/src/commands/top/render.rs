//! One frame of `gpusched top`, drawn from a [`Snapshot`] and the [`View`] (focus, scroll,
//! sort) into a ratatui [`Buffer`]: a pure function, so the live terminal, `--once` and
//! the tests draw exactly the same thing.
//!
//! Layout: a header (server, freshness or the fetch error, cluster totals, queues), the
//! GPU panel (one row per GPU) and the job panel (running and pending jobs).

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Cell, Paragraph, Row, Table, Widget, Wrap};

use super::model::{self, GpuKind, GpuRow, JobRow, JobSort, Snapshot};
use crate::commands::fmt::{terminal_safe, time};
use unicode_width::UnicodeWidthStr;

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Panel {
    #[default]
    Gpus,
    Jobs,
}

/// What the operator changed with keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct View {
    pub focus: Panel,
    /// First row shown in each panel.
    pub gpu_scroll: usize,
    pub job_scroll: usize,
    pub sort: JobSort,
    /// The live terminal: show the keys and which panel has the focus.
    pub interactive: bool,
}

/// Below this a frame says so instead of drawing panels nobody could read.
pub const MIN_WIDTH: u16 = 30;
pub const MIN_HEIGHT: u16 = 8;

/// Rows a bordered table spends on itself: two borders and its header row.
const TABLE_CHROME: u16 = 3;

fn header_height(snap: &Snapshot) -> u16 {
    // Status, totals, queues; the error gets two lines of its own.
    if snap.error.is_some() {
        5
    } else {
        3
    }
}

/// Rows each panel needs to show everything (an empty one shows a line saying so).
fn needs(gpus: usize, jobs: usize) -> (u16, u16) {
    let rows = |n: usize| u16::try_from(n.max(1)).unwrap_or(u16::MAX);
    (
        rows(gpus).saturating_add(TABLE_CHROME),
        rows(jobs).saturating_add(TABLE_CHROME),
    )
}

/// The height at which nothing is cut: `--once` without `--height`.
pub fn full_height(snap: &Snapshot) -> u16 {
    let (g, j) = needs(
        model::gpu_rows(snap).len(),
        snap.jobs.iter().filter(|j| !j.state.is_terminal()).count(),
    );
    header_height(snap).saturating_add(g).saturating_add(j)
}

/// Header, GPU panel, job panel. The GPU panel gets what it needs up to three fifths
/// of the room (more if the jobs need less); the job panel the rest.
fn areas(snap: &Snapshot, area: Rect, gpus: usize, jobs: usize) -> [Rect; 3] {
    let head = header_height(snap).min(area.height);
    let room = area.height - head;
    let (g_need, j_need) = needs(gpus, jobs);
    let g = g_need.min((room * 3 / 5).max(room.saturating_sub(j_need)));
    let at = |y: u16, h: u16| Rect::new(area.x, area.y + y, area.width, h);
    [at(0, head), at(head, g), at(head + g, room - g)]
}

/// Rows of data a panel of this height shows.
fn page(panel: Rect) -> usize {
    usize::from(panel.height.saturating_sub(TABLE_CHROME))
}

/// The largest useful scroll of each panel at this size (the live view clamps with it).
pub fn max_scroll(snap: &Snapshot, view: &View, area: Rect) -> (usize, usize) {
    let gpus = model::gpu_rows(snap).len();
    let jobs = model::job_rows(snap, view.sort).len();
    let [_, g, j] = areas(snap, area, gpus, jobs);
    (gpus.saturating_sub(page(g)), jobs.saturating_sub(page(j)))
}

/// Rows per page of the focused panel (PgUp/PgDn).
pub fn focused_page(snap: &Snapshot, view: &View, area: Rect) -> usize {
    let gpus = model::gpu_rows(snap).len();
    let jobs = model::job_rows(snap, view.sort).len();
    let [_, g, j] = areas(snap, area, gpus, jobs);
    page(if view.focus == Panel::Gpus { g } else { j }).max(1)
}

pub fn render(snap: &Snapshot, view: &View, area: Rect, buf: &mut Buffer) {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        Paragraph::new(format!(
            "terminal too small for gpusched top ({}x{}); make it at least {MIN_WIDTH}x{MIN_HEIGHT}",
            area.width, area.height
        ))
        .wrap(Wrap { trim: true })
        .render(area, buf);
        return;
    }
    let gpus = model::gpu_rows(snap);
    let jobs = model::job_rows(snap, view.sort);
    let [head, g, j] = areas(snap, area, gpus.len(), jobs.len());
    header(snap, view, head, buf);
    gpu_panel(snap, &gpus, view, g, buf);
    job_panel(snap, &jobs, view, j, buf);
}

/// A whole frame of `width` x `height`.
pub fn frame(snap: &Snapshot, view: &View, width: u16, height: u16) -> Buffer {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    render(snap, view, area, &mut buf);
    buf
}

/// A buffer as plain text, one line per row, trailing blanks cut (no escape codes).
pub fn text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        let mut x = area.left();
        while x < area.right() {
            let sym = buf[(x, y)].symbol();
            line.push_str(sym);
            // A wide character covers the cells after it, which hold a blank.
            let w = Span::raw(sym).width().max(1);
            x = x.saturating_add(u16::try_from(w).unwrap_or(1));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `HH:MM:SS UTC` of a Unix-ms time.
fn clock(ms: u64) -> String {
    let t = time(ms);
    t.split_once(' ')
        .map_or(t.clone(), |(_, hms)| hms.to_string())
}

fn header(snap: &Snapshot, view: &View, area: Rect, buf: &mut Buffer) {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let every = format!("every {}", secs(snap.interval_ms));
    let mut status = vec![
        Span::styled("gpusched top", bold),
        Span::raw(format!("  {}  ", snap.server)),
    ];
    match (&snap.error, snap.fetched_ms) {
        (Some(_), Some(at)) => status.push(Span::styled(
            format!("data from {}, retrying {every}", clock(at)),
            Style::default().fg(Color::Yellow),
        )),
        (Some(_), None) => status.push(Span::styled(
            format!("no data yet, retrying {every}"),
            Style::default().fg(Color::Yellow),
        )),
        (None, Some(at)) if view.interactive => {
            status.push(Span::raw(format!("updated {}, {every}", clock(at))))
        }
        (None, Some(at)) => status.push(Span::raw(format!("at {}", clock(at)))),
        (None, None) => status.push(Span::raw("connecting...")),
    }
    let t = model::totals(snap);
    let power = t.power_mw.map_or_else(
        || "-".to_string(),
        |mw| format!("{:.0} W", mw as f64 / 1000.0),
    );
    let cluster = Line::from(vec![
        Span::styled("nodes ", bold),
        Span::raw(format!(
            "{} up, {} drained, {} offline   ",
            t.nodes_up, t.nodes_drained, t.nodes_offline
        )),
        Span::styled("GPUs ", bold),
        Span::raw(format!(
            "{} busy, {} free, {} unhealthy, {} out",
            t.gpus_busy, t.gpus_free, t.gpus_unhealthy, t.gpus_out
        )),
    ]);
    let queues = terminal_safe(&model::queue_line(snap)).into_owned();
    let work = Line::from(vec![
        Span::styled("jobs ", bold),
        Span::raw(format!(
            "{} running, {} pending   ",
            t.jobs_running, t.jobs_pending
        )),
        Span::styled("power ", bold),
        Span::raw(format!("{power}   ")),
        Span::styled("queues ", bold),
        Span::raw(if queues.is_empty() {
            "-".into()
        } else {
            queues
        }),
    ]);
    let mut lines = vec![Line::from(status), cluster, work];
    if let Some(e) = &snap.error {
        lines.insert(
            1,
            Line::from(Span::styled(
                format!("error: {e}"),
                Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
            )),
        );
    }
    // Only the error may wrap (onto the line kept for it); the rest is cut at the edge.
    let rows: Vec<Rect> = (0..area.height)
        .map(|y| Rect::new(area.x, area.y + y, area.width, 1))
        .collect();
    let mut row = rows.iter();
    for (i, line) in lines.into_iter().enumerate() {
        let is_error = snap.error.is_some() && i == 1;
        let Some(r) = row.next() else { break };
        if is_error {
            let r2 = Rect::new(r.x, r.y, r.width, 2.min(area.bottom() - r.y));
            Paragraph::new(line)
                .wrap(Wrap { trim: true })
                .render(r2, buf);
            row.next();
        } else {
            Paragraph::new(line).render(*r, buf);
        }
    }
}

fn secs(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

/// `s` cut to `max` characters, the last one an ellipsis when cut.
fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A row's cells as a terminal may print them: node names, holders, reasons and queues
/// are users' and agents' text ([`terminal_safe`]).
fn safe_cells(cells: Vec<String>) -> Vec<String> {
    cells
        .into_iter()
        .map(|c| terminal_safe(&c).into_owned())
        .collect()
}

/// A row's cells, each cut to the width its column was laid out with.
fn fitted(cells: &[String], fits: &[usize]) -> Vec<Cell<'static>> {
    cells
        .iter()
        .zip(fits)
        .map(|(c, &w)| Cell::from(fit(c, w)))
        .collect()
}

/// Column widths: each column's widest cell (header included), all of it when every
/// column fits the panel, else capped; the last column takes what is left.
fn widths(header: &[&str], rows: &[Vec<String>], caps: &[usize], room: u16) -> Vec<usize> {
    let n = header.len();
    let natural: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r[i].width())
                .chain([header[i].width()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Borders and two spaces between columns.
    let need: usize = natural.iter().sum::<usize>() + 2 * (n - 1) + 2;
    if need <= usize::from(room) {
        return natural;
    }
    natural
        .iter()
        .zip(caps)
        .map(|(w, c)| (*w).min(*c))
        .collect()
}

fn constraints(w: &[usize]) -> Vec<Constraint> {
    let last = w.len().saturating_sub(1);
    w.iter()
        .enumerate()
        .map(|(i, w)| {
            if i == last {
                Constraint::Fill(1)
            } else {
                Constraint::Length(u16::try_from(*w).unwrap_or(u16::MAX))
            }
        })
        .collect()
}

/// The widths the table will really give its columns inside the panel's borders (the
/// layout shrinks columns when the panel is narrower than they ask), so each cell is
/// cut, with its ellipsis, to what shows.
fn laid_out(w: &[usize], panel: Rect) -> Vec<usize> {
    let inner = Rect::new(0, 0, panel.width.saturating_sub(2), 1);
    Layout::horizontal(constraints(w))
        .spacing(COLUMN_SPACING)
        .split(inner)
        .iter()
        .map(|r| usize::from(r.width))
        .collect()
}

const COLUMN_SPACING: u16 = 2;

/// A table with its header row in bold; an empty one has only its message row.
fn table<'a>(
    body: Vec<Row<'a>>,
    widths: Vec<Constraint>,
    head: &[&'a str],
    empty: bool,
) -> Table<'a> {
    let t = Table::new(body, widths).column_spacing(COLUMN_SPACING);
    if empty {
        t
    } else {
        t.header(Row::new(head.to_vec()).style(Style::default().add_modifier(Modifier::BOLD)))
    }
}

fn block(title: String, focused: bool) -> Block<'static> {
    let b = Block::default().borders(Borders::ALL).title(title);
    if focused {
        b.border_type(BorderType::Thick)
            .border_style(Style::default().fg(Color::Cyan))
    } else {
        b
    }
}

/// ` (rows 11-20 of 64)` when the panel cannot show every row.
fn range(scroll: usize, shown: usize, total: usize) -> String {
    if total <= shown {
        String::new()
    } else if shown == 0 {
        format!(" (no room for its {total} rows)")
    } else {
        format!(" (rows {}-{} of {total})", scroll + 1, scroll + shown)
    }
}

fn gpu_panel(snap: &Snapshot, rows: &[GpuRow], view: &View, area: Rect, buf: &mut Buffer) {
    const HEAD: [&str; 9] = [
        "NODE", "GPU", "MODEL", "HELD BY", "UTIL", "MEM USED", "TEMP", "POWER", "STATE",
    ];
    const CAPS: [usize; 9] = [16, 3, 22, 28, 4, 15, 5, 6, usize::MAX];
    let shown = page(area);
    let scroll = view.gpu_scroll.min(rows.len().saturating_sub(shown));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            safe_cells(vec![
                r.node.clone(),
                r.index.clone(),
                r.model.clone(),
                r.holder.clone(),
                r.util.clone(),
                r.mem.clone(),
                r.temp.clone(),
                r.power.clone(),
                r.status.clone(),
            ])
        })
        .collect();
    let w = widths(&HEAD, &cells, &CAPS, area.width);
    let fits = laid_out(&w, area);
    let mut body: Vec<Row> = rows
        .iter()
        .zip(&cells)
        .skip(scroll)
        .take(shown)
        .map(|(r, c)| {
            let colour = match r.kind {
                GpuKind::Busy => Style::default().fg(Color::Green),
                GpuKind::Free => Style::default(),
                GpuKind::Unhealthy => Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
                GpuKind::Drained => Style::default().fg(Color::Yellow),
                GpuKind::Offline => Style::default().fg(Color::DarkGray),
            };
            let mut out = fitted(c, &fits);
            if r.hot {
                out[6] = out[6].clone().style(Style::default().fg(Color::Red));
            }
            Row::new(out).style(colour)
        })
        .collect();
    if rows.is_empty() {
        let msg = if snap.fetched_ms.is_some() {
            "no nodes yet: start `gpusched agent --server URL` on a GPU host (or `gpusched up`)"
        } else {
            "waiting for the server"
        };
        body.push(Row::new(vec![Cell::from(msg)]));
    }
    let nodes = snap.nodes.len();
    let title = format!(
        " GPUs: {} on {}{} ",
        rows.len(),
        gpusched_wire::count(nodes as u64, "node"),
        range(scroll, shown, rows.len())
    );
    let widths = if rows.is_empty() {
        vec![Constraint::Fill(1)]
    } else {
        constraints(&w)
    };
    table(body, widths, &HEAD, rows.is_empty())
        .block(block(title, view.interactive && view.focus == Panel::Gpus))
        .render(area, buf);
}

fn job_panel(snap: &Snapshot, rows: &[JobRow], view: &View, area: Rect, buf: &mut Buffer) {
    const HEAD: [&str; 9] = [
        "ID",
        "USER",
        "QUEUE",
        "GPUS",
        "STATE",
        "WHERE",
        "TIME",
        "EST. START",
        "REASON",
    ];
    const CAPS: [usize; 9] = [8, 12, 12, 12, 10, 24, 11, 12, usize::MAX];
    let shown = page(area);
    let scroll = view.job_scroll.min(rows.len().saturating_sub(shown));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            safe_cells(vec![
                r.id.clone(),
                r.user.clone(),
                r.queue.clone(),
                r.gpus.clone(),
                r.state.clone(),
                r.nodes.clone(),
                r.time.clone(),
                r.est_start.clone(),
                r.reason.clone(),
            ])
        })
        .collect();
    let w = widths(&HEAD, &cells, &CAPS, area.width);
    let fits = laid_out(&w, area);
    let mut body: Vec<Row> = rows
        .iter()
        .zip(&cells)
        .skip(scroll)
        .take(shown)
        .map(|(r, c)| {
            let out = fitted(c, &fits);
            let style = if r.running {
                Style::default().fg(Color::Green)
            } else {
                Style::default()
            };
            Row::new(out).style(style)
        })
        .collect();
    if rows.is_empty() {
        let msg = if snap.fetched_ms.is_some() {
            "no jobs queued or running"
        } else {
            "waiting for the server"
        };
        body.push(Row::new(vec![Cell::from(msg)]));
    }
    let running = rows.iter().filter(|r| r.running).count();
    let more = if snap.more_jobs {
        format!(" (the newest {}; more not shown)", rows.len())
    } else {
        String::new()
    };
    let title = format!(
        " Jobs: {running} running, {} pending{more}{}, sort: {}{} ",
        rows.len() - running,
        range(scroll, shown, rows.len()),
        view.sort.name(),
        if view.interactive { " (s)" } else { "" }
    );
    let widths = if rows.is_empty() {
        vec![Constraint::Fill(1)]
    } else {
        constraints(&w)
    };
    let mut b = block(title, view.interactive && view.focus == Panel::Jobs);
    if view.interactive {
        b = b.title_bottom(Line::from(Span::styled(
            " q quit  Tab focus  ↑↓ j k PgUp PgDn scroll  s sort  r refresh ",
            Style::default().fg(Color::DarkGray),
        )));
    }
    table(body, widths, &HEAD, rows.is_empty())
        .block(b)
        .render(area, buf);
}
