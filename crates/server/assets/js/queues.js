// Queues: quota, borrowing and fair share, from GET /api/queues; the account tree of the
// fairtree policy (shares, decayed usage, each user's fair-share factor) from
// GET /api/accounts (docs/accounts.md).

import { api } from './api.js';
import { fill, h, meter, table } from './dom.js';
import { gpus, num } from './format.js';

export function start(root, ctx) {
  const body = h('div', { id: 'queues' });
  const tree = h('div', { id: 'accounts' });
  const note = h('p', { class: 'muted small' });
  root.append(h('h1', {}, 'Queues'), body,
    h('p', { class: 'muted small' },
      'Quota: GPUs guaranteed. A queue above its quota is borrowing idle GPUs, which preemption '
      + 'reclaims when another queue needs its quota back. Fair share: the queue\'s weight over '
      + 'the sum of all weights.'),
    h('h2', {}, 'Accounts'), tree, note);
  ctx.every(async () => {
    const list = await api('/api/accounts');
    if (!ctx.live()) return;
    fill(tree, accountTable(list));
    fill(note, `Siblings are ranked by their level fair share (normalised shares over normalised `
      + `decayed usage; inf: no usage yet), depth first; a user's fair-share factor is its rank over `
      + `the number of users. Usage halves every ${num(list.half_life_s / 86400, 1)} days. `
      + (list.policy === 'fairtree' ? 'The server orders waiting jobs by these factors.'
        : `The server's policy is ${list.policy}: the factors order nothing.`));
  });
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

// The tree depth first: an account's row, then its users' rows under it.
function accountTable(list) {
  const level = (v) => (v === null || v === undefined ? 'inf' : num(v, 3));
  const rows = [];
  for (const a of list.accounts) {
    const pad = '\u00a0\u00a0'.repeat(a.depth);
    rows.push(h('tr', { dataset: { account: a.name } },
      h('td', {}, pad + a.name),
      h('td', {}, ''),
      h('td', { class: 'num' }, String(a.shares)),
      h('td', { class: 'num' }, num(a.norm_shares, 3)),
      h('td', { class: 'num' }, num(a.usage_gpu_hours, 2)),
      h('td', { class: 'num' }, num(a.norm_usage, 3)),
      h('td', { class: 'num' }, level(a.level_fs)),
      h('td', {}, '')));
    for (const u of a.users) {
      rows.push(h('tr', { dataset: { account: a.name, user: u.user } },
        h('td', {}, ''),
        h('td', {}, u.user),
        h('td', { class: 'num' }, String(u.shares)),
        h('td', { class: 'num' }, num(u.norm_shares, 3)),
        h('td', { class: 'num' }, num(u.usage_gpu_hours, 2)),
        h('td', { class: 'num' }, num(u.norm_usage, 3)),
        h('td', { class: 'num' }, level(u.level_fs)),
        h('td', { class: 'num' }, `${num(u.fair_share, 3)} (rank ${u.rank})`)));
    }
  }
  return table(['account', 'user', 'shares', 'norm shares', 'usage GPU-h', 'norm usage', 'level FS', 'fair share'], rows, 'grid accounts');
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
