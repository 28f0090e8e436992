/**
 * The dashboard page's override parts (see ./page-script.ts, which places them inside its closure): the list of a
 * limiter's overrides with Edit and Remove, and the form that sets or changes one (POST overrides/set). Plain
 * browser JS; server strings reach the DOM through textContent or attribute values only.
 */
export const OVERRIDES_SCRIPT: string = `
  function settingsText(settings) {
    return Object.keys(settings).map(function (k) {
      var v = settings[k];
      if (k === 'blocked') return 'blocked';
      if (k === 'rules') return 'rules ' + v.map(function (r) { return r.name + ' ' + r.limit + '/' + r.windowMs + ' ms'; }).join(', ');
      return k + ' ' + v;
    }).join('; ');
  }

  function overridesTable(l, data) {
    var canAct = data.actions === 'allowed';
    if (l.overrides === null) return h('div', { class: 'empty' }, ['The store did not answer.']);
    if (l.overrides.length === 0) return h('div', { class: 'empty' }, ['No overrides.']);
    var head = h('tr', {}, [h('th', {}, ['tenant']), h('th', {}, ['settings']), h('th', {}, ['reason']), h('th', {}, ['set']),
      h('th', {}, ['ends']), canAct ? h('th', {}, ['']) : null]);
    var rows = l.overrides.map(function (o) {
      var actions = canAct ? h('td', {}, [button('Edit', '', function () { sections[l.name].form.fill(o, data.now); }),
        ' ', button('Remove', 'danger', function () { override('remove', l.name, o.group); })]) : null;
      return h('tr', { 'data-group': o.group }, [h('td', { class: 'c-group', title: o.group }, [o.group]), h('td', { class: 'c-settings' }, [settingsText(o.settings)]),
        h('td', { class: 'c-reason' }, [o.reason === undefined ? '–' : o.reason]), h('td', { class: 'muted' }, [ago(data.now - o.setAt)]),
        h('td', { class: 'muted' }, [o.expiresAt === undefined ? 'never' : 'in ' + wait(o.expiresAt - data.now)]), actions]);
    });
    return h('div', { class: 'scroll' }, [h('table', { class: 'overrides' }, [h('thead', {}, [head]), h('tbody', {}, rows)])]);
  }

  /** Removes a tenant's override. */
  function override(action, limiter, group) {
    var url = base + 'overrides/' + action + '?limiter=' + encodeURIComponent(limiter) + '&group=' + encodeURIComponent(group);
    fetch(url, { method: 'POST', headers: headers() }).then(function (res) {
      if (!res.ok) statusBadge.textContent = 'override ' + action + ' failed (' + res.status + ')';
      return poll();
    });
  }

  function button(label, cls, onClick) {
    var b = h('button', { type: 'button', class: cls || undefined }, [label]);
    b.addEventListener('click', onClick);
    return b;
  }

  function headers() {
    var token = sessionStorage.getItem(TOKEN_KEY);
    var out = { 'X-Requested-With': 'bulk-limiter-dashboard' };
    if (token) out.Authorization = 'Bearer ' + token;
    return out;
  }

  function act(action, limiter, id) {
    var url = base + 'dead/' + action + '?limiter=' + encodeURIComponent(limiter) + '&id=' + encodeURIComponent(id);
    fetch(url, { method: 'POST', headers: headers() }).then(function (res) {
      if (!res.ok) statusBadge.textContent = action + ' failed (' + res.status + ')';
      return poll();
    });
  }

  var NUMBER = /^\\d+(\\.\\d+)?$/;
  var FIELDS = ['group', 'plan', 'weight', 'concurrency', 'groupConcurrency', 'rules', 'reason'];
  var TTL_UNITS = [['min', 60000], ['h', 3600000], ['d', 86400000], ['s', 1000]];

  function field(label, input, hint) {
    return h('label', { title: hint }, [h('span', {}, [label]), input]);
  }
  function text(name, attrs) {
    var a = { name: name, type: 'text', autocomplete: 'off' };
    for (var k in attrs || {}) a[k] = attrs[k];
    return h('input', a);
  }

  /**
   * A limiter's form to set or change a tenant's override (POST overrides/set). Built once and kept across polls,
   * so what is being typed survives the redraw; the server validates every field (its 400 is shown as it is).
   */
  function overrideForm(limiter) {
    var plan = h('select', { name: 'plan' }, [h('option', { value: '' }, ['–'])]);
    var plans = '';
    var unit = h('select', { name: 'ttlUnit' }, TTL_UNITS.map(function (u) { return h('option', { value: String(u[1]) }, [u[0]]); }));
    var blocked = h('input', { name: 'blocked', type: 'checkbox' });
    var message = h('output', { class: 'form-msg' });
    var el = h('form', { class: 'override-form', hidden: '', novalidate: '' }, [
      h('div', { class: 'row' }, [
        field('tenant', text('group', { required: '', placeholder: 'group id' })),
        field('plan', plan, "the limiter's plans: their weight, rules and concurrency"),
        field('weight', text('weight', { inputmode: 'numeric', size: '5' })),
        field('concurrency', text('concurrency', { inputmode: 'numeric', size: '5' }), 'requests in flight at once'),
        field('job concurrency', text('groupConcurrency', { inputmode: 'numeric', size: '5' }), 'jobs running at once'),
        h('label', { class: 'check' }, [blocked, h('span', {}, ['blocked'])]),
      ]),
      h('div', { class: 'row' }, [
        field('rules (JSON)', text('rules', { size: '34', placeholder: '[{"name":"tenant","limit":5,"windowMs":1000}]' }),
          "the shape of the limiter's rules option; they replace the tenant's rules"),
        field('ends after', h('span', { class: 'ttl' }, [text('ttl', { inputmode: 'decimal', size: '5', placeholder: 'never' }), unit])),
        field('reason', text('reason', { maxlength: '200', size: '24' })),
        h('button', { type: 'submit' }, ['Set override']),
      ]),
      message,
      h('div', { class: 'muted note' }, ["Sets the tenant's whole override, replacing the one it has: fill in every setting it keeps (Edit fills them in)."]),
    ]);
    function value(name) { return el.elements[name].value.trim(); }
    el.addEventListener('submit', function (event) {
      event.preventDefault();
      var q = 'limiter=' + encodeURIComponent(limiter);
      FIELDS.forEach(function (name) { var v = value(name); if (v !== '') q += '&' + name + '=' + encodeURIComponent(v); });
      if (blocked.checked) q += '&blocked=true';
      var ttl = value('ttl');
      // a number of the unit in ms; anything else goes as typed, for the server to name
      if (ttl !== '') q += '&ttlMs=' + encodeURIComponent(NUMBER.test(ttl) ? String(Math.round(Number(ttl) * Number(unit.value))) : ttl);
      message.className = 'form-msg';
      message.textContent = 'setting…';
      fetch(base + 'overrides/set?' + q, { method: 'POST', headers: headers() }).then(function (res) {
        if (res.ok) {
          message.textContent = 'Set for ' + value('group') + '.';
          el.reset();
          return poll();
        }
        // the class and the text change together, once the body is read: never 'setting…' shown as the refusal
        var failed = 'Setting the override failed (' + res.status + ')';
        var refused = function (text) {
          message.className = 'form-msg bad';
          message.textContent = text;
        };
        return res.json().then(function (p) { refused((p && p.detail) || failed); }, function () { refused(failed); });
      }, function () {
        message.className = 'form-msg bad';
        message.textContent = 'Cannot reach the server';
      });
    });
    return {
      el: el,
      update: function (l, canAct) {
        el.hidden = !canAct;
        var names = l.plans.join('\\n');
        if (names === plans) return;
        plans = names;
        var chosen = plan.value;
        plan.replaceChildren.apply(plan, [h('option', { value: '' }, ['–'])].concat(l.plans.map(function (p) { return h('option', { value: p }, [p]); })));
        plan.value = l.plans.indexOf(chosen) >= 0 ? chosen : '';
      },
      /** Edit: the form holds the override as it is (what is left of its ttl, in minutes). */
      fill: function (o, now) {
        var st = o.settings;
        el.reset();
        el.elements.group.value = o.group;
        plan.value = st.plan === undefined ? '' : st.plan;
        ['weight', 'concurrency', 'groupConcurrency'].forEach(function (k) { el.elements[k].value = st[k] === undefined ? '' : String(st[k]); });
        blocked.checked = st.blocked === true;
        el.elements.rules.value = st.rules === undefined ? '' : JSON.stringify(st.rules);
        el.elements.reason.value = o.reason === undefined ? '' : o.reason;
        unit.value = '60000';
        el.elements.ttl.value = o.expiresAt === undefined ? '' : String(Math.max(1, Math.ceil((o.expiresAt - now) / 60000)));
        message.className = 'form-msg';
        message.textContent = 'Editing ' + o.group + ': Set override replaces it.';
        el.elements.group.focus();
      },
    };
  }

`;
