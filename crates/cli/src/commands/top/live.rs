//! The live terminal of `gpusched top`: the alternate screen in raw mode, a frame per
//! change, keys read on a thread of their own, fetches on a task of their own (so a slow
//! server never freezes the keys). The terminal is restored on every way out: `q`, Esc,
//! Ctrl-C (a key in raw mode), SIGTERM, an error (the guard's drop) and a panic
//! (ratatui's hook).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::Rect;
use tokio::sync::{mpsc, Notify};

use super::model::Snapshot;
use super::render::{self, Panel, View};
use super::{apply, fetch, Fetched};
use crate::client::Client;

/// Leaves raw mode and the alternate screen when dropped.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// What a key asks for.
enum Act {
    Quit,
    Refresh,
    Redraw,
}

pub async fn run(client: Client, server: String, interval: Duration) -> anyhow::Result<()> {
    // Installs the panic hook that restores the terminal before the panic is printed.
    let mut terminal = ratatui::try_init()
        .context("cannot put the terminal in raw mode; use `gpusched top --once` instead")?;
    let _restore = Restore;

    let (data_tx, mut data_rx) = mpsc::channel::<anyhow::Result<Fetched>>(1);
    let refresh = Arc::new(Notify::new());
    let wake = refresh.clone();
    tokio::spawn(async move {
        loop {
            let got = fetch(&client, interval).await;
            if data_tx.send(got).await.is_err() {
                return;
            }
            tokio::select! {
                _ = tokio::time::sleep(interval) => {}
                _ = wake.notified() => {}
            }
        }
    });

    // crossterm's reads block: a plain thread, so the runtime never waits for it on exit.
    let (key_tx, mut key_rx) = mpsc::channel::<Event>(64);
    std::thread::spawn(move || loop {
        match event::poll(Duration::from_millis(200)) {
            Ok(true) => match event::read() {
                Ok(ev) => {
                    if key_tx.blocking_send(ev).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            },
            Ok(false) if key_tx.is_closed() => return,
            Ok(false) => {}
            Err(_) => return,
        }
    });

    let mut snap = Snapshot {
        server,
        interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
        now_ms: crate::commands::fmt::now_ms(),
        ..Snapshot::default()
    };
    let mut view = View {
        interactive: true,
        ..View::default()
    };
    // Ages and waits tick between fetches.
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let stop = crate::commands::shutdown_signal();
    tokio::pin!(stop);
    loop {
        terminal
            .draw(|f| render::render(&snap, &view, f.area(), f.buffer_mut()))
            .context("cannot draw on the terminal")?;
        tokio::select! {
            ev = key_rx.recv() => {
                let Some(ev) = ev else {
                    anyhow::bail!("cannot read the keyboard any more");
                };
                let size = terminal.size().context("cannot read the terminal's size")?;
                let area = Rect::new(0, 0, size.width, size.height);
                match on_event(ev, &snap, &mut view, area) {
                    Act::Quit => return Ok(()),
                    Act::Refresh => refresh.notify_one(),
                    Act::Redraw => {}
                }
            }
            got = data_rx.recv() => {
                match got {
                    Some(Ok(f)) => apply(&mut snap, f),
                    Some(Err(e)) => {
                        snap.error = Some(format!("{e:#}"));
                        snap.now_ms = crate::commands::fmt::now_ms();
                    }
                    None => anyhow::bail!("the refresh task ended"),
                }
            }
            _ = tick.tick() => snap.now_ms = crate::commands::fmt::now_ms(),
            _ = &mut stop => return Ok(()),
        }
    }
}

/// One key (or a resize): moves the focus, scrolls, sorts, or asks to quit or refresh.
fn on_event(ev: Event, snap: &Snapshot, view: &mut View, area: Rect) -> Act {
    let Event::Key(KeyEvent {
        code,
        modifiers,
        kind,
        ..
    }) = ev
    else {
        return Act::Redraw;
    };
    if kind != KeyEventKind::Press {
        return Act::Redraw;
    }
    let page = render::focused_page(snap, view, area);
    let delta: isize = match code {
        KeyCode::Char('q') | KeyCode::Esc => return Act::Quit,
        KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => return Act::Quit,
        KeyCode::Char('r') => return Act::Refresh,
        KeyCode::Tab | KeyCode::BackTab => {
            view.focus = match view.focus {
                Panel::Gpus => Panel::Jobs,
                Panel::Jobs => Panel::Gpus,
            };
            return Act::Redraw;
        }
        KeyCode::Char('s') => {
            view.sort = view.sort.next();
            view.job_scroll = 0;
            return Act::Redraw;
        }
        KeyCode::Up | KeyCode::Char('k') => -1,
        KeyCode::Down | KeyCode::Char('j') => 1,
        KeyCode::PageUp => -(page as isize),
        KeyCode::PageDown => page as isize,
        KeyCode::Home | KeyCode::Char('g') => isize::MIN / 2,
        KeyCode::End | KeyCode::Char('G') => isize::MAX / 2,
        _ => return Act::Redraw,
    };
    let (max_g, max_j) = render::max_scroll(snap, view, area);
    let (at, max) = match view.focus {
        Panel::Gpus => (&mut view.gpu_scroll, max_g),
        Panel::Jobs => (&mut view.job_scroll, max_j),
    };
    *at = (*at as isize).saturating_add(delta).clamp(0, max as isize) as usize;
    Act::Redraw
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::top::model::JobSort;

    fn key(code: KeyCode) -> Event {
        Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    /// A node with 20 GPUs: more rows than a 100x20 screen shows.
    fn snap() -> Snapshot {
        let gpus: Vec<serde_json::Value> = (0..20)
            .map(|i| {
                serde_json::json!({"index": i, "uuid": null, "model": "H100", "mem_mib": 81920,
                                   "source": "fake", "job": null, "slices": []})
            })
            .collect();
        let nodes = serde_json::json!([{"name": "n", "state": "online", "gpus": gpus,
            "cpus": 8, "mem_mib": 1024, "last_seen_ms_ago": 0, "agent_version": "x"}]);
        Snapshot {
            nodes: serde_json::from_value(nodes).unwrap(),
            fetched_ms: Some(0),
            ..Snapshot::default()
        }
    }

    #[test]
    fn keys_quit_refresh_focus_sort_and_scroll_within_bounds() {
        let s = snap();
        let area = Rect::new(0, 0, 100, 20);
        let mut v = View::default();
        for quit in [
            key(KeyCode::Char('q')),
            key(KeyCode::Esc),
            Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        ] {
            assert!(matches!(on_event(quit, &s, &mut v, area), Act::Quit));
        }
        // A key's release (sent by some terminals) does nothing.
        let mut release = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        assert!(matches!(
            on_event(Event::Key(release), &s, &mut v, area),
            Act::Redraw
        ));
        assert!(matches!(
            on_event(key(KeyCode::Char('r')), &s, &mut v, area),
            Act::Refresh
        ));

        let (max, _) = render::max_scroll(&s, &v, area);
        assert!(max > 0);
        on_event(key(KeyCode::Char('k')), &s, &mut v, area);
        assert_eq!(v.gpu_scroll, 0, "no scrolling above the top");
        on_event(key(KeyCode::Down), &s, &mut v, area);
        on_event(key(KeyCode::Char('j')), &s, &mut v, area);
        assert_eq!(v.gpu_scroll, 2);
        on_event(key(KeyCode::PageDown), &s, &mut v, area);
        on_event(key(KeyCode::PageDown), &s, &mut v, area);
        assert_eq!(v.gpu_scroll, max, "no scrolling past the last page");
        on_event(key(KeyCode::Home), &s, &mut v, area);
        assert_eq!(v.gpu_scroll, 0);
        on_event(key(KeyCode::End), &s, &mut v, area);
        assert_eq!(v.gpu_scroll, max);

        // Tab moves the focus: the keys now scroll the (empty) job panel.
        on_event(key(KeyCode::Tab), &s, &mut v, area);
        assert_eq!(v.focus, Panel::Jobs);
        on_event(key(KeyCode::Down), &s, &mut v, area);
        assert_eq!((v.gpu_scroll, v.job_scroll), (max, 0));
        on_event(key(KeyCode::BackTab), &s, &mut v, area);
        assert_eq!(v.focus, Panel::Gpus);

        v.job_scroll = 3;
        on_event(key(KeyCode::Char('s')), &s, &mut v, area);
        assert_eq!((v.sort, v.job_scroll), (JobSort::Newest, 0));
    }
}
