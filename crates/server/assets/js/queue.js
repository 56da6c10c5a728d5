// The queue: pending and running jobs with why they wait and when they should start,
// from GET /api/jobs?state=active; cancel on the caller's own jobs (admins: any).

import { api } from './api.js';
import { badge, fill, h, table } from './dom.js';
import { ago, ask, dur, TERMINAL, until } from './format.js';

const ENDED = 50; // ended jobs shown with "recent": the newest ones

export function start(root, ctx) {
  const body = h('div', { id: 'queue' });
  const recent = h('input', { type: 'checkbox', id: 'queue-recent' });
  root.append(h('h1', {}, 'Queue ',
    h('label', { class: 'small muted' }, recent, ` also the ${ENDED} newest ended jobs`)), body);
  const refresh = async () => {
    const [active, ended] = await Promise.all([
      api('/api/jobs?state=active'),
      recent.checked
        ? api(`/api/jobs?state=succeeded,failed,cancelled,timed_out&limit=${ENDED}`)
        : { jobs: [] }]);
    if (!ctx.live()) return;
    const jobs = active.jobs;
    jobs.sort((a, b) => order(a) - order(b) || a.id - b.id);
    const all = jobs.concat(ended.jobs); // ended ones newest first, as the API gives them
    fill(body, all.length
      ? table(['job', 'name', 'user', 'queue', 'state', 'asks', 'where', 'time', 'reason / estimated start', ''],
        all.map((j) => row(j, ctx, refresh)), 'grid jobs')
      : h('p', { class: 'muted' }, 'No pending or running job.'));
  };
  recent.addEventListener('change', () => refresh().catch((e) => ctx.banner(e.message)));
  ctx.every(refresh);
}

function order(j) {
  return { running: 0, starting: 1, pending: 2 }[j.state] ?? 3;
}

export function mayCancel(j, me) {
  return me && (me.role === 'admin' || j.user === me.user);
}

export function cancelButton(j, ctx, after) {
  if (!mayCancel(j, ctx.me) || j.cancel_requested || TERMINAL.has(j.state)) return null;
  const b = h('button', { type: 'button', class: 'danger small', dataset: { cancel: j.id } }, 'Cancel');
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await api(`/api/jobs/${j.id}/cancel`, { method: 'POST' });
      ctx.banner('');
    } catch (e) {
      ctx.banner(`could not cancel job ${j.id}: ${e.message}`);
    }
    await after().catch(() => {});
  });
  return b;
}

function row(j, ctx, refresh) {
  const where = j.parts && j.parts.length > 1
    ? j.parts.map((p) => p.node).join(', ')
    : j.node ? `${j.node}${j.gpu_indices.length ? ` [${j.gpu_indices.join(',')}]` : ''}` : '';
  let time;
  if (j.end_ms) time = `ended ${ago(j.end_ms)}`;
  else if (j.start_ms) time = `ran ${dur((Date.now() - j.start_ms) / 1000)}`;
  else time = `waited ${dur((Date.now() - j.submit_ms) / 1000)}`;
  let why = j.reason;
  if (j.state === 'pending' && j.est_start_ms) why = `${j.reason} · starts ${until(j.est_start_ms)}`;
  // An array is one row: its range after the name, its tasks' counts as the reason.
  if (j.array_counts) why = arrayCounts(j.array_counts);
  return h('tr', { dataset: { job: j.id } },
    h('td', { class: 'num' }, h('a', { href: `#/job/${j.id}` }, String(j.id))),
    h('td', { class: 'name' }, j.array ? `${j.name}[${arrayText(j.array)}]` : j.name),
    h('td', {}, j.user),
    h('td', {}, j.queue),
    h('td', {}, badge(j.cancel_requested && !TERMINAL.has(j.state) ? 'cancelling' : j.state)),
    h('td', { class: 'nowrap' }, ask(j)),
    h('td', { class: 'nowrap' }, where),
    h('td', { class: 'nowrap' }, time),
    h('td', { class: 'reason' }, why),
    h('td', {}, cancelButton(j, ctx, refresh)));
}

// `0-9999:2%8`, as `submit --array` reads it.
function arrayText(a) {
  return `${a.first}-${a.last}${a.step !== 1 ? `:${a.step}` : ''}${a.max_running ? `%${a.max_running}` : ''}`;
}

// `8 running, 9990 pending, 2 succeeded`: the states that have tasks.
function arrayCounts(c) {
  const parts = [['running', c.running], ['starting', c.starting], ['pending', c.pending],
    ['succeeded', c.succeeded], ['failed', c.failed], ['timed out', c.timed_out],
    ['cancelled', c.cancelled]];
  return parts.filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s}`).join(', ') || 'no tasks';
}
