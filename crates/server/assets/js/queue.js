// The queue: pending and running jobs with why they wait and when they should start,
// from GET /api/jobs?state=active; cancel on the caller's own jobs (admins: any).

import { api } from './api.js';
import { badge, fill, h, table } from './dom.js';
import { ago, ask, dur, until } from './format.js';

export function start(root, ctx) {
  const body = h('div', { id: 'queue' });
  root.append(h('h1', {}, 'Queue'), body);
  const refresh = async () => {
    const { jobs } = await api('/api/jobs?state=active');
    if (!ctx.live()) return;
    jobs.sort((a, b) => order(a) - order(b) || a.id - b.id);
    fill(body, jobs.length
      ? table(['job', 'name', 'user', 'queue', 'state', 'asks', 'where', 'time', 'reason / estimated start', ''],
        jobs.map((j) => row(j, ctx, refresh)), 'grid jobs')
      : h('p', { class: 'muted' }, 'No pending or running job.'));
  };
  ctx.every(refresh);
}

function order(j) {
  return { running: 0, starting: 1, pending: 2 }[j.state] ?? 3;
}

export function mayCancel(j, me) {
  return me && (me.role === 'admin' || j.user === me.user);
}

export function cancelButton(j, ctx, after) {
  if (!mayCancel(j, ctx.me) || j.cancel_requested) return null;
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
  const time = j.start_ms ? `ran ${dur((Date.now() - j.start_ms) / 1000)}` : `waited ${ago(j.submit_ms).replace(' ago', '')}`;
  let why = j.reason;
  if (j.state === 'pending' && j.est_start_ms) why = `${j.reason} · starts ${until(j.est_start_ms)}`;
  return h('tr', { dataset: { job: j.id } },
    h('td', { class: 'num' }, h('a', { href: `#/job/${j.id}` }, String(j.id))),
    h('td', { class: 'name' }, j.name),
    h('td', {}, j.user),
    h('td', {}, j.queue),
    h('td', {}, badge(j.cancel_requested ? 'cancelling' : j.state)),
    h('td', { class: 'nowrap' }, ask(j)),
    h('td', { class: 'nowrap' }, where),
    h('td', { class: 'nowrap' }, time),
    h('td', { class: 'reason' }, why),
    h('td', {}, cancelButton(j, ctx, refresh)));
}
