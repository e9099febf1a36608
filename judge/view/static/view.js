// judge view: every page is built from the JSON API with DOM nodes and text (never HTML
// from data), so nothing a case or a judge wrote can run here. Routes live in the hash:
// #/ runs, #/run/ID?filters records, #/case/RUN/ID (a conversation as its transcript), #/compare/BASE/CANDIDATE,
// #/pair/BASE/CANDIDATE/ID, #/confusion/RUN, #/drift/RUN (drift.js), #/rag/RUN, #/output/ID.
"use strict";
(function () {
  const params = new URLSearchParams(location.search);
  if (params.get("token")) sessionStorage.setItem("judge-view-token", params.get("token"));
  const token = sessionStorage.getItem("judge-view-token") || "";
  const main = document.getElementById("main");
  const crumbs = document.getElementById("crumbs");
  const errorBox = document.getElementById("error");
  const PAGE = 50;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const enc = encodeURIComponent;
  const fmt = (x, d = 3) => (x === null || x === undefined ? "–" : typeof x === "number" ? x.toFixed(d) : String(x));
  const ci = (pair) => (pair ? `[${fmt(pair[0])}, ${fmt(pair[1])}]` : "–");

  async function api(path, options) {
    const response = await fetch(path, {
      ...(options || {}),
      headers: { Authorization: "Bearer " + token, ...((options || {}).headers || {}) },
    });
    const body = await response.json();
    if (!response.ok) throw new Error((body.error && body.error.message) || response.statusText);
    return body;
  }

  function show(title, ...nodes) {
    errorBox.hidden = true;
    main.replaceChildren(el("h1", { text: title }), ...nodes);
    document.title = `${title} · judge view`;
  }
  function trail(...links) {
    crumbs.replaceChildren(...links.flatMap((l, i) => [i ? " / " : "", l]));
  }
  function fail(error) {
    errorBox.textContent = String(error.message || error);
    errorBox.hidden = false;
  }

  let runsCache = null;
  async function runs() {
    if (!runsCache) runsCache = await api("/api/runs");
    return runsCache;
  }
  // a run the cached list lacks may have been graded since: the list is asked for again once
  async function runById(id) {
    let found = (await runs()).find((r) => r.id === id);
    if (!found) {
      runsCache = null;
      found = (await runs()).find((r) => r.id === id);
    }
    if (!found) throw new Error(`no such run: ${id} (the runs list shows every run)`);
    return found;
  }
  const runName = (r) => `${r.error ? "unreadable" : `${r.rubric}@${r.rubric_version}`} · ${r.group || ""}/${r.path.split("/").pop()}`;
  const SVG = "http://www.w3.org/2000/svg";
  // the ok records' scores in ten bins over 0..1, as bars (SVG attributes: no inline style,
  // which the Content-Security-Policy refuses)
  function histogram(h) {
    if (!h || !h.counts.some((c) => c)) return "";
    const top = Math.max(...h.counts);
    const svg = document.createElementNS(SVG, "svg");
    for (const [k, v] of Object.entries({ class: "histogram", width: 80, height: 24, viewBox: "0 0 80 24", role: "img" })) svg.setAttribute(k, v);
    svg.setAttribute("aria-label", `scores: ${h.counts.map((c, i) => `${h.edges[i]}–${h.edges[i + 1]}: ${c}`).join(", ")}`);
    h.counts.forEach((count, i) => {
      const bar = document.createElementNS(SVG, "rect");
      const height = count ? Math.max(1, Math.round((22 * count) / top)) : 0;
      for (const [k, v] of Object.entries({ x: i * 8, y: 24 - height, width: 7, height })) bar.setAttribute(k, v);
      const title = document.createElementNS(SVG, "title");
      title.textContent = `${h.edges[i]}–${h.edges[i + 1]}: ${count}`;
      bar.append(title);
      svg.append(bar);
    });
    return svg;
  }
  const runLink = (r) => el("a", { href: `#/run/${enc(r.id)}` }, runName(r));

  // ---- runs ---------------------------------------------------------------------------------
  async function pageRuns() {
    trail();
    runsCache = null; // runs graded into a watched folder since: the server looks again
    const list = await runs();
    const picked = [];
    const compare = el("button", { class: "action", id: "compare", disabled: true }, "Compare the two picked");
    compare.addEventListener("click", () => {
      location.hash = `#/compare/${enc(picked[0])}/${enc(picked[1])}`;
    });
    const rows = list.map((r) => {
      const box = el("input", { type: "checkbox", "aria-label": `pick ${r.id}`, "data-run": r.id, disabled: Boolean(r.error) });
      box.addEventListener("change", () => {
        if (box.checked) picked.push(r.id);
        else picked.splice(picked.indexOf(r.id), 1);
        while (picked.length > 2) {
          const dropped = picked.shift();
          main.querySelector(`input[data-run="${CSS.escape(dropped)}"]`).checked = false;
        }
        compare.disabled = picked.length !== 2;
      });
      const statuses = r.error ? el("span", { class: "run-error" }, r.error) : Object.entries(r.status_counts).map(([k, v]) => `${k} ${v}`).join(", ");
      const extras = [
        r.has_labels ? el("a", { href: `#/confusion/${enc(r.id)}` }, "confusion") : null,
        r.has_labels ? el("a", { href: `#/drift/${enc(r.id)}` }, "drift") : null,
        r.rag ? el("a", { href: `#/rag/${enc(r.id)}` }, "RAG 2×2") : null,
        ...r.outputs.filter((o) => o.kind !== "summary").map((o) => el("a", { href: `#/output/${enc(o.id)}` }, o.kind)),
      ].filter(Boolean);
      return el("tr", { "data-run": r.id },
        el("td", {}, box),
        el("td", {}, runLink(r), el("div", { class: "muted" }, r.id)),
        el("td", {}, r.judge.model || "–", el("div", { class: "muted" }, r.judge.system_fingerprint || r.judge.judge_id || "")),
        el("td", {}, r.date),
        el("td", { class: "num" }, r.n),
        el("td", {}, statuses),
        el("td", { class: "num" }, fmt(r.headline.value), el("div", { class: "muted" }, ci(r.headline.ci95))),
        el("td", {}, histogram(r.histogram)),
        el("td", { class: "num" }, `${r.tokens.prompt + r.tokens.completion}`, el("div", { class: "muted" }, r.cost_usd === null ? "" : `$${fmt(r.cost_usd, 4)}`)),
        el("td", {}, extras.flatMap((a, i) => [i ? " · " : "", a])));
    });
    show("Runs",
      el("p", { class: "muted" }, "Pick two runs to compare them case by case."),
      el("table", { id: "runs" },
        el("thead", {}, el("tr", {}, ...["", "run (rubric@version)", "judge", "date", "cases", "status", "mean score [95% CI]", "scores (ok)", "tokens / cost", "more"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)),
      el("p", {}, compare));
  }

  // ---- records ------------------------------------------------------------------------------
  const FILTERS = ["status", "slice", "label", "q", "min_score", "max_score", "jurors", "min_spread", "human", "human_label", "judged", "ids", "tool", "missing", "sort", "order", "offset"];

  async function pageRecords(runId, query) {
    const run = await runById(runId);
    trail(el("a", { href: "#/" }, "runs"), runName(run));
    const search = new URLSearchParams();
    for (const name of FILTERS) if (query.get(name)) search.set(name, query.get(name));
    search.set("limit", PAGE);
    const data = await api(`/api/runs/${enc(runId)}/records?${search}`);
    const go = (changes) => {
      const next = new URLSearchParams(query);
      for (const [k, v] of Object.entries(changes)) {
        if (v === null || v === "") next.delete(k);
        else next.set(k, v);
      }
      if (!("offset" in changes)) next.delete("offset");
      location.hash = `#/run/${enc(runId)}?${next}`;
    };
    const facets = el("div", { class: "facets" }, Object.entries(data.facets)
      .filter(([, values]) => Object.keys(values).length)
      .map(([name, values]) => el("section", { "data-facet": name }, el("h3", {}, name.replace("_", " ")),
        Object.entries(values).map(([value, count]) => {
          const on = query.get(name) === value;
          return el("button", { class: on ? "on" : null, "data-value": value, onclick: () => go({ [name]: on ? null : value }) },
            el("span", {}, value), el("span", { class: "muted" }, count));
        }))));
    const text = el("input", { type: "search", id: "q", value: query.get("q") || "", placeholder: "id, question, answer, claims, rationale" });
    const min = el("input", { type: "number", step: "any", id: "min_score", value: query.get("min_score") || "", size: 5 });
    const max = el("input", { type: "number", step: "any", id: "max_score", value: query.get("max_score") || "", size: 5 });
    const tool = el("input", { type: "text", id: "tool", value: query.get("tool") || "", size: 12, placeholder: "tool name" });
    const missing = el("input", { type: "text", id: "missing", value: query.get("missing") || "", size: 12, placeholder: "tool name" });
    const apply = el("button", { class: "action", id: "apply" }, "Apply");
    const form = el("form", { class: "filters", onsubmit: (e) => { e.preventDefault(); go({ q: text.value, min_score: min.value, max_score: max.value, tool: tool.value.trim(), missing: missing.value.trim() }); } },
      el("label", {}, "search", text), el("label", {}, "min score", min), el("label", {}, "max score", max),
      el("label", { title: "conversations whose agent called this tool" }, "called tool", tool),
      el("label", { title: "conversations whose trajectory verdict lists this call as missing" }, "missing call", missing), apply,
      el("button", { type: "button", onclick: () => { location.hash = `#/run/${enc(runId)}`; } }, "Clear"));
    const selected = new Set();
    const labelThese = el("button", { class: "action", id: "label-these", disabled: true }, "Label these");
    const labelled = el("span", { id: "label-result", class: "muted" });
    labelThese.addEventListener("click", async () => {
      try {
        const result = await api("/api/label", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ run: runId, ids: [...selected] }),
        });
        labelled.replaceChildren(`${result.count} cases queued for labelling: `, el("code", {}, result.command));
        // `judge view` serves the set's page itself: open it (the link stays, for a
        // browser that blocks the new tab)
        if (result.url) {
          labelled.append(" · ", el("a", { id: "label-open", href: result.url, target: "_blank", rel: "noopener" }, "open the labelling page"));
          window.open(result.url, "_blank", "noopener");
        }
      } catch (e) { fail(e); }
    });
    const sortBy = (key) => el("button", { onclick: () => go({ sort: key, order: query.get("sort") === key && query.get("order") !== "desc" ? "desc" : "asc" }) }, key);
    const rows = data.records.map((r) => {
      const box = el("input", { type: "checkbox", "aria-label": `select ${r.id}`, "data-id": r.id });
      box.addEventListener("change", () => {
        if (box.checked) selected.add(r.id); else selected.delete(r.id);
        labelThese.disabled = selected.size === 0;
      });
      const panel = r.panel ? `${r.panel.outcome} (${r.panel.votes})` : "";
      // a conversation case shows its goal where an answer case shows its answer
      const answer = data.answers[r.id] !== undefined ? data.answers[r.id] : (data.goals || {})[r.id];
      const reason = (data.reasons || {})[r.id];
      return el("tr", { "data-id": r.id },
        el("td", {}, box),
        el("td", {}, el("a", { href: `#/case/${enc(runId)}/${enc(r.id)}` }, r.id)),
        el("td", { class: `status-${r.status}` }, r.status),
        el("td", { class: "num" }, fmt(r.score)),
        el("td", {}, r.label || ""),
        el("td", {}, (r.slices || []).join(", ")),
        el("td", {}, panel),
        el("td", { class: "answer" }, el("div", { class: "clip" }, answer === undefined ? "–" : answer)),
        el("td", { class: "muted reasoning" }, el("div", { class: "clip" }, reason !== undefined ? reason : reasoning(r))));
    });
    const offset = Number(query.get("offset") || 0);
    const pager = el("div", { class: "pager" },
      el("button", { disabled: offset === 0, onclick: () => go({ offset: Math.max(0, offset - PAGE) }) }, "‹ previous"),
      el("span", { id: "total" }, `${data.total ? offset + 1 : 0}–${Math.min(offset + PAGE, data.total)} of ${data.total}`),
      el("button", { disabled: offset + PAGE >= data.total, onclick: () => go({ offset: offset + PAGE }) }, "next ›"));
    show(`Records of ${run.rubric}@${run.rubric_version}`,
      el("div", { class: "layout" }, facets, el("div", {}, form, pager,
        el("table", { id: "records" },
          el("thead", {}, el("tr", {}, el("th", {}, ""), el("th", {}, sortBy("id")), el("th", {}, sortBy("status")),
            el("th", { class: "num" }, sortBy("score")), el("th", {}, sortBy("label")), el("th", {}, "slices"),
            el("th", {}, sortBy("spread")), el("th", {}, "answer / goal"), el("th", {}, "judge's reasoning / error"))),
          el("tbody", {}, rows)),
        el("p", {}, labelThese, " ", labelled))));
  }

  // the judge's reasoning in a line: its rationale, else its claims' verdicts and the first
  // claim it did not find supported
  function reasoning(r) {
    if (r.error) return r.error;
    const v = r.verdict || {};
    if (v.rationale) return v.rationale;
    const claims = v.claims || [];
    if (!claims.length) return r.status === "abstained" ? "no claim to check (abstained)" : "";
    const counts = {};
    for (const c of claims) counts[c.verdict] = (counts[c.verdict] || 0) + 1;
    const doubted = claims.find((c) => c.verdict !== "supported");
    const tally = Object.entries(counts).map(([k, n]) => `${n} ${k.replaceAll("_", " ")}`).join(", ");
    return doubted ? `${tally}; e.g. “${doubted.claim}”` : tally;
  }

  // ---- one case -----------------------------------------------------------------------------
  function contextsWithEvidence(contexts, claims) {
    const evidence = claims.map((c) => c.evidence).filter((e) => e && e.trim());
    return el("ol", { class: "contexts" }, (contexts || []).map((context, i) => {
      const spans = [];
      for (const piece of evidence) {
        let at = context.indexOf(piece);
        while (at >= 0) { spans.push([at, at + piece.length]); at = context.indexOf(piece, at + piece.length); }
      }
      return el("li", { class: "card text", "data-context": i }, marked(context, spans, () => ({ class: "evidence" }), "mark"));
    }));
  }
  function marked(text, spans, attrs, tag) {
    spans.sort((a, b) => a[0] - b[0]);
    const out = [];
    let at = 0;
    for (const span of spans) {
      if (span[0] < at) continue;
      out.push(text.slice(at, span[0]), el(tag, attrs(span), text.slice(span[0], span[1])));
      at = span[1];
    }
    out.push(text.slice(at));
    return out;
  }
  function answerWithClaims(answer, claims) {
    const spans = [];
    for (const c of claims) {
      const at = answer.indexOf(c.claim);
      if (at >= 0) spans.push([at, at + c.claim.length, c.verdict]);
    }
    return el("div", { class: "card text", id: "answer" }, marked(answer, spans, (s) => ({ class: `claim ${s[2]}`, title: s[2] }), "span"));
  }
  // a conversation case: its goal, the transcript (transcript.js, shared with judge label),
  // the calls the verdict found missing (each a link to the run's records missing it), and
  // each turn's verdict where the kind judges turn by turn
  function conversationParts(c, r, runId) {
    const verdict = r.verdict || {};
    const claims = verdict.claims || [];
    const toolLink = (name) => `#/run/${enc(runId)}?tool=${enc(name)}`;
    const options = { verdict, evidence: claims.map((k) => k.evidence), toolLink,
      expected: Array.isArray(c.expected_tool_calls) ? c.expected_tool_calls : null };
    const parts = [];
    if (c.goal) parts.push(el("h2", {}, "Goal"), el("div", { class: "card text", id: "goal" }, c.goal));
    if (c.messages) parts.push(el("h2", {}, "Transcript"), el("div", { id: "transcript" }, window.judgeTranscript.render(c.messages, options)));
    if (c.messages_a || c.messages_b) {
      parts.push(el("h2", {}, "Conversations A and B"), el("div", { class: "pair" },
        el("section", { id: "transcript-a" }, el("h3", {}, "A"), window.judgeTranscript.render(c.messages_a || [], { toolLink })),
        el("section", { id: "transcript-b" }, el("h3", {}, "B"), window.judgeTranscript.render(c.messages_b || [], { toolLink }))));
    }
    if (Array.isArray(verdict.missing) && verdict.missing.length) {
      parts.push(el("h2", {}, "Missing calls"), el("ul", { id: "missing" }, verdict.missing.map((m) =>
        el("li", {}, el("a", { href: `#/run/${enc(runId)}?missing=${enc(m.name)}` }, m.name), " ", el("code", {}, JSON.stringify(m.arguments === undefined ? {} : m.arguments))))));
    }
    if (Array.isArray(verdict.invalid) && verdict.invalid.length) {
      // tool_arguments: which call broke its tool's schema, and how
      parts.push(el("h2", {}, "Calls that broke their tool's schema"), el("table", { id: "invalid-calls" },
        el("thead", {}, el("tr", {}, el("th", {}, "call"), el("th", {}, "tool"), el("th", {}, "arguments"), el("th", {}, "why"))),
        el("tbody", {}, verdict.invalid.map((k) => el("tr", { "data-index": k.index },
          el("td", { class: "num" }, `#${k.index + 1}`), el("td", {}, el("code", {}, k.name)),
          el("td", {}, el("code", {}, typeof k.arguments === "string" ? k.arguments : JSON.stringify(k.arguments))),
          el("td", { class: "verdict-contradicted" }, (k.errors || []).join("; ")))))));
    }
    if (Array.isArray(verdict.unknown_tools) && verdict.unknown_tools.length) {
      parts.push(el("h2", {}, "Tools called that were not offered"), el("ul", { id: "unknown-tools" }, verdict.unknown_tools.map((t) => el("li", {}, el("code", {}, t)))));
    }
    if (Array.isArray(verdict.left_out) && verdict.left_out.length) {
      parts.push(el("h2", {}, "Left out by the rubric's rules"), el("ul", { id: "left-out" }, verdict.left_out.map((k) =>
        el("li", {}, `${k.side}: `, el("code", {}, k.name), ` — ${k.why}`))));
    }
    if (Array.isArray(verdict.turns) && verdict.turns.length) {
      parts.push(el("h2", {}, "Turns"), el("table", { id: "turns" },
        el("thead", {}, el("tr", {}, el("th", {}, "turn"), el("th", {}, "verdict"), el("th", {}, "reason"))),
        el("tbody", {}, verdict.turns.map((t) => el("tr", {}, el("td", { class: "num" }, t.turn), el("td", { class: `verdict-${t.verdict}` }, t.verdict), el("td", { class: "muted" }, t.reason || ""))))));
    }
    return parts;
  }
  function caseView(detail, runId) {
    const r = detail.record, c = detail.case || {};
    const claims = (r.verdict && r.verdict.claims) || [];
    const contexts = c.contexts || c.retrieved_contexts || [];
    const answer = c.answer || c.response || "";
    const head = el("p", {}, el("span", { class: `status-${r.status}` }, r.status), ` · score ${fmt(r.score)} · label ${r.label || "–"}`);
    const conversation = c.messages || c.messages_a || c.messages_b;
    const parts = conversation ? [head, ...conversationParts(c, r, runId)] : [
      head,
      el("h2", {}, "Question"), el("div", { class: "card text", id: "question" }, c.question || c.user_input || (detail.case ? "" : "(no cases file: start the viewer with --cases FILE)")),
      el("h2", {}, "Contexts (evidence highlighted)"), contextsWithEvidence(contexts, claims),
      el("h2", {}, "Answer (claims marked by verdict)"), answer ? answerWithClaims(answer, claims) : el("p", { class: "muted" }, "no answer in the case"),
    ];
    if (conversation && c.contexts && c.contexts.length) parts.push(el("h2", {}, "Contexts (evidence highlighted)"), contextsWithEvidence(contexts, claims));
    if (c.answer_a || c.answer_b) parts.push(el("h2", {}, "Answers A and B"), el("div", { class: "pair" }, el("div", { class: "card text" }, c.answer_a || ""), el("div", { class: "card text" }, c.answer_b || "")));
    if (claims.length) {
      parts.push(el("h2", {}, "Claims"), el("table", { id: "claims" },
        el("thead", {}, el("tr", {}, el("th", {}, "claim"), el("th", {}, "verdict"), el("th", {}, "evidence"))),
        el("tbody", {}, claims.map((k) => el("tr", {}, el("td", {}, k.claim), el("td", { class: `verdict-${k.verdict}` }, k.verdict), el("td", { class: "muted" }, k.evidence || ""))))));
    }
    if (r.verdict && r.verdict.rationale) parts.push(el("h2", {}, "Rationale"), el("div", { class: "card text" }, r.verdict.rationale));
    if (r.error) parts.push(el("h2", {}, "Error"), el("div", { class: "card text" }, r.error));
    if (r.raw) parts.push(el("h2", {}, "Raw reply"), el("pre", { id: "raw" }, r.raw));
    if (r.panel) {
      parts.push(el("h2", {}, `Jurors (${r.panel.outcome}, ${r.panel.votes}, rule ${r.panel.rule})`), el("table", { id: "jurors" },
        el("thead", {}, el("tr", {}, ...["juror", "status", "label", "score", "model", "error"].map((h) => el("th", {}, h)))),
        el("tbody", {}, r.panel.jurors.map((j) => el("tr", {}, el("td", {}, j.juror), el("td", { class: `status-${j.status}` }, j.status), el("td", {}, j.label || ""), el("td", { class: "num" }, fmt(j.score)), el("td", {}, (j.judge || {}).model || ""), el("td", { class: "muted" }, j.error || ""))))));
    }
    if (detail.human.length) {
      parts.push(el("h2", {}, "People's labels"), el("table", { id: "human" },
        el("thead", {}, el("tr", {}, el("th", {}, "annotator"), el("th", {}, "label"), el("th", {}, "note"))),
        el("tbody", {}, detail.human.map((h) => el("tr", {}, el("td", {}, h.annotator || "–"), el("td", {}, h.label), el("td", {}, h.note || ""))))));
    }
    const judge = r.judge || {};
    // as the record holds them; a judge that sets none (the rules judge) records null
    const recorded = (v) => (v === null || v === undefined ? "not recorded" : String(v));
    parts.push(el("h2", {}, "Provenance"), el("table", { id: "provenance" }, el("tbody", {},
      [["rubric", `${r.rubric}@${r.rubric_version}`], ["rubric sha256", r.rubric_sha256], ["judge", judge.model],
        ["judge id", r.judge_id], ["output mode", judge.output_mode], ["fingerprint", judge.system_fingerprint],
        ["temperature", recorded(judge.temperature)], ["seed", recorded(judge.seed)], ["cached", String(r.cached)],
        ["tokens", r.usage ? `${r.usage.prompt_tokens} + ${r.usage.completion_tokens}` : "–"], ["latency ms", r.latency_ms], ["run", runId]]
        .map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v === null || v === undefined ? "–" : String(v)))))));
    return el("div", { class: "case" }, parts);
  }
  async function pageCase(runId, caseId) {
    const run = await runById(runId);
    trail(el("a", { href: "#/" }, "runs"), el("a", { href: `#/run/${enc(runId)}` }, runName(run)), caseId);
    const detail = await api(`/api/runs/${enc(runId)}/records/${enc(caseId)}`);
    show(`Case ${caseId}`, caseView(detail, runId));
  }

  // ---- comparisons --------------------------------------------------------------------------
  async function pageCompare(base, candidate) {
    const [a, b] = [await runById(base), await runById(candidate)];
    trail(el("a", { href: "#/" }, "runs"), `compare ${a.id} → ${b.id}`);
    // refused here as the API refuses it (judge.view.viewer), before asking
    if (a.rubric !== b.rubric) throw new Error(`the base ${a.path} grades ${a.rubric} and the candidate ${b.path} grades ${b.rubric}: runs of different rubrics are not compared (judge compare: no metric both runs have)`);
    const data = await api(`/api/compare?base=${enc(base)}&candidate=${enc(candidate)}`);
    const roles = el("p", { id: "roles" }, "base: ", el("strong", {}, runName(a)), ` (${data.base_path}) · candidate: `, el("strong", {}, runName(b)), ` (${data.candidate_path})`);
    const caseList = (id, ids) => el("ol", { id }, ids.slice(0, 500).map((i) => el("li", {}, el("a", { href: `#/pair/${enc(base)}/${enc(candidate)}/${enc(i)}` }, i))));
    show(`Compare ${runName(a)} → ${runName(b)}`, roles,
      data.notes.length ? el("ul", { id: "notes", class: "notes" }, data.notes.map((n) => el("li", {}, n))) : "",
      el("p", { class: "muted" }, "diff = candidate − base, paired by case; 95% bootstrap interval; p: sign test, Holm-corrected over the metrics (as judge compare)."),
      el("table", { id: "metrics" },
        el("thead", {}, el("tr", {}, ...["metric", "base", "candidate", "diff", "95% CI", "p (Holm)", "wins / ties / losses"].map((h) => el("th", {}, h)))),
        el("tbody", {}, data.metrics.map((m) => el("tr", {},
          el("td", { class: m.significant ? "sig" : null }, m.name + (m.significant ? " *" : "")), el("td", { class: "num" }, fmt(m.base)), el("td", { class: "num" }, fmt(m.candidate)),
          el("td", { class: "num" }, fmt(m.diff)), el("td", {}, ci(m.ci95)), el("td", { class: "num" }, fmt(m.p, 4)), el("td", {}, `${m.wins} / ${m.ties} / ${m.losses}`))))),
      el("p", {}, `${data.paired} cases in both; ${data.counts.regressed} regressed, ${data.counts.improved} improved, ${data.counts.unchanged} unchanged, ${data.counts.not_ok} not ok on a side, ${data.counts.only_base} only in base, ${data.counts.only_candidate} only in candidate.`),
      el("h2", {}, `Regressed (${data.counts.regressed}): both ok, lower in the candidate`), caseList("regressed", data.regressed),
      el("h2", {}, `Improved (${data.counts.improved})`), caseList("improved", data.improved),
      el("h2", {}, `Not ok on a side (${data.counts.not_ok})`),
      el("ol", { id: "not-ok" }, data.not_ok.slice(0, 500).map((n) => el("li", {}, el("a", { href: `#/pair/${enc(base)}/${enc(candidate)}/${enc(n.id)}` }, n.id), ` base ${n.base}, candidate ${n.candidate}`))));
  }
  async function pagePair(base, candidate, caseId) {
    trail(el("a", { href: "#/" }, "runs"), el("a", { href: `#/compare/${enc(base)}/${enc(candidate)}` }, "comparison"), caseId);
    const [a, b] = await Promise.all([api(`/api/runs/${enc(base)}/records/${enc(caseId)}`), api(`/api/runs/${enc(candidate)}/records/${enc(caseId)}`)]);
    show(`Case ${caseId}: base and candidate`, el("div", { class: "pair" },
      el("section", { id: "base" }, el("h2", {}, `base ${base}`), caseView(a, base)),
      el("section", { id: "candidate" }, el("h2", {}, `candidate ${candidate}`), caseView(b, candidate))));
  }

  // ---- calibration, RAG, outputs ------------------------------------------------------------
  async function pageConfusion(runId) {
    const run = await runById(runId);
    trail(el("a", { href: "#/" }, "runs"), el("a", { href: `#/run/${enc(runId)}` }, runName(run)), "confusion");
    const data = await api(`/api/runs/${enc(runId)}/confusion`);
    show(`People against the judge: ${run.rubric}`,
      el("p", { class: "muted" }, `${data.n} cases with both labels; rows: people's label, columns: the judge's. Click a cell for its cases.`),
      el("table", { id: "confusion", class: "matrix" },
        el("thead", {}, el("tr", {}, el("th", {}, "people \\ judge"), data.labels.map((l) => el("th", { class: "num" }, l)))),
        el("tbody", {}, data.labels.map((h, i) => el("tr", {}, el("th", {}, h), data.labels.map((j, k) => el("td", { class: "num" },
          data.matrix[i][k] ? el("a", { href: `#/run/${enc(runId)}?human_label=${enc(h)}&judged=${enc(j)}`, "data-cell": `${h}|${j}` }, data.matrix[i][k]) : "0")))))));
  }
  async function pageRag(runId) {
    const run = await runById(runId);
    trail(el("a", { href: "#/" }, "runs"), el("a", { href: `#/run/${enc(runId)}` }, runName(run)), "RAG");
    const data = await api(`/api/runs/${enc(runId)}/rag`);
    const d = data.diagnosis, cells = d.cells;
    const cell = (name) => {
      const c = cells[name];
      const ids = c.ids || [];
      const target = data.runs[d.signals.generation[0].rubric] || runId;
      return el("div", { class: "cell", "data-cell": name }, el("strong", {}, `${name.replace("_", " ")}: ${c.count}`), ` (${fmt(c.rate)})`,
        el("div", { class: "muted" }, c.meaning || ""),
        ids.length ? el("a", { href: `#/run/${enc(target)}?ids=${enc(ids.slice(0, 200).join(","))}` }, "its cases") : "");
    };
    show("Retrieval against generation",
      el("p", { class: "muted" }, `retrieval: ${d.signals.retrieval.map((s) => `${s.rubric} ≥ ${s.threshold}`).join(", ")}; generation: ${d.signals.generation.map((s) => `${s.rubric} ≥ ${s.threshold}`).join(", ")}; ${d.unclassified} unclassified.`),
      el("div", { class: "grid2", id: "rag" }, el("span", {}), el("strong", {}, "generation high"), el("strong", {}, "generation low"),
        el("strong", {}, "retrieval high"), cell("healthy"), cell("generator_broken"),
        el("strong", {}, "retrieval low"), cell("retriever_broken"), cell("both_broken")));
  }
  async function pageOutput(id) {
    trail(el("a", { href: "#/" }, "runs"), id);
    const out = await api(`/api/outputs/${enc(id)}`);
    const d = out.data;
    const rates = Object.keys(d).filter((k) => /(_rate|_p_value|kappa|alpha)$/.test(k) && typeof d[k] === "number");
    const lists = Object.keys(d).filter((k) => k.endsWith("_ids") && Array.isArray(d[k]) && d[k].length);
    show(`${out.kind}: ${out.path.split("/").pop()}`,
      rates.length ? el("table", { id: "rates" }, el("tbody", {}, rates.map((k) => el("tr", {}, el("th", {}, k), el("td", { class: "num" }, fmt(d[k])), el("td", {}, ci(d[`${k}_ci95`] || d[`${k.replace(/_p_value$/, "")}_ci95`])))))) : "",
      lists.map((k) => [el("h2", {}, `${k} (${d[k].length})`), el("p", {}, d[k].slice(0, 300).join(", "))]),
      el("h2", {}, "the whole file"), el("pre", {}, JSON.stringify(d, null, 2)));
  }

  async function route() {
    const hash = location.hash.replace(/^#\/?/, "");
    const [path, search] = hash.split("?");
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    const query = new URLSearchParams(search || "");
    try {
      if (parts[0] === "run") await pageRecords(parts[1], query);
      else if (parts[0] === "case") await pageCase(parts[1], parts.slice(2).join("/"));
      else if (parts[0] === "compare") await pageCompare(parts[1], parts[2]);
      else if (parts[0] === "pair") await pagePair(parts[1], parts[2], parts.slice(3).join("/"));
      else if (parts[0] === "confusion") await pageConfusion(parts[1]);
      else if (parts[0] === "drift") await window.judgeDrift.page(parts[1], query, { el, api, enc, fmt, ci, show, trail, runById, runName });
      else if (parts[0] === "rag") await pageRag(parts[1]);
      else if (parts[0] === "output") await pageOutput(parts[1]);
      else await pageRuns();
    } catch (e) {
      fail(e);
    }
  }
  window.addEventListener("hashchange", route);
  route();
})();
