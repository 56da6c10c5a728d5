// Usage: GPU-hours, CPU-hours, memory GiB-hours and energy per user and per queue (GET /api/usage), drawn as bar
// charts in inline SVG built here (no chart library).

import { api, enc } from './api.js';
import { fill, h, s, table } from './dom.js';
import { amount, dur } from './format.js';

const WINDOWS = [['all time', null], ['last 24 hours', 86400e3], ['last 7 days', 7 * 86400e3], ['last 30 days', 30 * 86400e3]];

export function start(root, ctx) {
  const sel = h('select', { id: 'usage-since' }, WINDOWS.map(([label], i) => h('option', { value: i }, label)));
  const body = h('div', { id: 'usage' });
  root.append(h('h1', {}, 'Usage ', sel), body);
  const refresh = async () => {
    const win = WINDOWS[Number(sel.value)][1];
    const since = win ? `&since_ms=${Math.floor(Date.now() - win)}` : '';
    const [byUser, byQueue] = await Promise.all([
      api(`/api/usage?by=user${since}`), api(`/api/usage?by=${enc('queue')}${since}`)]);
    if (!ctx.live()) return;
    fill(body, section('By user', byUser.rows, 'user'), section('By queue', byQueue.rows, 'queue'));
  };
  sel.addEventListener('change', () => refresh().catch((e) => ctx.banner(e.message)));
  ctx.every(refresh, 10000);
}

function section(title, rows, kind) {
  rows = [...rows].sort((a, b) => b.gpu_hours - a.gpu_hours || a.key.localeCompare(b.key));
  if (!rows.length) {
    return [h('h2', {}, title), h('p', { class: 'muted' }, 'No job ran in this window.')];
  }
  return [
    h('h2', {}, title),
    h('div', { class: 'charts' },
      chart(`GPU-hours by ${kind}`, rows, (r) => r.gpu_hours, (v) => `${amount(v)} GPU·h`, `chart-gpu-${kind}`),
      chart(`Energy by ${kind}`, rows, (r) => r.energy_kwh, (v) => `${amount(v)} kWh`, `chart-energy-${kind}`)),
    table([kind, 'jobs', 'GPU-hours', 'CPU-hours', 'memory GiB-hours', 'energy (kWh)', 'succeeded', 'failed', 'cancelled', 'timed out', 'mean wait'],
      rows.map((r) => h('tr', {},
        h('td', {}, r.key), h('td', { class: 'num' }, String(r.jobs)),
        h('td', { class: 'num' }, amount(r.gpu_hours)),
        // Measured by the nodes' cgroups; nothing measured reads `-`, not 0.
        h('td', { class: 'num' }, r.cpu_hours ? amount(r.cpu_hours) : '-'),
        h('td', { class: 'num' }, r.mem_gib_hours ? amount(r.mem_gib_hours) : '-'),
        h('td', { class: 'num' }, amount(r.energy_kwh)),
        h('td', { class: 'num' }, String(r.succeeded)), h('td', { class: 'num' }, String(r.failed)),
        h('td', { class: 'num' }, String(r.cancelled)), h('td', { class: 'num' }, String(r.timed_out)),
        h('td', { class: 'num' }, dur(r.mean_wait_s))))),
  ];
}

/** A horizontal bar chart: one row per key, bars scaled to the largest value. */
function chart(title, rows, value, label, id) {
  const ROW = 22; const LABEL = 110; const BAR = 260; const TEXT = 110;
  const W = LABEL + BAR + TEXT; const H = rows.length * ROW + 6;
  const max = Math.max(...rows.map(value), 0);
  const svg = s('svg', {
    id, class: 'chart', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': title,
  },
  rows.map((r, i) => {
    const v = value(r) || 0;
    const w = max > 0 ? Math.max(v > 0 ? 1 : 0, (BAR * v) / max) : 0;
    const y = 3 + i * ROW;
    return s('g', { class: 'row' },
      s('title', {}, `${r.key}: ${label(v)}`),
      s('text', { x: LABEL - 6, y: y + 15, 'text-anchor': 'end', class: 'key' }, clip(r.key, 16)),
      s('rect', { x: LABEL, y: y + 3, width: BAR, height: ROW - 8, class: 'track' }),
      s('rect', { x: LABEL, y: y + 3, width: w.toFixed(1), height: ROW - 8, class: 'bar' }),
      s('text', { x: LABEL + BAR + 6, y: y + 15, class: 'val' }, label(v)));
  }));
  return h('figure', { class: 'chart' }, h('figcaption', {}, title), svg);
}

function clip(t, n) {
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}
