// Cluster overview: every node and every GPU with its holder, readings and health,
// from GET /api/nodes.

import { api } from './api.js';
import { badge, fill, h, meter, table } from './dom.js';
import { ago, milli, mib, watts } from './format.js';

export function start(root, ctx) {
  const summary = h('div', { class: 'cards' });
  const list = h('div', { id: 'gpu-nodes' });
  root.append(h('h1', {}, 'Cluster'), summary, list);
  ctx.every(async () => {
    const { nodes } = await api('/api/nodes');
    if (!ctx.live()) return;
    fill(summary, cards(nodes));
    fill(list, nodes.length ? nodes.map(node) : h('p', { class: 'muted' },
      'No node has joined yet: start an agent (gpusched agent --server URL --join-token-file ...).'));
  });
}

// The summary's counts. GPUs of a node that is not online count apart: nothing is
// placed on them and nobody knows what they do, so they are neither in use nor free.
export function counts(nodes) {
  const c = { nodes: nodes.length, online: 0, drained: 0, gpus: 0, busy: 0, sick: 0, offline: 0 };
  for (const n of nodes) {
    if (n.drain) c.drained += 1;
    if (n.state !== 'online') {
      c.offline += n.gpus.length;
      continue;
    }
    c.online += 1;
    for (const g of n.gpus) {
      c.gpus += 1;
      if (g.job !== null && g.job !== undefined || g.user || (g.slices || []).some((x) => x.job)) c.busy += 1;
      if (health(n, g.index).state === 'unhealthy') c.sick += 1;
    }
  }
  return c;
}

function cards(nodes) {
  const { online, drained, gpus, busy, sick, offline } = counts(nodes);
  const card = (label, value, kind) => h('div', { class: `card ${kind || ''}` },
    h('div', { class: 'value' }, String(value)), h('div', { class: 'label' }, label));
  return [
    card('nodes online', `${online} / ${nodes.length}`, online < nodes.length ? 'warn' : ''),
    card(offline ? `GPUs in use (${offline} more on offline nodes)` : 'GPUs in use', `${busy} / ${gpus}`),
    card('unhealthy GPUs', sick, sick ? 'bad' : ''),
    card('drained nodes', drained, drained ? 'warn' : ''),
  ];
}

export function health(n, index) {
  return (n.gpu_health || {})[String(index)] || { state: 'healthy' };
}

function node(n) {
  const samples = new Map(((n.telemetry || {}).gpus || []).map((g) => [g.index, g]));
  const rows = n.gpus.map((g) => gpuRow(n, g, samples.get(g.index)));
  return h('section', { class: 'node', dataset: { node: n.name } },
    h('h2', {},
      n.name, ' ',
      badge(n.state, n.state === 'online' ? 'ok' : 'bad'), ' ',
      n.drain ? badge(n.drain.now ? 'drained (now)' : 'drained', 'warn') : null,
      h('span', { class: 'sub' },
        `${milli(n.free_cpu_milli)} of ${n.cpus} CPUs free · ${mib(n.free_mem_mib)} of ${mib(n.mem_mib)} free`
        + ` · seen ${Math.round(n.last_seen_ms_ago / 1000)}s ago · agent ${n.agent_version}`)),
    n.drain ? h('p', { class: 'note warn' },
      `Drained by ${n.drain.by} ${ago(n.drain.since_ms)}: ${n.drain.reason}`) : null,
    rows.length
      ? table(['GPU', 'model', 'holder', 'util', 'memory', 'temp', 'power', 'health'], rows, 'grid gpus')
      : h('p', { class: 'muted' }, 'No GPUs (CPU-only node).'));
}

function holder(g) {
  if (g.job !== null && g.job !== undefined) {
    return h('a', { href: `#/job/${g.job}` }, `job ${g.job}`, g.user ? ` · ${g.user}` : '');
  }
  if (g.user) return h('span', { class: 'muted' }, g.user); // a hidden job (--private-jobs)
  const slices = (g.slices || []);
  if (slices.length) {
    return h('span', { class: 'slices' }, slices.map((x) => h('span', { class: 'slice' },
      x.kind === 'mig' ? `MIG ${x.profile}` : `${milli(x.milli)}`, ' ',
      x.job !== null && x.job !== undefined
        ? h('a', { href: `#/job/${x.job}` }, `job ${x.job}`)
        : h('span', { class: 'muted' }, x.user || 'idle'),
      x.user && x.job !== null && x.job !== undefined ? ` · ${x.user}` : '')));
  }
  return h('span', { class: 'muted' }, 'idle');
}

function gpuRow(n, g, t) {
  const hl = health(n, g.index);
  const memUsed = t && t.mem_used_mib !== null && t.mem_used_mib !== undefined ? t.mem_used_mib : null;
  const memPct = memUsed !== null && g.mem_mib ? (100 * memUsed) / g.mem_mib : NaN;
  const temp = t && t.temp_c !== null && t.temp_c !== undefined ? t.temp_c : null;
  let healthCell;
  // A node that is not online: its GPUs' state is unknown, not healthy and idle.
  if (n.state !== 'online') healthCell = badge(n.state, 'bad');
  else if (t && t.lost) healthCell = badge('lost', 'bad');
  else if (hl.state === 'unhealthy') {
    healthCell = h('span', {}, badge('unhealthy', 'bad'), ' ', h('span', { class: 'reason' }, hl.reason));
  } else healthCell = badge('healthy', 'ok');
  return h('tr', { dataset: { gpu: g.index } },
    h('td', { class: 'num' }, String(g.index)),
    h('td', {}, g.model, h('span', { class: 'muted' }, ` ${g.source}`)),
    h('td', {}, n.state === 'online' ? holder(g) : h('span', { class: 'muted' }, n.state)),
    h('td', {}, t && t.util_pct !== null && t.util_pct !== undefined
      ? meter(t.util_pct, `${t.util_pct}%`) : h('span', { class: 'muted' }, '—')),
    h('td', {}, memUsed !== null
      ? meter(memPct, `${mib(memUsed)} / ${mib(g.mem_mib)}`)
      : mib(g.mem_mib)),
    h('td', { class: `num ${temp !== null && temp >= 85 ? 'hot' : ''}` }, temp !== null ? `${temp} °C` : '—'),
    h('td', { class: 'num' }, t ? watts(t.power_mw) || '—' : '—'),
    h('td', {}, healthCell));
}
