// One job: its fields, the parts of a gang, its energy and what it used, its timeline
// (GET /api/jobs/{id}/events), and a live tail of its output
// (GET /api/jobs/{id}/logs: first the last TAIL bytes, then from where they ended; the
// last TAIL bytes are kept; polling stops once the x-gpusched-job-state header says the
// job ended and nothing more comes).

import { api, ApiError } from './api.js';
import { badge, fill, h, table } from './dom.js';
import { ask, clock, dur, joules, milli, mib, TERMINAL, until, used } from './format.js';
import { cancelButton } from './queue.js';

const TAIL = 64 * 1024;
const CHUNK = 1 << 20; // the server's largest answer: a full one means more is waiting

export function start(root, ctx) {
  const id = ctx.arg;
  if (!/^[0-9]{1,19}$/.test(id)) {
    root.append(h('p', { class: 'error' }, `"${id}" is not a job id; open a job from the queue.`));
    return;
  }
  const head = h('div', { id: 'job-head' });
  const fields = h('div', { id: 'job-fields' });
  const parts = h('div', { id: 'job-parts' });
  const timeline = h('div', { id: 'job-events' });
  const streamSel = h('select', { id: 'log-stream' },
    h('option', { value: 'stdout' }, 'stdout'), h('option', { value: 'stderr' }, 'stderr'));
  const logState = h('span', { id: 'log-state', class: 'muted small' });
  const pre = h('pre', { id: 'log', class: 'log' });
  const refusal = h('p', { id: 'log-error', class: 'error', hidden: true });
  // The output shows once the job does: a job the API does not give has none.
  const output = h('div', { id: 'job-output', hidden: true },
    h('h2', {}, 'Output ', streamSel, ' ', logState), refusal, pre);
  root.append(head, fields, parts, timeline, output);

  let job = null;
  const refresh = async () => {
    job = await api(`/api/jobs/${id}`);
    if (!ctx.live()) return;
    render(job, { head, fields, parts }, ctx, refresh);
    output.hidden = false;
    await events(id, timeline, ctx);
  };
  ctx.every(refresh);

  // The log follower: its own loop, reset when the stream or the attempt changes.
  // offset null: not started yet, ask for the tail.
  // gen: bumped when the stream changes, so an answer for the old one is dropped.
  const log = { stream: 'stdout', offset: null, attempt: null, text: '', done: false, busy: false, gen: 0 };
  const decoder = () => new TextDecoder('utf-8');
  let dec = decoder();
  streamSel.addEventListener('change', () => {
    Object.assign(log, { stream: streamSel.value, offset: null, attempt: null, text: '', done: false, gen: log.gen + 1 });
    dec = decoder();
    pre.textContent = '';
    poll();
  });
  const poll = async () => {
    if (!job || log.done || log.busy || !ctx.live()) return;
    log.busy = true;
    const gen = log.gen;
    try {
      for (;;) {
        const from = log.offset === null ? `tail=${TAIL}` : `offset=${log.offset}`;
        const r = await api(`/api/jobs/${id}/logs?stream=${log.stream}&${from}`, { raw: true });
        if (!ctx.live() || gen !== log.gen) return;
        const attempt = r.headers.get('x-gpusched-job-attempt');
        if (log.attempt !== null && attempt !== log.attempt) {
          // Requeued and started again: the new attempt's output, from its tail.
          Object.assign(log, { offset: null, text: '' });
          dec = decoder();
          log.attempt = attempt;
          continue;
        }
        log.attempt = attempt;
        const bytes = new Uint8Array(await r.arrayBuffer());
        if (gen !== log.gen) return;
        if (log.offset === null) {
          log.offset = Number(r.headers.get('x-gpusched-log-offset') || 0);
          if (log.offset > 0) log.text = `[… ${log.offset} earlier bytes not shown]\n`;
        }
        log.offset += bytes.length;
        if (bytes.length) {
          log.text = (log.text + dec.decode(bytes, { stream: true })).slice(-TAIL);
          const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
          pre.textContent = log.text;
          if (atBottom) pre.scrollTop = pre.scrollHeight;
        }
        refusal.hidden = true;
        pre.hidden = false;
        const state = r.headers.get('x-gpusched-job-state');
        if (TERMINAL.has(state) && bytes.length < CHUNK) {
          log.done = true;
          logState.textContent = `${state}: complete, ${log.offset} bytes${log.offset > TAIL ? ` (last ${TAIL / 1024} KiB shown)` : ''}`;
        } else {
          logState.textContent = `following · ${log.offset} bytes`;
        }
        if (bytes.length < CHUNK) break;
      }
    } catch (e) {
      if (!ctx.live() || gen !== log.gen) return;
      if (!(e instanceof ApiError)) throw e;
      // A refusal (403: not your job) or not yet (a pending job has no output): the
      // server's words, not a broken page.
      refusal.textContent = e.message;
      // 403 is a refusal; 404 is a job that has not started yet (the page keeps asking).
      refusal.className = e.status === 403 ? 'error' : 'note muted';
      refusal.hidden = false;
      pre.hidden = e.status === 403; // no empty log box under a refusal
      log.done = e.status === 403; // a refusal stays one; anything else may pass
      logState.textContent = '';
    } finally {
      log.busy = false;
    }
  };
  ctx.every(poll, 1500);
}

function render(j, els, ctx, refresh) {
  fill(els.head, h('h1', {}, `Job ${j.id} `, h('span', { class: 'name' }, j.name), ' ',
    badge(j.cancel_requested && !TERMINAL.has(j.state) ? 'cancelling' : j.state), ' ',
    cancelButton(j, ctx, refresh)));
  const f = [
    ['user', j.user],
    // A replica of a service (issue 34): its service, version, port and readiness.
    ['service', j.service ? h('span', { id: 'job-service' },
      h('a', { href: `#/services/${encodeURIComponent(j.service.service)}` }, j.service.service),
      ` · version ${j.service.version}${j.service.port ? ` · port ${j.service.port}` : ''} · `,
      badge(j.service.ready ? 'ready' : 'not ready', j.service.ready ? 'ok' : 'warn')) : ''],
    ['queue', `${j.queue} · priority ${j.priority}`],
    ['state', j.reason ? `${j.state}: ${j.reason}` : j.state],
    ['asks', [ask(j), j.gpu_model ? ` of ${j.gpu_model}` : '',
      j.cpu_milli ? ` · ${milli(j.cpu_milli)} CPUs` : '', j.mem_mib ? ` · ${mib(j.mem_mib)}` : '',
      ...Object.entries(j.resources || {}).map(([k, v]) => ` · ${k}=${v}`)].join('')],
    // Another user's command comes empty: only its owner and admins see it.
    ['command', j.command.length ? h('code', { class: 'cmd' }, j.command.map(quote).join(' '))
      : 'only its owner and admins see it'],
    ['cwd', h('code', {}, j.cwd)],
    ['image', j.image ? h('code', {}, j.image) : ''],
    ['node', j.node ? `${j.node}${j.gpu_indices.length ? ` · GPU ${j.gpu_indices.join(', ')}` : ''}` : ''],
    ['submitted', clock(j.submit_ms)],
    ['started', j.start_ms ? clock(j.start_ms) : (j.est_start_ms ? `estimated ${until(j.est_start_ms)} (${clock(j.est_start_ms)})` : '')],
    ['ended', j.end_ms ? clock(j.end_ms) : ''],
    ['run time', j.start_ms ? dur(((j.end_ms || Date.now()) - j.start_ms) / 1000) : ''],
    ['walltime', j.walltime_s ? dur(j.walltime_s) : 'none'],
    ['exit', j.exit_code !== null ? String(j.exit_code) : (j.signal ? `signal ${j.signal}` : '')],
    ['attempt', `${j.attempt} (retries allowed ${j.max_retries}${j.preemptions ? `, preempted ${j.preemptions}×` : ''})`],
    ['after', (j.after || []).length ? j.after.map((a) => h('a', { href: `#/job/${a}` }, `job ${a} `)) : ''],
    ['energy', joules(j.energy_j)],
    // What the attempt used, measured by its nodes' cgroups when it ended (issue 32).
    ['used', used(j)],
    ['env', (j.env_keys || []).join(', ')],
  ].filter(([, v]) => v !== '' && v !== null && !(Array.isArray(v) && !v.length));
  fill(els.fields, h('dl', { class: 'fields' }, f.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])));
  fill(els.parts, j.parts && j.parts.length > 1
    ? [h('h2', {}, `Parts (${j.parts.length} nodes)`),
      table(['rank', 'node', 'address', 'GPUs', 'state', 'exit'], j.parts.map((p) => h('tr', {},
        h('td', { class: 'num' }, String(p.rank)), h('td', {}, p.node), h('td', {}, p.addr || ''),
        h('td', {}, p.gpu_indices.join(', ')), h('td', {}, badge(p.state)),
        h('td', {}, p.exit_code !== null && p.exit_code !== undefined ? String(p.exit_code) : (p.signal ? `signal ${p.signal}` : ''))
      )))]
    : '');
}

/** The job's timeline, oldest first; the server's refusal (403: not your job) in its place. */
async function events(id, el, ctx) {
  let ev;
  try {
    ev = await api(`/api/jobs/${id}/events`);
  } catch (e) {
    if (!(e instanceof ApiError) || !ctx.live()) throw e;
    fill(el, h('h2', {}, 'Events'), h('p', { class: e.status === 403 ? 'error' : 'note muted' }, e.message));
    return;
  }
  if (!ctx.live()) return;
  const rows = ev.events.map((e) => h('tr', {},
    h('td', {}, clock(e.at_ms)), h('td', {}, badge(e.kind.replace('_', ' '), kindClass(e.kind))),
    h('td', { class: 'num' }, e.attempt ? String(e.attempt) : '-'), h('td', {}, (e.nodes || []).join(', ')),
    h('td', { class: 'reason' }, e.detail || '')));
  fill(el, h('h2', {}, 'Events'),
    ev.dropped ? h('p', { class: 'note muted' }, `${ev.dropped} older events were dropped (the server keeps 256 per job)`) : '',
    table(['time', 'event', 'attempt', 'nodes', 'detail'], rows, 'grid events'));
}

function kindClass(kind) {
  if (kind === 'preempted' || kind === 'requeued' || kind === 'cancel_requested') return 'warn';
  return undefined;
}

function quote(a) {
  return /^[A-Za-z0-9_\-./=:,@+%]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`;
}
