// Queues: quota, borrowing and fair share, from GET /api/queues.

import { api } from './api.js';
import { fill, h, meter, table } from './dom.js';
import { gpus, num } from './format.js';

export function start(root, ctx) {
  const body = h('div', { id: 'queues' });
  root.append(h('h1', {}, 'Queues'), body,
    h('p', { class: 'muted small' },
      'Quota: GPUs guaranteed. A queue above its quota is borrowing idle GPUs, which preemption '
      + 'reclaims when another queue needs its quota back. Fair share: the queue\'s weight over '
      + 'the sum of all weights.'));
  ctx.every(async () => {
    const { queues } = await api('/api/queues');
    if (!ctx.live()) return;
    const weights = queues.reduce((s, q) => s + q.weight, 0);
    // One queue without a file has quota 0: everything it holds is not "borrowed".
    const quotas = queues.some((q) => q.quota > 0);
    fill(body, table(
      ['queue', 'GPUs used', 'quota', 'max', 'borrowing', 'weight', 'fair share', 'running', 'pending', 'who', 'priority', 'priority tiers'],
      queues.map((q) => {
        const borrowing = quotas ? Math.max(0, q.used_gpus - q.quota) : 0;
        const cap = q.quota || q.max || 0;
        const pct = cap ? (100 * q.used_gpus) / cap : (q.used_gpus ? 100 : 0);
        return h('tr', { dataset: { queue: q.name } },
          h('td', {}, q.name),
          h('td', {}, meter(Math.min(pct, 100), `${q.used_gpus}${cap ? ` of ${q.quota || q.max}` : ''}`, borrowing ? 'warn' : '')),
          h('td', { class: 'num' }, String(q.quota)),
          h('td', { class: 'num' }, q.max === null || q.max === undefined ? 'no limit' : String(q.max)),
          h('td', { class: `num ${borrowing ? 'warntext' : ''}` }, borrowing ? gpus(borrowing) : '—'),
          h('td', { class: 'num' }, num(q.weight)),
          h('td', { class: 'num' }, weights ? `${num((100 * q.weight) / weights, 1)}%` : ''),
          h('td', { class: 'num' }, String(q.running)),
          h('td', { class: 'num' }, String(q.pending)),
          h('td', { class: 'small' }, who(q)),
          h('td', { class: 'num' }, `${q.default_priority}${q.max_priority !== null && q.max_priority !== undefined ? ` (max ${q.max_priority})` : ''}`),
          h('td', { class: 'small' }, tiers(q)));
      }), 'grid queues'));
  });
}

// Tiers as ranges of base priority, as `gpusched queues` prints them.
function tiers(q) {
  const t = q.priority_tiers || [];
  if (!t.length) return '—';
  const ranges = [`<${t[0]}`];
  for (let i = 1; i < t.length; i += 1) ranges.push(`${t[i - 1]}-${t[i] - 1}`);
  ranges.push(`${t[t.length - 1]}+`);
  return ranges.join(', ') + (q.preempt_lower_priority ? ' (preempts lower)' : '');
}

function who(q) {
  const parts = [];
  if (q.users.length) parts.push(`users ${q.users.join(', ')}`);
  if (q.groups.length) parts.push(`groups ${q.groups.join(', ')}`);
  return parts.length ? parts.join('; ') : 'everyone';
}
