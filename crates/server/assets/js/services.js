// Inference services (GET /api/services): each service's version, ready and desired
// replicas, status and load, and its replicas (each a job: a link to its page, its
// phase, node and URL). `#/services/NAME` shows one service.

import { api } from './api.js';
import { badge, fill, h, table } from './dom.js';
import { clock } from './format.js';

// A replica's phase as a state badge: ready serves, starting and waiting do not yet,
// draining is on its way out.
const PHASE = { ready: 'running', starting: 'starting', waiting: 'pending', draining: 'cancelling' };

export function start(root, ctx) {
  const only = ctx.arg ? decodeURIComponent(ctx.arg) : '';
  const body = h('div', { id: 'services' });
  root.append(h('h1', {}, only ? ['Service ', h('span', { class: 'name' }, only)] : 'Services'), body,
    h('p', { class: 'muted small' },
      'Each replica is a job: ready replicas are in the gateways\' endpoints; a new version replaces '
      + 'them one by one. `gpusched service show NAME` prints the same.'));
  ctx.every(async () => {
    const { services } = await api('/api/services');
    if (!ctx.live()) return;
    const shown = only ? services.filter((s) => s.spec.name === only) : services;
    if (!shown.length) {
      fill(body, h('p', { class: 'muted' }, only
        ? `No service "${only}" (it may have been deleted).`
        : 'No services. Start one with `gpusched service create FILE` (docs/services.md).'));
      return;
    }
    fill(body, shown.map(service));
  });
}

export function service(s) {
  const scaling = s.spec.autoscale
    ? `autoscale ${s.spec.autoscale.min}–${s.spec.autoscale.max}`
    : `${s.spec.replicas ?? 1} wanted`;
  const healthy = s.ready >= s.desired && s.desired > 0;
  return h('section', { class: 'service', dataset: { service: s.spec.name } },
    h('h2', {}, h('a', { href: `#/services/${encodeURIComponent(s.spec.name)}` }, s.spec.name),
      h('span', { class: 'sub' }, `version ${s.version} · ${s.spec.protocol} · ${scaling} · by ${s.user}`)),
    h('dl', { class: 'fields' },
      h('dt', {}, 'ready'), h('dd', { class: 'ready' },
        badge(`${s.ready}/${s.desired}`, healthy ? 'ok' : (s.ready ? 'warn' : 'bad')),
        s.updated_ready !== s.ready ? ` (${s.updated_ready} of version ${s.version})` : ''),
      h('dt', {}, 'status'), h('dd', { class: 'status' }, s.status),
      h('dt', {}, 'in flight'), h('dd', { class: 'in-flight' }, String(s.in_flight)),
      h('dt', {}, 'models'), h('dd', {}, models(s.spec)),
      s.backoff_until_ms ? [h('dt', {}, 'next restart'), h('dd', {}, clock(s.backoff_until_ms))] : null),
    s.replicas_list.length
      ? table(['job', 'version', 'phase', 'node', 'url'], s.replicas_list.map((r) => h('tr', { dataset: { job: r.job } },
        h('td', {}, h('a', { href: `#/job/${r.job}` }, String(r.job))),
        h('td', { class: 'num' }, String(r.version)),
        h('td', {}, badge(r.phase, PHASE[r.phase])),
        h('td', {}, r.node || ''),
        h('td', {}, r.url ? h('code', {}, r.url) : ''))), 'grid replicas')
      : h('p', { class: 'muted small' }, 'No replicas.'));
}

function models(spec) {
  const list = spec.models && spec.models.length ? spec.models : [{ name: spec.name }];
  return list.map((m) => (m.batching
    ? `${m.name} (batches ≤ ${m.batching.max_batch_size}, wait ≤ ${m.batching.max_queue_delay_us} µs)`
    : m.name)).join(', ');
}
