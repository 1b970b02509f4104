// The emulator's page. It reads the control API and calls it for its controls; it
// re-reads what it shows when the server-sent event stream at /_emulator/events says
// something may have changed. Text from the emulator is only ever set as textContent.
"use strict";

const root = "/_emulator/";
const $ = (sel) => document.querySelector(sel);

// el builds an element: attributes, then children (strings become text).
function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") n.className = v;
    else if (k === "text") n.textContent = v;
    else n.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) {
    if (c !== undefined && c !== null) n.append(c);
  }
  return n;
}

// call fetches a control endpoint and returns {status, body}; body is the JSON answer.
async function call(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(root + path, opts);
  let data = null;
  try { data = await r.json(); } catch (_) { /* no body */ }
  return { status: r.status, ok: r.ok, body: data };
}

// selected is the transaction the address names; without one the page follows the newest.
const view = { selected: null, viewer: "", newest: null };

// shown is the transaction the page shows.
function shown() {
  return view.selected || view.newest;
}

// ---- the address: ?tx=ID&viewer=ADDRESS, so a transaction's page has an address the
// server can fill in before the script runs

function readLocation() {
  const p = new URLSearchParams(location.search);
  const id = p.get("tx");
  view.selected = id && /^\d+$/.test(id) ? id : null;
  view.viewer = p.get("viewer") || "";
}

function locationFor(id, viewer) {
  const p = new URLSearchParams();
  if (id) p.set("tx", id);
  if (viewer) p.set("viewer", viewer);
  const q = p.toString();
  return location.pathname + (q ? "?" + q : "");
}

// go shows another transaction (or viewer) without loading the page again.
function go(id, viewer, push) {
  const url = locationFor(id, viewer);
  if (push) history.pushState(null, "", url);
  else history.replaceState(null, "", url);
  readLocation();
  return refresh();
}

// ---- the list

function stepText(s) {
  const who = s.customer || "the " + s.role;
  const what = s.action.replaceAll("_", " ");
  return `${who} (${s.role}): ${what}${s.item_id ? " item " + s.item_id : ""}`;
}

function shortSteps(t) {
  if (!t.next_steps.length) return t.state === "complete" || t.state === "cancelled" ? "nothing" : (t.waiting || "nothing");
  return t.next_steps.map((s) => `${s.role} ${s.action.replaceAll("_", " ")}`).join(", ");
}

// when shortens the emulator's timestamps to the second: "2024-05-01 12:00:00".
function when(ts) {
  return ts.replace("T", " ").slice(0, 19);
}

function money(amount, currency) {
  return `${amount} ${currency === "euro" ? "EUR" : (currency || "").toUpperCase()}`;
}

// setText changes an element's text only when it differs, so that a refresh leaves
// unchanged rows alone (no flicker, focus and clicks kept).
function setText(n, text) {
  if (n.textContent !== text) n.textContent = text;
}

function newRow(t) {
  return el("tr", { "data-id": t.id },
    el("td", {}, el("a", { href: locationFor(t.id, ""), "data-tx": t.id, text: String(t.id) })),
    el("td", {}), el("td", { class: "parties" }), el("td", { class: "num" }), el("td", {}, el("span", {})), el("td", {}));
}

// updateRow writes a transaction into its row, in place. The parties are one line each,
// wrapped rather than cut, so that they are readable at any width.
function updateRow(tr, t) {
  const parties = t.parties.map((p) => `${p.role}: ${p.customer}`);
  const [, desc, who, amount, state, next] = tr.cells;
  setText(desc, t.description); desc.title = t.description;
  if (who.textContent !== parties.join("")) {
    who.replaceChildren(...parties.map((p) => el("span", { text: p })));
  }
  setText(amount, money(t.amount, t.currency));
  const badge = state.firstChild;
  badge.className = "state " + t.state;
  setText(badge, t.state.replaceAll("_", " "));
  setText(next, shortSteps(t)); next.title = t.waiting;
  if (String(t.id) === shown()) tr.setAttribute("aria-current", "true");
  else tr.removeAttribute("aria-current");
}

// renderList updates the rows in place: rows that stay are kept, new ones are inserted in
// order, and gone ones removed.
function renderList(data) {
  const tbody = $("#txs tbody");
  view.newest = data.transactions.length ? String(data.transactions[0].id) : null;
  const have = new Map([...tbody.rows].map((r) => [r.dataset.id, r]));
  data.transactions.forEach((t, i) => {
    const tr = have.get(String(t.id)) || newRow(t);
    updateRow(tr, t);
    if (tbody.rows[i] !== tr) tbody.insertBefore(tr, tbody.rows[i] || null);
  });
  while (tbody.rows.length > data.transactions.length) tbody.lastElementChild.remove();
  $("#empty").hidden = data.transactions.length > 0;
  setText($("#count"), data.total > data.transactions.length ? `(newest ${data.transactions.length} of ${data.total})` : `(${data.total})`);
  setText($("#clock"), when(data.now) + " UTC");
  $("#clock").setAttribute("datetime", data.now);
  const states = $("#f-state");
  if (states.options.length === 1) {
    for (const s of data.states) states.append(el("option", { value: s, text: s.replaceAll("_", " ") }));
  }
}

async function refreshList() {
  const q = new URLSearchParams();
  const state = $("#f-state").value, party = $("#f-party").value.trim();
  if (state) q.set("state", state);
  if (party) q.set("party", party);
  const r = await call("GET", "transactions" + (q.toString() ? "?" + q : ""));
  if (r.ok) renderList(r.body);
}

// ---- one transaction

// fill replaces a table's rows when they changed, and only then: a row under the
// pointer (a Resend button, an open body) is not swapped for its twin at every refresh.
function fill(tbody, rows) {
  const fresh = rows.map((cells) => el("tr", {}, ...cells));
  const html = fresh.map((r) => r.outerHTML).join("");
  if (tbody.innerHTML !== html) tbody.replaceChildren(...fresh);
}

function customerCell(c) {
  return c === "hidden" ? el("td", { class: "hidden-party", text: "hidden" }) : el("td", { text: c });
}

const flagNames = ["shipped", "received", "accepted", "rejected", "shipped_returned", "received_returned",
  "accepted_returned", "rejected_returned", "canceled", "in_dispute"];

function itemStatus(it, goods) {
  const cell = el("td", {});
  const g = goods.find((x) => x.item_id === it.id);
  if (g) cell.append(el("strong", { text: g.state.replaceAll("_", " ") }), " ");
  for (const f of flagNames) {
    if (it.status[f]) cell.append(el("span", { class: "flag", text: f.replaceAll("_", " ") }));
  }
  return cell;
}

function itemAmount(it, currency) {
  let cents = 0;
  for (const s of it.schedule) cents += Math.round(Number(s.amount) * 100);
  return money((cents / 100).toFixed(2), currency);
}

function renderViewers(d) {
  const sel = $("#viewer");
  const want = ["", ...d.parties.map((p) => p.customer)];
  const have = [...sel.options].map((o) => o.value);
  if (want.join("\n") !== have.join("\n")) {
    sel.replaceChildren(el("option", { value: "", text: "the emulator (everything)" }),
      ...d.parties.map((p) => el("option", { value: p.customer, text: `${p.customer} (${p.role})` })));
  }
  sel.value = d.viewer;
}

function renderDetail(d) {
  const t = d.transaction, p = d.progress;
  $("#detail-h").textContent = `Transaction ${t.id}: ${t.description}`;
  $("#d-hint").hidden = true;
  $("#d-body").hidden = false;
  $("#d-follow").hidden = view.selected !== null;
  $("#d-meta").replaceChildren(el("span", { class: "state " + p.state, text: p.state.replaceAll("_", " ") }),
    ` created ${when(t.creation_date)}` + (t.reference ? ` · reference ${t.reference}` : "") +
    (t.close_date ? ` · closed ${when(t.close_date)}` : "") + ` · disbursed ${p.disbursed}`);
  $("#approve").disabled = $("#reject").disabled = p.state !== "awaiting_payment";

  $("#d-next").replaceChildren(...(p.next_steps.length ? p.next_steps.map((s) => el("li", {},
    stepText(s), s.auto_at ? el("span", { class: "muted", text: ` (by itself at ${when(s.auto_at)} UTC)` }) : null))
    : [el("li", { class: "muted", text: "nobody" })]));
  $("#d-waiting").textContent = p.waiting;

  renderViewers(d);
  fill($("#d-parties tbody"), t.parties.map((x) => [el("td", { text: x.role }), customerCell(x.customer),
    el("td", { text: x.agreed ? "yes" : "no" }), el("td", { text: x.disbursement_method_selected ? "selected" : "–" })]));
  fill($("#d-items tbody"), t.items.map((it) => [el("td", { text: String(it.id) }), el("td", { text: it.title || it.description || "" }),
    el("td", { text: it.type }), el("td", { class: "num", text: itemAmount(it, t.currency) }), itemStatus(it, p.goods)]));

  for (const k of ["in", "out", "fees", "held"]) $(`#d-ledger dd[data-k="${k}"]`).textContent = d.ledger[k];
  const bal = $("#d-balance");
  bal.className = d.ledger.balanced ? "good" : "bad";
  bal.textContent = d.ledger.balanced
    ? `✓ balanced: in ${d.ledger.in} = out ${d.ledger.out} + fees ${d.ledger.fees} + held ${d.ledger.held}`
    : `✗ does not balance: in ${d.ledger.in} ≠ out ${d.ledger.out} + fees ${d.ledger.fees} + held ${d.ledger.held}`;

  $("#d-timeline").replaceChildren(...d.timeline.map((e) => el("li", {},
    el("time", { datetime: e.date, text: when(e.date) }), el("span", { class: "ev", text: e.event }),
    e.message, e.customer ? el("span", { class: "muted", text: ` by ${e.customer}` }) : null)));

  fill($("#d-deliveries tbody"), d.deliveries.map((x) => [el("td", { text: x.event + (x.replay ? " (resent)" : "") }), el("td", { text: x.url }),
    el("td", { class: x.status_code >= 200 && x.status_code < 300 ? "good" : "bad", text: x.status_code ? String(x.status_code) : "no answer" }),
    el("td", { class: "num", text: `${x.latency_ms} ms` }), el("td", { text: [x.fault, x.error].filter(Boolean).join(": ") || "–" }),
    el("td", {}, el("button", { type: "button", class: "secondary small", "data-resend": x.event, text: "Resend" }))]));
  $("#d-no-deliveries").hidden = d.deliveries.length > 0;
  $("#d-deliveries").hidden = d.deliveries.length === 0;

  fill($("#d-ascustomer tbody"), d.as_customer.map((c) => [el("td", { class: "when", text: when(c.date) }),
    el("td", { text: c.endpoint }), el("td", { text: c.partner }), el("td", { text: c.as_customer }),
    el("td", { class: c.status < 300 ? "good" : "bad", text: String(c.status) })]));
  $("#d-no-ascustomer").hidden = d.as_customer.length > 0;
  $("#d-ascustomer").hidden = d.as_customer.length === 0;
  setText($("#d-json"), JSON.stringify(t, null, 2));
}

function clearDetail(message) {
  $("#detail-h").textContent = message;
  $("#d-hint").hidden = false;
  $("#d-body").hidden = true;
}

async function refreshDetail() {
  if (!shown()) { clearDetail("Pick a transaction"); return; }
  const q = view.viewer ? "?viewer=" + encodeURIComponent(view.viewer) : "";
  const r = await call("GET", `transactions/${shown()}${q}`);
  if (r.ok) renderDetail(r.body);
  else if (r.status === 404) clearDetail(`No transaction ${shown()}`);
  else if (view.viewer) return go(shown(), "", false);
}

// ---- the workbench: standing faults, the request log, the accounts

function faultText(f) {
  const parts = [];
  if (f.latency_ms) parts.push(`latency ${f.latency_ms} ms`);
  if (f.status) parts.push(`status ${f.status}`);
  if (f.latency_after_ms) parts.push(`latency after handling ${f.latency_after_ms} ms`);
  if (f.drop) parts.push(`dropped ${f.drop} handling`);
  if (f.probability) parts.push(`${Math.round(f.probability * 100)} % of calls`);
  return parts.join(", ");
}

function renderFaults(data) {
  const items = data.faults.map((f) => el("li", { "data-fault": f.id },
    el("code", { text: f.endpoint }), ` ${faultText(f)} `,
    el("button", { type: "button", class: "secondary small", "data-remove": f.id, "aria-label": `Remove fault ${f.id} on ${f.endpoint}`, text: "Remove" })));
  const list = $("#faults-list");
  if (list.innerHTML !== items.map((li) => li.outerHTML).join("")) list.replaceChildren(...items);
  $("#no-faults").hidden = data.faults.length > 0;
}

// bodyCell shows a request's bodies, folded; the rows that were open stay open.
function bodyCell(r, open) {
  if (!r.request_body && !r.response_body) return el("td", { class: "muted", text: "–" });
  const d = el("details", { "data-seq": r.seq, open: open.has(String(r.seq)) }, el("summary", { text: "show" }));
  if (r.request_body) d.append(el("pre", { class: "body", text: "→ " + r.request_body.trim() }));
  if (r.response_body) d.append(el("pre", { class: "body", text: "← " + r.response_body.trim() }));
  return el("td", {}, d);
}

function renderRequests(data) {
  const tbody = $("#requests tbody");
  const open = new Set([...tbody.querySelectorAll("details[open]")].map((d) => d.dataset.seq));
  const rows = data.requests.slice().reverse();
  fill(tbody, rows.map((r) => [el("td", { class: "num", text: String(r.seq) }), el("td", { class: "when", text: when(r.time) }),
    el("td", { class: "call", text: `${r.method} ${r.path}` }),
    el("td", { text: (r.account || "–") + (r.as_customer ? ` as ${r.as_customer}` : "") }),
    el("td", { class: r.status >= 200 && r.status < 400 ? "good" : "bad", text: r.status ? String(r.status) : "dropped" }),
    el("td", { class: "num", text: `${r.latency_ms} ms` }), el("td", { text: r.fault || "–" }), bodyCell(r, open)]));
  $("#no-requests").hidden = rows.length > 0;
}

function renderAccounts(data) {
  fill($("#accounts tbody"), data.accounts.map((a) => [el("td", { text: String(a.id) }), el("td", { text: a.email }),
    el("td", { text: a.partner ? "approved partner" : "–" }),
    el("td", { text: a.api_keys.filter((k) => k.active).map((k) => `${k.name} …${k.last_four}`).join(", ") || "–" }),
    el("td", { text: a.webhooks.map((h) => h.url).join(" ") || "–" })]));
  setText($("#accounts-count"), data.total > data.accounts.length ? `newest ${data.accounts.length} of ${data.total}` : `${data.total} in all`);
}

function requestQuery() {
  const q = new URLSearchParams();
  for (const [k, id] of [["account", "#r-account"], ["path", "#r-path"], ["status", "#r-status"]]) {
    const v = $(id).value.trim();
    if (v) q.set(k, v);
  }
  return q.toString() ? "?" + q : "";
}

async function refreshWorkbench() {
  const [faults, requests, accounts] = await Promise.all([call("GET", "faults"), call("GET", "requests" + requestQuery()), call("GET", "accounts")]);
  if (faults.ok) renderFaults(faults.body);
  if (requests.ok) renderRequests(requests.body);
  if (accounts.ok) renderAccounts(accounts.body);
}

function selectTab(tab) {
  for (const t of document.querySelectorAll('[role="tab"]')) {
    const on = t === tab;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
  }
}

// ---- refreshing, coalesced: one read at a time, and one more if asked meanwhile

let running = false, again = false;
async function refresh() {
  if (running) { again = true; return; }
  running = true;
  try {
    do {
      again = false;
      await refreshList(); // first: it says which transaction is the newest
      await refreshDetail();
      await refreshWorkbench();
    } while (again);
    document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
  } finally {
    running = false;
  }
}

// listen follows the event stream. Each stream ends after a quiet second and the browser
// opens the next; the counter in each event says whether anything changed meanwhile.
function listen(seen) {
  const live = $("#live");
  let lost = null;
  const es = new EventSource(root + "events");
  es.addEventListener("change", (ev) => {
    if (ev.data !== seen) {
      if (seen !== null) refresh();
      seen = ev.data;
    }
  });
  es.onopen = () => {
    clearTimeout(lost);
    lost = null;
    live.textContent = "live";
    live.className = "on";
  };
  es.onerror = () => {
    // A stream that ended on purpose reopens within a second or two: say nothing unless
    // it does not.
    if (lost === null) {
      lost = setTimeout(() => { live.textContent = "reconnecting…"; live.className = "off"; }, 4000);
    }
  };
}

// ---- controls: each calls its control endpoint and shows the answer

function show(label, r) {
  const out = $("#result");
  out.classList.toggle("error", !r.ok);
  let text = `${label} → ${r.status}`;
  if (r.body && r.body.message) text += `: ${r.body.message}`;
  else if (r.body && r.body.errors) text += `: ${JSON.stringify(r.body.errors)}`;
  else if (r.body) text += ` ${JSON.stringify(r.body)}`;
  out.textContent = text;
  refresh();
}

async function control(label, method, path, body) {
  let r;
  try {
    r = await call(method, path, body);
  } catch (err) {
    r = { ok: false, status: 0, body: { message: String(err) } };
  }
  show(label, r);
  return r;
}

function advance(seconds, label) {
  control(`Advance the clock by ${label}`, "POST", "clock/advance", { seconds }).then((r) => {
    if (r.ok) {
      const changed = r.body.transactions.map((t) => `${t.transaction_id}: ${t.state}`);
      $("#result").textContent = `Advanced by ${label} → now ${when(r.body.now)} UTC` +
        (changed.length ? `; changed ${changed.join(", ")}` : "; no transaction changed");
    }
  });
}

function numberOf(id) {
  const v = $(id).value.trim();
  return v === "" ? undefined : Number(v);
}

function wire() {
  $("#approve").addEventListener("click", () => { const id = shown(); control(`Approve payment of ${id}`, "POST", `transactions/${id}/approve_payment`); });
  $("#reject").addEventListener("click", () => { const id = shown(); control(`Reject payment of ${id}`, "POST", `transactions/${id}/reject_payment`); });
  for (const b of document.querySelectorAll("#advance button[data-seconds]")) {
    b.addEventListener("click", () => advance(Number(b.dataset.seconds), b.textContent));
  }
  $("#advance").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const n = Number($("#adv-n").value), unit = $("#adv-unit");
    advance(n * Number(unit.value), `${n} ${unit.selectedOptions[0].textContent}`);
  });
  $("#fault").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = { endpoint: $("#fault-endpoint").value.trim() };
    const status = numberOf("#fault-status"), latency = numberOf("#fault-latency"), prob = numberOf("#fault-probability");
    if (status !== undefined) f.status = status;
    if (latency !== undefined) f.latency_ms = latency;
    if (prob !== undefined) f.probability = prob;
    if ($("#fault-drop").value) f.drop = $("#fault-drop").value;
    control(`Inject fault on ${f.endpoint}`, "POST", "faults", f);
  });
  $("#clear-faults").addEventListener("click", () => control("Clear faults", "DELETE", "faults"));
  $("#faults-list").addEventListener("click", (ev) => {
    const b = ev.target.closest("button[data-remove]");
    if (b) control(`Remove fault ${b.dataset.remove}`, "DELETE", `faults/${b.dataset.remove}`);
  });
  $("#d-deliveries").addEventListener("click", (ev) => {
    const b = ev.target.closest("button[data-resend]");
    if (b) { const id = shown(); control(`Resend ${b.dataset.resend} of ${id}`, "POST", `transactions/${id}/trigger`, { event: b.dataset.resend }); }
  });
  $("#reach").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const id = shown(), state = $("#reach-state").value;
    control(`Reach ${state.replaceAll("_", " ")} for ${id}`, "POST", `transactions/${id}/reach`, { state });
  });
  $("#import-file").addEventListener("change", async () => {
    const f = $("#import-file").files[0];
    if (!f) return;
    const text = await f.text();
    let r;
    try {
      const resp = await fetch(root + "state", { method: "PUT", headers: { "Content-Type": "application/json" }, body: text });
      let body = null;
      try { body = await resp.json(); } catch (_) { /* no body */ }
      r = { ok: resp.ok, status: resp.status, body };
    } catch (err) {
      r = { ok: false, status: 0, body: { message: String(err) } };
    }
    show(`Import ${f.name}`, r);
    $("#import-file").value = "";
  });
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    tab.addEventListener("click", () => selectTab(tab));
    tab.addEventListener("keydown", (ev) => {
      if (ev.key !== "ArrowRight" && ev.key !== "ArrowLeft") return;
      const tabs = [...document.querySelectorAll('[role="tab"]')];
      const next = tabs[(tabs.indexOf(tab) + (ev.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
      selectTab(next);
      next.focus();
    });
  }
  for (const id of ["#r-account", "#r-path"]) $(id).addEventListener("input", refresh);
  $("#r-status").addEventListener("change", refresh);
  $("#reset").addEventListener("submit", (ev) => {
    ev.preventDefault();
    control("Reset", "POST", "reset").then(() => { $("#reset-sure").checked = false; });
  });
  $("#f-state").addEventListener("change", refresh);
  $("#f-party").addEventListener("input", refresh);
  $("#viewer").addEventListener("change", () => go(shown(), $("#viewer").value, false));
  // A transaction's link opens it in place; a click with a modifier key, or a middle
  // click, is left to the browser (a new tab).
  $("#txs tbody").addEventListener("click", (ev) => {
    const a = ev.target.closest("a[data-tx]");
    if (!a || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    ev.preventDefault();
    // Focus follows to the transaction unless it moved meanwhile (a key pressed while the
    // rest of the page was still refreshing): the page never takes it back.
    const from = document.activeElement;
    go(a.dataset.tx, "", true).then(() => {
      if (document.activeElement === from || document.activeElement === document.body) $("#detail").focus();
    });
  });
  window.addEventListener("popstate", () => { readLocation(); refresh(); });
}

// boot renders the data the page arrived with, before the load event, and returns the
// change counter it is at; null when the page came without data.
function boot() {
  const island = document.getElementById("boot");
  if (!island) return null;
  const data = JSON.parse(island.textContent);
  const reach = $("#reach-state");
  reach.replaceChildren(...data.reach_states.map((s) => el("option", { value: s, text: s.replaceAll("_", " ") })));
  reach.value = "in_inspection";
  renderList(data.list);
  renderFaults(data.faults);
  renderRequests(data.requests);
  renderAccounts(data.accounts);
  if (data.detail) renderDetail(data.detail);
  else if (view.selected) refresh(); // says what is wrong with ?tx= or ?viewer=
  return String(data.version);
}

readLocation();
wire();
const at = boot();
if (at === null) refresh();
listen(at);
