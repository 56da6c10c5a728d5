// Numbers and times as an operator reads them.

export function ago(ms) {
  if (ms === null || ms === undefined) return '';
  return `${dur((Date.now() - ms) / 1000)} ago`;
}

export function until(ms) {
  if (ms === null || ms === undefined) return '';
  const s = (ms - Date.now()) / 1000;
  return s <= 0 ? 'now' : `in ${dur(s)}`;
}

export function dur(s) {
  s = Math.max(0, Math.round(s));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

export function clock(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  const same = d.toDateString() === new Date().toDateString();
  return same ? d.toLocaleTimeString() : d.toLocaleString();
}

export function mib(m) {
  if (m === null || m === undefined) return '';
  if (m >= 1024 * 1024) return `${(m / 1048576).toFixed(1)} TiB`;
  if (m >= 1024) return `${(m / 1024).toFixed(m >= 10240 ? 0 : 1)} GiB`;
  return `${m} MiB`;
}

export function watts(mw) {
  return mw === null || mw === undefined ? '' : `${Math.round(mw / 1000)} W`;
}

export function joules(j) {
  if (j === null || j === undefined) return 'not measured';
  if (j >= 3.6e6) return `${(j / 3.6e6).toFixed(2)} kWh`;
  if (j >= 3600) return `${(j / 3600).toFixed(1)} Wh`;
  return `${j} J`;
}

export function num(x, digits) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '';
  return x.toLocaleString(undefined, { maximumFractionDigits: digits ?? 2 });
}

/** Small amounts keep two significant digits (0.0012 GPU-hours is not 0). */
export function amount(x) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '';
  if (x === 0) return '0';
  if (Math.abs(x) < 0.01) return x.toPrecision(2);
  return x.toLocaleString(undefined, { maximumFractionDigits: Math.abs(x) < 10 ? 3 : 1 });
}

export function milli(m) {
  return (m / 1000).toLocaleString(undefined, { maximumFractionDigits: 3 });
}

/** `1 GPU`, `2 GPUs`. */
export function gpus(n) {
  return n === 1 ? '1 GPU' : `${n} GPUs`;
}

/** What a job asks for, as `gpusched queue` writes it. */
export function ask(j) {
  if (j.slice) {
    if (j.slice.kind === 'share') return `${milli(j.slice.milli)} GPU`;
    if (j.slice.kind === 'memory') return `${mib(j.slice.mib)} of a GPU`;
    if (j.slice.kind === 'mig') return `MIG ${j.slice.profile}`;
  }
  if (j.nodes > 1) return `${j.nodes} × ${gpus(j.gpus_per_node)}`;
  if (j.gpus === 0) return 'no GPU';
  return gpus(j.gpus);
}

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled', 'timed_out']);

/** CPU time as `gpusched show` writes it: `350 ms`, `12.5 s`, `4m05s`, `1h02m`. */
export function cpuTime(ms) {
  const s = Math.floor(ms / 1000);
  if (s === 0) return `${ms} ms`;
  if (s < 60) return `${(ms / 1000).toFixed(1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

/**
 * What a job's attempt used, as its nodes' cgroups measured it (`show`'s `used` line):
 * CPU time and cores on average, peak memory of its largest part against its --mem,
 * stalls where the kernel said. Empty while it runs or where nothing was measured.
 */
export function used(j) {
  const u = j.usage;
  if (!u) return j.start_ms && j.end_ms ? 'not measured' : '';
  const parts = [`CPU ${cpuTime(u.cpu_ms)}`];
  const ran = j.start_ms && j.end_ms ? j.end_ms - j.start_ms : 0;
  if (ran > 0) parts[0] += ` (${(u.cpu_ms / ran).toFixed(1)} cores avg)`;
  if (u.mem_peak_bytes !== undefined && u.mem_peak_bytes !== null) {
    let peak = `peak memory ${mib(Math.round(u.mem_peak_bytes / 1048576))}`;
    if ((j.parts || []).length > 1) peak += ' (largest part)';
    if (j.mem_mib) peak += ` of ${mib(j.mem_mib)} asked`;
    parts.push(peak);
  }
  const stalls = [['CPU', u.cpu_pressure_ms], ['memory', u.mem_pressure_ms]]
    .filter(([, ms]) => ms !== undefined && ms !== null)
    .map(([what, ms]) => `on ${what} ${cpuTime(ms)}`);
  return parts.join(', ') + (stalls.length ? `; stalled ${stalls.join(', ')}` : '');
}
