// The dashboard: one page, hash routes (#/queue, #/job/7 ...), each page a module with
// `start(root, ctx)`. Pages refresh themselves through ctx.every, which stops when the
// route changes.

import { api, onUnauthorized, signOut, token } from './api.js';
import { fill, h } from './dom.js';
import * as signin from './signin.js';
import * as overview from './overview.js';
import * as queue from './queue.js';
import * as job from './job.js';
import * as queues from './queues.js';
import * as usage from './usage.js';
import * as nodes from './nodes.js';
import * as services from './services.js';

const PAGES = { signin, overview, queue, job, queues, usage, nodes, services };
export const REFRESH_MS = 3000;

const main = document.getElementById('main');
const banner = document.getElementById('banner');
const status = document.getElementById('status');
const meEl = document.getElementById('me');
const signoutBtn = document.getElementById('signout');

let timers = [];
let me = null; // whoami of the signed-in token
let generation = 0; // bumps on every route change: late answers of old pages are dropped

let ticks = []; // the current page's refreshers, run at once when the tab shows again

function stopTimers() {
  for (const t of timers) clearInterval(t);
  timers = [];
  ticks = [];
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) for (const t of ticks) t();
});

function showBanner(text) {
  if (text) fill(banner, text);
  banner.hidden = !text;
}

function setStatus(ok) {
  status.textContent = ok ? `updated ${new Date().toLocaleTimeString()}` : '';
}

onUnauthorized((msg) => {
  me = null;
  signOut(msg);
  stopTimers();
  if (!location.hash.startsWith('#/signin')) location.hash = '#/signin';
  else route();
});

signoutBtn.addEventListener('click', () => {
  signOut();
  me = null;
  location.hash = '#/signin';
});

function header() {
  const signedIn = !!me;
  signoutBtn.hidden = !signedIn;
  document.getElementById('nav').hidden = !signedIn;
  fill(meEl, signedIn ? [me.user, ' ', h('span', { class: `role ${me.role}` }, me.role)] : '');
  document.body.classList.toggle('admin', signedIn && me.role === 'admin');
}

async function route() {
  const gen = ++generation;
  stopTimers();
  showBanner('');
  setStatus(false);
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  let name = parts[0] || 'overview';
  if (!PAGES[name]) name = 'overview';
  if (name !== 'signin' && !token()) {
    location.hash = '#/signin';
    return;
  }
  if (name !== 'signin' && !me) {
    try {
      me = await api('/api/whoami');
    } catch (e) {
      if (e.status !== 401) showBanner(e.message);
      return;
    }
    if (gen !== generation) return;
  }
  if (name === 'signin') me = null;
  header();
  for (const a of document.querySelectorAll('#nav a')) {
    a.classList.toggle('here', a.dataset.page === name || (name === 'job' && a.dataset.page === 'queue'));
  }
  document.title = `gpusched · ${name}`;
  const root = h('div', { class: `page page-${name}` });
  fill(main, root);
  const ctx = {
    me,
    arg: parts.slice(1).join('/'),
    live: () => gen === generation,
    // Runs f now and every REFRESH_MS until the route changes; errors show in the
    // banner (the server's own words) and clear on the next success.
    every(f, ms) {
      const tick = async () => {
        // A hidden tab asks nothing; it catches up when shown (visibilitychange).
        if (gen !== generation || document.hidden) return;
        try {
          await f();
          if (gen === generation) {
            showBanner('');
            setStatus(true);
          }
        } catch (e) {
          if (gen === generation && e.status !== 401) {
            showBanner(e.message);
            setStatus(false);
          }
        }
      };
      tick();
      timers.push(setInterval(tick, ms || REFRESH_MS));
      ticks.push(tick);
    },
    banner: showBanner,
    signedIn(who) {
      me = who;
      location.hash = '#/overview';
    },
  };
  PAGES[name].start(root, ctx);
}

window.addEventListener('hashchange', route);
route();
