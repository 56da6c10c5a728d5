// Sign-in: paste a token; GET /api/whoami checks it before it is kept (sessionStorage).

import { api, signIn, takeReason } from './api.js';
import { h } from './dom.js';

export function start(root, ctx) {
  const reason = takeReason();
  const input = h('input', {
    id: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false',
    placeholder: 'gst_…', required: true,
  });
  const err = h('p', { id: 'signin-error', class: 'error', hidden: !reason }, reason || '');
  const button = h('button', { type: 'submit', id: 'signin-submit' }, 'Sign in');
  const form = h('form', { class: 'signin', autocomplete: 'off' },
    h('h1', {}, 'Sign in to gpusched'),
    h('label', { for: 'token' }, 'Token'),
    input,
    err,
    button,
    h('p', { class: 'muted small' },
      'An admin makes one on the server\'s host with ',
      h('code', {}, 'gpusched token create USER'),
      ' (add --admin for an admin token). It is kept in this tab only (sessionStorage) and '
      + 'sent as a bearer header; closing the tab or signing out forgets it.'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const t = input.value.trim();
    if (!t) return;
    button.disabled = true;
    err.hidden = true;
    try {
      const who = await api('/api/whoami', { token: t });
      signIn(t);
      ctx.signedIn(who);
    } catch (e) {
      err.textContent = e.message;
      err.hidden = false;
    } finally {
      button.disabled = false;
    }
  });
  root.appendChild(form);
  input.focus();
}
