/**
 * The page's script (plain browser JS, no build step): polls `data` every second and redraws. Every string
 * from the server reaches the DOM through textContent or an attribute value, never as markup: group ids are
 * untrusted. Written without template literals so it sits in this one.
 */
import { OVERRIDES_SCRIPT } from './page-overrides-script';

const BEFORE_OVERRIDES = `
'use strict';
(function () {
  var TOKEN_KEY = 'bulk-limiter-dashboard-token';
  var OUTCOMES = ['allowed', 'denied', 'deferred'];
  var STATES = ['delayed', 'pending', 'ready', 'active', 'completed', 'dead'];
  var SHARE_SECONDS = 10;
  var base = location.pathname.replace(/\\/?$/, '/');
  var root = document.getElementById('root');
  var statusBadge = document.getElementById('status');
  var updated = document.getElementById('updated');
  var unlock = document.getElementById('unlock');
  var tokenInput = document.getElementById('token');
  var last = null;

  function h(tag, attrs, children) {
    var el = document.createElement(tag);
    for (var name in attrs || {}) if (attrs[name] !== undefined) el.setAttribute(name, attrs[name]);
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      el.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    });
    return el;
  }
  function s(tag, attrs) {
    var el = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (var name in attrs) el.setAttribute(name, String(attrs[name]));
    return el;
  }
  function fmt(n) {
    if (n === null || n === undefined) return '–';
    if (n > 0 && n < 1) return String(Number(n.toPrecision(2)));
    var r = Math.round(n * 10) / 10;
    return r.toLocaleString('en-US', { maximumFractionDigits: 1 });
  }
  function pct(x) { return (Math.round(x * 1000) / 10).toLocaleString('en-US') + ' %'; }
  function total(list, from) { var n = 0; for (var i = from || 0; i < list.length; i++) n += list[i]; return n; }
  /** The last complete second. */
  function lastSecond(list) { return list.length > 1 ? list[list.length - 2] : 0; }
  /** A wait: '–' when nothing is due (0), else seconds, minutes or hours. */
  function wait(ms) {
    if (!(ms > 0)) return '–';
    if (ms < 60000) return fmt(ms / 1000) + ' s';
    if (ms < 5400000) return fmt(ms / 60000) + ' min';
    return fmt(ms / 3600000) + ' h';
  }
  function ago(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    if (s < 90) return s + ' s ago';
    if (s < 5400) return Math.round(s / 60) + ' min ago';
    return Math.round(s / 3600) + ' h ago';
  }

  /** Lines of the given series (one per outcome) over the history, optionally a dashed limit line. */
  function chart(series, keys, width, height, opts) {
    opts = opts || {};
    var svg = s('svg', { viewBox: '0 0 ' + width + ' ' + height, height: height, preserveAspectRatio: 'none', role: 'img' });
    var n = series[keys[0]].length;
    var max = opts.limit || 0;
    keys.forEach(function (k) { series[k].forEach(function (v) { if (v > max) max = v; }); });
    // Headroom above the limit line for its label.
    max = max > 0 ? max * (opts.limit ? 1.3 : 1.12) : 1;
    var x = function (i) { return (i / Math.max(1, n - 1)) * width; };
    var y = function (v) { return height - 2 - (v / max) * (height - 6); };
    svg.appendChild(s('line', { class: 'base', x1: 0, x2: width, y1: height - 1.5, y2: height - 1.5 }));
    if (opts.area) {
      var pts = ['0,' + (height - 1.5)];
      series[keys[0]].forEach(function (v, i) { pts.push(x(i).toFixed(1) + ',' + y(v).toFixed(1)); });
      pts.push(width + ',' + (height - 1.5));
      svg.appendChild(s('polygon', { class: 'a-' + keys[0], points: pts.join(' ') }));
    }
    if (opts.limit) {
      svg.appendChild(s('line', { class: 'limit-line', x1: 0, x2: width, y1: y(opts.limit), y2: y(opts.limit) }));
      var label = s('text', { class: 'limit-text', x: width - 4, y: y(opts.limit) - 4, 'text-anchor': 'end' });
      label.textContent = opts.limitLabel;
      svg.appendChild(label);
    }
    keys.forEach(function (k) {
      var points = series[k].map(function (v, i) { return x(i).toFixed(1) + ',' + y(v).toFixed(1); }).join(' ');
      var line = s('polyline', { class: 'l-' + k, points: points, 'vector-effect': 'non-scaling-stroke' });
      line.setAttribute('data-series', k);
      svg.appendChild(line);
    });
    return svg;
  }

  function card(cls, label, big, sub, svg) {
    return h('div', { class: 'card ' + cls }, [h('div', { class: 'label' }, [label]), h('div', { class: 'big ' + cls }, [big]), h('div', { class: 'sub' }, [sub]), svg]);
  }

  /** What is redrawn at each poll: everything of a limiter but its override form. */
  function limiterParts(l, data) {
    var t = l.traffic;
    var seconds = Math.min(59, Math.max(1, Math.ceil(l.windowMs / 1000)));
    var admittedRecent = total(t.allowed.slice(-1 - seconds, -1)) / seconds;
    var util = l.capacityPerSecond > 0 ? admittedRecent / l.capacityPerSecond : 0;
    var perWindow = l.windowMs === 1000 ? l.limit + '/s' : l.limit + ' per ' + fmt(l.windowMs / 1000) + ' s';
    // an adaptive limit: the one in force next to the configured one
    if (l.limitInForce !== l.limit) perWindow = l.limitInForce + ' in force (configured ' + perWindow + ')';
    var capacity = fmt(l.capacityPerSecond) + '/s';
    var head = h('h2', {}, ['limiter ', h('span', { class: 'c-limiter' }, [l.name]),
      h('span', { class: 'meta' }, ['limit ' + perWindow + ' · burst ' + l.burst + ' · ' + (l.sustained ? 'sustained' : 'strict') + ' capacity ' + capacity +
        ' · ' + l.groups.length + ' busy tenant' + (l.groups.length === 1 ? '' : 's')]),
      l.degraded ? h('span', { class: 'badge bad' }, ['store down: the outage policy answers']) : null]);
    var limitLabel = 'capacity ' + capacity;
    var cards = h('div', { class: 'cards' }, [
      card('c-util', 'Utilisation', pct(util), fmt(admittedRecent) + ' admitted/s of ' + capacity + (seconds > 1 ? ' (last ' + seconds + ' s)' : ''),
        chart(t, ['allowed'], 260, 64, { area: true, limit: l.capacityPerSecond, limitLabel: limitLabel })),
      card('allowed', 'Admitted /s', fmt(lastSecond(t.allowed)), fmt(total(t.allowed)) + ' in the last minute', chart(t, ['allowed'], 260, 40)),
      card('denied', 'Denied /s', fmt(lastSecond(t.denied)), fmt(total(t.denied)) + ' in the last minute', chart(t, ['denied'], 260, 40)),
      card('deferred', 'Deferred /s', fmt(lastSecond(t.deferred)), fmt(total(t.deferred)) + ' in the last minute', chart(t, ['deferred'], 260, 40)),
    ]);
    return [head, cards,
      h('h3', {}, ['Tenants']), tenantsTable(l),
      h('h3', {}, ['Queue']), queueStates(l),
      h('h3', {}, ['Dead letters']), deadTable(l, data),
      h('h3', {}, ['Overrides']), overridesTable(l, data)];
  }

  function tenantsTable(l) {
    if (l.groups.length === 0) return h('div', { class: 'empty' }, ['No traffic in the last minute.']);
    var allowedRecent = total(l.traffic.allowed.slice(-SHARE_SECONDS));
    var head = h('tr', {}, [h('th', {}, ['tenant']), h('th', {}, ['plan']),
      h('th', { class: 'num' }, ['admitted/s']), h('th', { class: 'num' }, ['denied/s']), h('th', { class: 'num' }, ['deferred/s']),
      h('th', { class: 'num', title: 'admitted · denied · deferred in the last 60 s' }, ['last 60 s']),
      h('th', { title: 'share of all admissions in the last ' + SHARE_SECONDS + ' s; the mark is the fair share the store guarantees (weight / Σ weights of active tenants)' }, ['share (' + SHARE_SECONDS + ' s) vs fair share']),
      h('th', { class: 'num', title: 'jobs waiting · running' }, ['jobs']),
      h('th', { class: 'num', title: 'how long the oldest job that is due but not started has waited' }, ['oldest']), h('th', {}, ['last 60 s'])]);
    var rows = l.groups.map(function (g) {
      var t = g.traffic;
      var share = allowedRecent > 0 ? total(t.allowed.slice(-SHARE_SECONDS)) / allowedRecent : 0;
      var fair = g.guaranteed === null ? null : Math.min(1, g.guaranteed / l.limitInForce);
      var fill = h('div', { class: 'fill' });
      fill.style.width = (share * 100).toFixed(1) + '%';
      var bar = h('div', { class: 'bar' }, [fill]);
      if (fair !== null) {
        var mark = h('div', { class: 'fair', title: 'fair share' });
        mark.style.left = 'calc(' + (fair * 100).toFixed(1) + '% - 1px)';
        bar.appendChild(mark);
      }
      var shareText = pct(share) + (fair === null ? '' : ' · fair ' + pct(fair));
      var shareTitle = fair === null ? 'no store decision yet' : 'the store guarantees ' + g.guaranteed + ' of ' + l.limitInForce + ' per window';
      return h('tr', { 'data-group': g.group }, [
        h('td', { class: 'c-group', title: g.group }, [g.group]),
        h('td', { class: 'c-plan muted' }, [g.plan === undefined ? '–' : g.plan]),
        h('td', { class: 'num allowed c-rate-allowed' }, [fmt(lastSecond(t.allowed))]),
        h('td', { class: 'num denied c-rate-denied' }, [fmt(lastSecond(t.denied))]),
        h('td', { class: 'num deferred c-rate-deferred' }, [fmt(lastSecond(t.deferred))]),
        h('td', { class: 'num' }, [h('span', { class: 'allowed c-total-allowed' }, [fmt(total(t.allowed))]), ' · ',
          h('span', { class: 'denied c-total-denied' }, [fmt(total(t.denied))]), ' · ',
          h('span', { class: 'deferred c-total-deferred' }, [fmt(total(t.deferred))])]),
        h('td', { class: 'c-share', title: shareTitle }, [h('div', { class: 'share' }, [bar, h('span', { class: 'txt' }, [shareText])])]),
        h('td', { class: 'num c-jobs' }, [g.jobs === null ? '–' : g.jobs.waiting + ' · ' + g.jobs.active]),
        h('td', { class: 'num c-oldest' + (g.jobs !== null && g.jobs.oldestWaitingMs > 0 ? ' deferred' : ' muted'), 'data-ms': g.jobs === null ? undefined : g.jobs.oldestWaitingMs },
          [g.jobs === null ? '–' : wait(g.jobs.oldestWaitingMs)]),
        h('td', { class: 'c-spark' }, [chart(t, OUTCOMES, 160, 28)]),
      ]);
    });
    var o = l.other;
    var others = total(o.allowed) + total(o.denied) + total(o.deferred);
    if (others > 0) {
      rows.push(h('tr', { class: 'other' }, [h('td', { class: 'muted' }, ['all other tenants']), h('td', {}, []),
        h('td', { class: 'num allowed' }, [fmt(lastSecond(o.allowed))]), h('td', { class: 'num denied' }, [fmt(lastSecond(o.denied))]),
        h('td', { class: 'num deferred' }, [fmt(lastSecond(o.deferred))]),
        h('td', { class: 'num' }, [fmt(total(o.allowed)) + ' · ' + fmt(total(o.denied)) + ' · ' + fmt(total(o.deferred))]),
        h('td', {}, []), h('td', {}, []), h('td', {}, []), h('td', { class: 'c-spark' }, [chart(o, OUTCOMES, 160, 28)])]));
    }
    return h('div', { class: 'scroll' }, [h('table', { class: 'tenants' }, [h('thead', {}, [head]), h('tbody', {}, rows)])]);
  }

  function queueStates(l) {
    if (l.jobs === null) return h('div', { class: 'empty' }, ['The store did not answer.']);
    var tiles = STATES.map(function (state) {
      return h('div', { class: 'state s-' + state, 'data-state': state }, [h('b', {}, [fmt(l.jobs[state])]), h('span', {}, [state])]);
    });
    tiles.push(h('div', { class: 'state s-oldest', 'data-ms': l.jobs.oldestWaitingMs, title: 'how long the oldest job that is due but not started has waited' },
      [h('b', {}, [wait(l.jobs.oldestWaitingMs)]), h('span', {}, ['oldest waiting'])]));
    return h('div', { class: 'states' }, tiles);
  }

  function deadTable(l, data) {
    if (l.dead === null) return h('div', { class: 'empty' }, ['The store did not answer.']);
    if (l.dead.length === 0) return h('div', { class: 'empty' }, ['No dead letters.']);
    var canAct = data.actions === 'allowed';
    var head = h('tr', {}, [h('th', {}, ['job']), h('th', {}, ['tenant']), h('th', {}, ['type']), h('th', { class: 'num' }, ['attempts']),
      h('th', {}, ['reason']), h('th', {}, ['died']), canAct ? h('th', {}, ['']) : null]);
    var rows = l.dead.map(function (j) {
      var actions = canAct ? h('td', {}, [
        button('Retry', '', function () { act('retry', l.name, j.id); }),
        ' ', button('Remove', 'danger', function () { act('remove', l.name, j.id); })]) : null;
      return h('tr', { 'data-job': j.id }, [h('td', { class: 'c-id' }, [j.id]), h('td', { class: 'c-group', title: j.group }, [j.group]), h('td', {}, [j.type]),
        h('td', { class: 'num' }, [j.attempts]), h('td', { class: 'c-reason' }, [j.error === undefined ? '–' : j.error]),
        h('td', { class: 'muted' }, [j.diedAt === undefined ? '–' : ago(data.now - j.diedAt)]), actions]);
    });
    return h('div', { class: 'scroll' }, [h('table', { class: 'dead' }, [h('thead', {}, [head]), h('tbody', {}, rows)])]);
  }

`;

const AFTER_OVERRIDES = `
  /** Each limiter's section, made once: its live part is redrawn at each poll, its form kept. */
  var sections = {};

  function render(data) {
    last = data;
    var canAct = data.actions === 'allowed';
    var order = data.limiters.map(function (l) {
      var entry = sections[l.name];
      if (entry === undefined) {
        var live = h('div', {});
        var form = overrideForm(l.name);
        entry = sections[l.name] = { live: live, form: form, el: h('section', { class: 'limiter', 'data-limiter': l.name }, [live, form.el]) };
      }
      entry.live.replaceChildren.apply(entry.live, limiterParts(l, data));
      entry.form.update(l, canAct);
      return entry.el;
    });
    var same = order.length === root.children.length && order.every(function (el, i) { return root.children[i] === el; });
    if (!same) root.replaceChildren.apply(root, order);
    unlock.hidden = data.actions !== 'locked';
    statusBadge.textContent = 'live';
    statusBadge.className = 'badge live';
    updated.textContent = 'updated ' + new Date(data.now).toLocaleTimeString();
    document.body.setAttribute('data-ready', '1');
  }

  function poll() {
    return fetch(base + 'data', { cache: 'no-store', headers: headers() })
      .then(function (res) { if (!res.ok) throw new Error('HTTP ' + res.status); return res.json(); })
      .then(render, function () {
        statusBadge.textContent = last === null ? 'cannot reach the server' : 'offline: showing the last answer';
        statusBadge.className = 'badge bad';
      });
  }

  unlock.addEventListener('submit', function (event) {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, tokenInput.value);
    tokenInput.value = '';
    poll();
  });
  (function loop() { poll().then(function () { setTimeout(loop, 1000); }); })();
})();
`;

/** The whole script: the override parts are function declarations inside the same closure. */
export const PAGE_SCRIPT: string = BEFORE_OVERRIDES + OVERRIDES_SCRIPT + AFTER_OVERRIDES;
