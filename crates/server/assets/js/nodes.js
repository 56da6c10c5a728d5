// Nodes: state, resources, drains and health; admins drain (with a reason, or --now)
// and resume from here. Users see no buttons; the server refuses them anyway.

import { api, enc } from './api.js';
import { badge, fill, h, table } from './dom.js';
import { ago, milli, mib } from './format.js';
import { health } from './overview.js';

export function start(root, ctx) {
  const admin = ctx.me && ctx.me.role === 'admin';
  const body = h('div', { id: 'nodes' });
  const result = h('p', { id: 'node-result', class: 'muted small' });
  root.append(h('h1', {}, 'Nodes'));
  const act = async (name, verb, req) => {
    try {
      await api(`/api/nodes/${enc(name)}/${verb}`, { method: 'POST', body: req });
      result.textContent = `${verb === 'drain' ? 'drained' : 'resumed'} ${name}`;
      ctx.banner('');
    } catch (e) {
      ctx.banner(`could not ${verb} ${name}: ${e.message}`);
    }
    await refresh().catch(() => {});
  };
  let form = null;
  const pick = h('select', { id: 'drain-node' });
  if (admin) {
    const reason = h('input', { id: 'drain-reason', type: 'text', maxlength: 256, placeholder: 'reason (shown in nodes)' });
    const now = h('input', { id: 'drain-now', type: 'checkbox' });
    form = h('form', { class: 'drain', id: 'drain-form' },
      h('strong', {}, 'Drain '), pick, ' ', reason, ' ',
      h('label', { title: 'requeue the running jobs now (checkpoint signal, grace) instead of letting them finish' }, now, ' now'),
      ' ', h('button', { type: 'submit', class: 'warn' }, 'Drain'));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (!pick.value) return;
      const req = { now: now.checked };
      if (reason.value.trim()) req.reason = reason.value.trim();
      act(pick.value, 'drain', req).then(() => { reason.value = ''; now.checked = false; });
    });
    root.append(form, result);
  } else {
    root.append(h('p', { class: 'muted small' }, 'Draining and resuming nodes is for admins.'));
  }
  root.append(body);

  const refresh = async () => {
    const { nodes } = await api('/api/nodes');
    if (!ctx.live()) return;
    if (admin) {
      const keep = pick.value;
      fill(pick, nodes.map((n) => h('option', { value: n.name }, n.name)));
      if (nodes.some((n) => n.name === keep)) pick.value = keep;
    }
    fill(body, table(
      ['node', 'state', 'address', 'GPUs', 'CPUs free', 'memory free', 'drain', 'health', 'agent', 'seen', admin ? '' : null].filter((x) => x !== null),
      nodes.map((n) => row(n, admin, act)), 'grid nodes'));
  };
  ctx.every(refresh);
}

function row(n, admin, act) {
  const sick = n.gpus.filter((g) => health(n, g.index).state === 'unhealthy');
  const models = [...new Set(n.gpus.map((g) => g.model))].join(', ');
  const cells = [
    h('td', {}, h('strong', {}, n.name)),
    h('td', {}, badge(n.state, n.state === 'online' ? 'ok' : 'bad')),
    h('td', {}, n.addr || ''),
    h('td', {}, n.gpus.length ? `${n.gpus.length} × ${models}` : 'none'),
    h('td', { class: 'num' }, `${milli(n.free_cpu_milli)} / ${n.cpus}`),
    h('td', { class: 'num' }, `${mib(n.free_mem_mib)} / ${mib(n.mem_mib)}`),
    h('td', { class: 'drain-cell' }, n.drain
      ? [badge(n.drain.now ? 'drained (now)' : 'drained', 'warn'), ' ', h('span', { class: 'reason' },
        `${n.drain.reason} (${n.drain.by}, ${ago(n.drain.since_ms)})`)]
      : h('span', { class: 'muted' }, '—')),
    h('td', {}, sick.length
      ? sick.map((g) => h('div', {}, badge(`GPU ${g.index}`, 'bad'), ' ', h('span', { class: 'reason' }, health(n, g.index).reason)))
      // Nobody hears from a node that is not online: its GPUs' health is unknown.
      : n.state === 'online' ? badge('healthy', 'ok') : h('span', { class: 'muted' }, 'unknown')),
    h('td', { class: 'small' }, n.agent_version),
    h('td', { class: 'num' }, `${Math.round(n.last_seen_ms_ago / 1000)}s`),
  ];
  if (admin) {
    cells.push(h('td', {}, n.drain || sick.length
      ? h('button', { type: 'button', class: 'small', dataset: { resume: n.name }, onclick: () => act(n.name, 'resume') }, 'Resume')
      : null));
  }
  return h('tr', { dataset: { node: n.name } }, cells);
}
