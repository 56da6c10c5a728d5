// Every data request of the page: the /api endpoints with the signed-in token as a
// bearer header. The token lives in sessionStorage only (gone with the tab; no cookie,
// so no request carries it unless this code adds it: no CSRF).

const KEY = 'gpusched.token';
const REASON = 'gpusched.signin-reason';

export function token() {
  return sessionStorage.getItem(KEY);
}

export function signIn(t) {
  sessionStorage.setItem(KEY, t);
  sessionStorage.removeItem(REASON);
}

/** Forgets the token; `why` is shown on the sign-in page. */
export function signOut(why) {
  sessionStorage.removeItem(KEY);
  if (why) sessionStorage.setItem(REASON, why);
  else sessionStorage.removeItem(REASON);
}

/** Why the last session ended (the server's 401 text), once. */
export function takeReason() {
  const r = sessionStorage.getItem(REASON);
  sessionStorage.removeItem(REASON);
  return r;
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Called on any 401: the app goes back to sign-in with the server's text. */
let unauthorized = () => {};
export function onUnauthorized(f) {
  unauthorized = f;
}

/**
 * Calls the API. Resolves with the parsed JSON (or the Response itself with `raw`);
 * rejects with an ApiError carrying the server's own error text.
 */
export async function api(path, opts = {}) {
  const headers = { Authorization: `Bearer ${opts.token || token() || ''}` };
  let body;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let r;
  try {
    r = await fetch(path, { method: opts.method || 'GET', headers, body, cache: 'no-store' });
  } catch (e) {
    throw new ApiError(0, `cannot reach the gpusched server (${e.message}); is it still running?`);
  }
  if (!r.ok) {
    let msg = `${r.status} ${r.statusText}`;
    try {
      const j = await r.json();
      if (j && typeof j.error === 'string') msg = j.error;
    } catch (_) { /* not JSON: keep the status line */ }
    if (r.status === 401 && !opts.token) unauthorized(msg);
    throw new ApiError(r.status, msg);
  }
  return opts.raw ? r : r.json();
}

export const enc = encodeURIComponent;
