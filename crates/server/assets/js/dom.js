// Building the DOM without ever parsing data as HTML: every string goes in as a text
// node, so job names, commands and reasons (user input) cannot inject markup.

/** h('a', {href, class, onclick}, child...) : children are nodes, strings or arrays. */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

const SVG = 'http://www.w3.org/2000/svg';

/** The same for SVG elements (charts). */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'dataset') {
      Object.assign(el.dataset, v);
    } else if (k === 'width%') {
      el.style.width = `${Math.max(0, Math.min(100, v))}%`;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A table from a header row and rows of cells. */
export function table(heads, rows, cls) {
  return h('table', { class: cls || 'grid' },
    h('thead', {}, h('tr', {}, heads.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows));
}

/** A coloured word: state badges (`running`, `pending`, `unhealthy`...). */
export function badge(text, kind) {
  return h('span', { class: `badge ${kind || text}` }, text);
}

/** A horizontal meter, 0-100 %, with its label beside it. */
export function meter(pct, label, kind) {
  const p = Number.isFinite(pct) ? pct : 0;
  return h('span', { class: 'meter' },
    h('span', { class: `bar ${kind || ''}` }, h('span', { class: 'fill', 'width%': p })),
    h('span', { class: 'num' }, label));
}
