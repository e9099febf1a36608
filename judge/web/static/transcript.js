// A conversation case as a transcript, shared by `judge view` and `judge label`: roles, the
// assistant's tool calls with their arguments, tool results and system messages (collapsed
// when long), the
// expected calls beside the actual ones, claim evidence marked in the tool results. Every
// piece of case text goes in through textContent (never HTML): nothing a case, a tool or a
// judge wrote can run here.
"use strict";
(function () {
  const LONG = 600; // a tool result longer than this starts collapsed

  function node(tag, cls, text) {
    const out = document.createElement(tag);
    if (cls) out.className = cls;
    if (text !== undefined && text !== null) out.textContent = String(text);
    return out;
  }

  // arguments as the model wrote them (JSON text), pretty-printed when they are JSON
  function argumentsText(value) {
    if (typeof value !== "string") return JSON.stringify(value === undefined ? {} : value, null, 2);
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch (e) { return value; }
  }
  function parsed(value) {
    if (typeof value !== "string") return value;
    try { return JSON.parse(value); } catch (e) { return value; }
  }
  // JSON equality as the trajectory kind compares: key order ignored, numbers by value
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (value && typeof value === "object") {
      return "{" + Object.keys(value).sort().map((k) => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    return JSON.stringify(value);
  }
  const callKey = (name, args) => name + "\u0000" + canonical(parsed(args));

  // text with the given pieces of evidence marked (<mark class="evidence">)
  function marked(text, evidence) {
    const spans = [];
    for (const piece of evidence) {
      let at = text.indexOf(piece);
      while (at >= 0) { spans.push([at, at + piece.length]); at = text.indexOf(piece, at + piece.length); }
    }
    spans.sort((a, b) => a[0] - b[0]);
    const out = [];
    let at = 0;
    for (const [start, end] of spans) {
      if (start < at) continue;
      out.push(document.createTextNode(text.slice(at, start)), node("mark", "evidence", text.slice(start, end)));
      at = end;
    }
    out.push(document.createTextNode(text.slice(at)));
    return out;
  }

  // which of a list of calls a verdict's list names (each named call marks one occurrence)
  function flagged(calls, named) {
    const wanted = new Map();
    for (const call of named || []) {
      const key = callKey(call.name, call.arguments);
      wanted.set(key, (wanted.get(key) || 0) + 1);
    }
    return calls.map((call) => {
      const key = callKey(call.name, call.arguments);
      const left = wanted.get(key) || 0;
      if (!left) return false;
      wanted.set(key, left - 1);
      return true;
    });
  }

  function callBlock(call, cls, options) {
    const box = node("div", "tool-call " + (cls || ""));
    box.dataset.tool = call.name;
    const head = node("div", "call-head");
    const name = options.toolLink ? node("a", "call-name", call.name) : node("code", "call-name", call.name);
    if (options.toolLink) name.href = options.toolLink(call.name);
    head.append("→ ", name);
    if (call.id) head.append(node("span", "muted call-id", " " + call.id));
    box.append(head, node("pre", "call-args", argumentsText(call.arguments)));
    return box;
  }

  function toolResult(text, evidence) {
    const body = node("div", "text tool-text");
    body.append(...marked(text, evidence));
    if (text.length <= LONG) return body;
    const details = node("details", "long");
    const summary = node("summary", "", text.slice(0, 120) + "… (" + text.length + " characters)");
    details.append(summary, body);
    return details;
  }

  function messageItem(message, index, evidence, options) {
    const role = String(message.role || "");
    const item = node("li", "msg role-" + role.replace(/[^a-z]/g, ""));
    item.dataset.index = String(index);
    item.dataset.role = role;
    const head = node("div", "msg-head", role + (message.name ? " · " + message.name : ""));
    head.append(node("span", "muted", " #" + index));
    item.append(head);
    const content = message.content === null || message.content === undefined ? "" : String(message.content);
    if (role === "tool") item.append(toolResult(content, evidence));
    else if ((role === "system" || role === "developer") && content.length > LONG) item.append(toolResult(content, evidence));
    else if (content) {
      const text = node("div", "text");
      text.append(...marked(content, role === "system" || role === "developer" ? evidence : []));
      item.append(text);
    }
    for (const call of message.tool_calls || []) {
      const fn = call.function || {};
      item.append(callBlock({ id: call.id, name: fn.name, arguments: fn.arguments }, "", options));
    }
    return item;
  }

  // the actual calls against the expected ones, paired as the verdict paired them
  // (`paired`: [agent index, expected index]); a call left unpaired has a row of its own,
  // flagged unexpected or missing. A verdict without `paired` (an older record) pairs the
  // calls by their place, flagging those its missing and unexpected lists name.
  function callsTable(actual, expected, verdict, options) {
    const table = node("table", "calls");
    table.id = "calls";
    const head = node("tr");
    head.append(node("th", "", "agent's calls (in order)"), node("th", "", "expected calls"));
    table.append(node("thead"), node("tbody"));
    table.tHead.append(head);
    const rows = pairedRows(actual, expected, verdict);
    if (!rows.length) {
      const none = node("td", "muted", "no call made, none expected");
      none.colSpan = 2;
      const row = node("tr");
      row.append(none);
      table.tBodies[0].append(row);
    }
    for (const [a, e, unexpected, missing] of rows) {
      const row = node("tr");
      row.className = a !== null && e !== null ? "paired" : "unpaired";
      const left = node("td"), right = node("td");
      if (a !== null) left.append(callBlock(actual[a], unexpected ? "unexpected" : "", options), unexpected ? node("span", "flag unexpected", "unexpected") : "");
      if (e !== null) right.append(callBlock(expected[e], missing ? "missing" : "", options), missing ? node("span", "flag missing", "missing") : "");
      row.append(left, right);
      table.tBodies[0].append(row);
    }
    return table;
  }

  // [agent index | null, expected index | null, unexpected?, missing?] in the agent's order,
  // each missing expected call after the row of the expected call before it
  function pairedRows(actual, expected, verdict) {
    const paired = verdict && Array.isArray(verdict.paired) ? verdict.paired : null;
    if (!paired) {
      const unexpected = flagged(actual, verdict && verdict.unexpected);
      const missing = flagged(expected, verdict && verdict.missing);
      const out = [];
      for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
        out.push([i < actual.length ? i : null, i < expected.length ? i : null, Boolean(unexpected[i]), Boolean(missing[i])]);
      }
      return out;
    }
    const partner = new Map(paired.map(([a, e]) => [a, e]));
    const taken = new Set(paired.map(([, e]) => e));
    // calls the rubric's rules left out are neither unexpected nor missing
    const ruled = { agent: [], expected: [] };
    for (const k of (verdict.left_out || [])) (ruled[k.side] || []).push(k);
    const leftAgent = flagged(actual, ruled.agent), leftExpected = flagged(expected, ruled.expected);
    const out = [];
    for (let a = 0; a < actual.length; a++) {
      out.push(partner.has(a) ? [a, partner.get(a), false, false] : [a, null, !leftAgent[a], false]);
    }
    for (let e = 0; e < expected.length; e++) {
      if (taken.has(e)) continue;
      let at = out.length;  // after the row holding the closest expected call before it
      for (let k = 0; k < out.length; k++) if (out[k][1] !== null && out[k][1] < e) at = k + 1;
      if (at === out.length && !out.some((r) => r[1] !== null && r[1] < e)) at = out.findIndex((r) => r[1] !== null && r[1] > e);
      out.splice(at < 0 ? out.length : at, 0, [null, e, false, !leftExpected[e]]);
    }
    return out;
  }

  // options: {expected, verdict, evidence: [text], toolLink: (name) => href}
  function render(messages, options) {
    options = options || {};
    const evidence = (options.evidence || []).filter((e) => typeof e === "string" && e.trim());
    const box = node("div", "transcript");
    const list = node("ol", "messages");
    (messages || []).forEach((m, i) => list.append(messageItem(m || {}, i, evidence, options)));
    box.append(list);
    const actual = [];
    for (const m of messages || []) for (const c of (m && m.tool_calls) || []) actual.push({ id: c.id, name: (c.function || {}).name, arguments: (c.function || {}).arguments });
    if (options.expected) {
      box.append(node("h2", "", "Tool calls: the agent's against the expected"));
      box.append(callsTable(actual, options.expected, options.verdict, options));
    }
    return box;
  }

  window.judgeTranscript = { render };
})();
