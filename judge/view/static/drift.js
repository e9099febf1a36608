// judge view's drift page (#/drift/RUN?window=N|by=week): the judge's agreement with people
// window by window, as `judge drift` computes it (GET /api/runs/RUN/drift). The chart is SVG
// built from DOM nodes (no HTML from data, no inline style: the CSP refuses it); each
// window's point, and its table row, opens the records page on that window's cases that
// disagree with people. view.js calls window.judgeDrift.page with its helpers.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const W = 720, H = 260, LEFT = 44, RIGHT = 16, TOP = 12, BOTTOM = 34;

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) node.setAttribute(k, v);
    for (const child of children) if (child) node.append(child);
    return node;
  }
  const title = (text) => { const t = document.createElementNS(SVG, "title"); t.textContent = text; return t; };

  // the window's disagreements on the records page: its ids (those judge drift counts as
  // disagreeing, else all of its cases, so an empty list never means "every case") and
  // human=disagree, the viewer's own test of the same
  function target(runId, w, enc) {
    const ids = w.disagreements && w.disagreements.length ? w.disagreements : w.ids;
    return `#/run/${enc(runId)}?ids=${enc(ids.join(","))}&human=disagree`;
  }

  // y from the lowest interval end (or 0) to 1: agreement coefficients run to 1
  function scale(data) {
    const lows = [0];
    for (const w of data.windows) if (w.agreement_ci95) lows.push(w.agreement_ci95[0]); else if (w.agreement !== null) lows.push(w.agreement);
    if (data.reference.agreement_ci95) lows.push(data.reference.agreement_ci95[0]);
    const bottom = Math.max(-1, Math.floor(Math.min(...lows) * 10) / 10);
    return (v) => TOP + ((1 - v) * (H - TOP - BOTTOM)) / (1 - bottom);
  }

  function chart(data, runId, h) {
    const y = scale(data);
    const n = data.windows.length;
    const x = (i) => LEFT + ((i + 0.5) * (W - LEFT - RIGHT)) / Math.max(1, n);
    const root = svg("svg", { id: "drift-chart", class: "drift", width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img",
      "aria-label": `${data.coefficient} by window, with 95% intervals; alarms at ${data.alarm.windows.join(", ") || "none"}` });
    for (const v of [1, 0.5, 0, -0.5]) {
      if (y(v) > H - BOTTOM + 0.5) continue;
      root.append(svg("line", { class: "grid", x1: LEFT, x2: W - RIGHT, y1: y(v), y2: y(v) }),
        svg("text", { class: "axis", x: LEFT - 6, y: y(v) + 4, "text-anchor": "end" }, document.createTextNode(String(v))));
    }
    const ref = data.reference;
    if (ref.agreement_ci95) {
      const [lo, hi] = ref.agreement_ci95;
      root.append(svg("rect", { id: "drift-reference", class: "reference", x: LEFT, width: W - LEFT - RIGHT, y: y(hi), height: Math.max(1, y(lo) - y(hi)) },
        title(`reference ${ref.name}: ${h.fmt(ref.agreement)} ${h.ci(ref.agreement_ci95)}`)));
    }
    if (ref.agreement !== null && ref.agreement !== undefined) root.append(svg("line", { class: "reference-line", x1: LEFT, x2: W - RIGHT, y1: y(ref.agreement), y2: y(ref.agreement) }));
    // --reference past: each window's own reference, the windows before it pooled
    data.windows.forEach((w, i) => {
      if (w.past && w.past.agreement !== null) root.append(svg("line", { class: "reference-line past", x1: x(i) - 12, x2: x(i) + 12, y1: y(w.past.agreement), y2: y(w.past.agreement) },
        title(`windows before, pooled (n ${w.past.n}): ${h.fmt(w.past.agreement)} ${h.ci(w.past.agreement_ci95)}`)));
    });
    data.windows.forEach((w, i) => root.append(windowMark(w, x(i), y, runId, h)));
    return root;
  }

  // one window: its whisker and point (an alarm drawn red and ringed), or, with too few
  // labels, a hollow point on the axis saying what it needs
  function windowMark(w, cx, y, runId, h) {
    const group = svg("g", { class: "window", "data-window": w.window });
    group.append(svg("text", { class: "axis", x: cx, y: H - BOTTOM + 16, "text-anchor": "middle" }, document.createTextNode(w.window)));
    if (w.agreement === null || w.agreement === undefined || !w.enough) {
      const at = w.agreement === null || w.agreement === undefined ? H - BOTTOM - 5 : y(w.agreement);
      group.append(svg("circle", { class: "point few", cx, cy: at, r: 4, "data-window": w.window }, title(`window ${w.window}: ${w.needs || "no verdict"}`)));
      return group;
    }
    if (w.agreement_ci95) group.append(svg("line", { class: "whisker", x1: cx, x2: cx, y1: y(w.agreement_ci95[0]), y2: y(w.agreement_ci95[1]) }));
    if (w.alarm) group.append(svg("circle", { class: "alarm-ring", cx, cy: y(w.agreement), r: 9 }));
    const point = svg("circle", { class: w.alarm ? "point alarm" : "point", cx, cy: y(w.agreement), r: 5, tabindex: 0, "data-window": w.window },
      title(`window ${w.window}: ${h.fmt(w.agreement)} ${h.ci(w.agreement_ci95)}, n ${w.n}${w.alarm ? ", ALARM" : ""}; click for its disagreements`));
    const open = () => { location.hash = target(runId, w, h.enc); };
    point.addEventListener("click", open);
    point.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
    group.append(point);
    return group;
  }

  function table(data, runId, h) {
    const el = h.el;
    const head = ["window", "from – to", "n", data.coefficient, "95% CI", "Δ vs reference", "95% CI", "scan", "verdict", "disagreements"];
    return el("table", { id: "drift-table" },
      el("thead", {}, el("tr", {}, head.map((t) => el("th", {}, t)))),
      el("tbody", {}, data.windows.map((w) => {
        const isRef = data.reference.name === w.window && data.reference.kind !== "file";
        const verdict = !w.enough ? w.needs : w.alarm ? "ALARM" : isRef ? "reference" : "no alarm";
        const row = el("tr", { "data-window": w.window, class: w.alarm ? "alarm" : w.enough ? null : "few" },
          el("td", {}, w.window), el("td", { class: "muted" }, w.start ? `${w.start} – ${w.end}` : ""),
          el("td", { class: "num" }, w.n), el("td", { class: "num" }, h.fmt(w.agreement)), el("td", {}, h.ci(w.agreement_ci95)),
          el("td", { class: "num" }, h.fmt(w.difference)), el("td", {}, h.ci(w.difference_ci95)), el("td", { class: "num" }, h.fmt(w.scan)),
          el("td", {}, verdict),
          el("td", { class: "num" }, w.disagreements && w.disagreements.length ? el("a", { href: target(runId, w, h.enc) }, w.disagreements.length) : "0"));
        row.addEventListener("click", (e) => { if (e.target.tagName !== "A" && w.disagreements && w.disagreements.length) location.hash = target(runId, w, h.enc); });
        return row;
      })));
  }

  function form(data, runId, query, h) {
    const el = h.el;
    const size = el("input", { type: "number", min: 1, id: "drift-window", value: data.cut.window || "", size: 5 });
    const by = el("select", { id: "drift-by" }, el("option", { value: "" }, "count"),
      ["day", "week", "month"].map((p) => el("option", { value: p, selected: data.cut.by === p }, p)));
    return el("form", { class: "filters", onsubmit: (e) => {
      e.preventDefault();
      const keep = ["reference", "alpha", "min_labels", "time_field", "positive_label"].filter((k) => query.get(k)).map((k) => `&${k}=${h.enc(query.get(k))}`).join("");
      location.hash = `#/drift/${h.enc(runId)}?` + (by.value ? `by=${by.value}` : `window=${h.enc(size.value || "100")}`) + keep;
    } }, el("label", {}, "windows by", by), el("label", {}, "labels a window", size), el("button", { class: "action" }, "Apply"));
  }

  async function page(runId, query, h) {
    const run = await h.runById(runId);
    h.trail(h.el("a", { href: "#/" }, "runs"), h.el("a", { href: `#/run/${h.enc(runId)}` }, h.runName(run)), "drift");
    const search = new URLSearchParams();
    for (const k of ["window", "by", "reference", "alpha", "min_labels", "time_field", "positive_label"]) if (query.get(k)) search.set(k, query.get(k));
    const data = await h.api(`/api/runs/${h.enc(runId)}/drift?${search}`);
    const el = h.el, ref = data.reference;
    h.show(`Agreement with people over time: ${run.rubric}`,
      el("p", { id: "drift-status", class: data.alarm.fired ? "notes" : "muted" }, `${data.status.verdict}: ${data.status.reason}${data.status.caveat ? ` (${data.status.caveat})` : ""}`),
      el("p", { id: "drift-reading" }, `In short: ${data.status.reading}.`),
      data.positive_label === null || data.positive_label === undefined ? "" : el("p", { id: "drift-pass", class: "muted" }, `pass = ${data.positive_label} (${data.positive_from}): the judge pass and human pass columns count it.`),
      el("p", { class: "muted" }, `${data.n} labelled cases; windows: ${data.windowing}${data.cut.by ? ` (${data.time_source})` : ""}; ${data.coefficient} with its 95% interval; reference: ${ref.name === null ? "none" : ref.kind === "past" ? `past, each window against all the windows before it (from ${ref.name})` : `${ref.kind} ${ref.name} (band)`}; a window needs ${data.min_labels} labels. Click a point or a row for that window's disagreements.`),
      form(data, runId, query, h), chart(data, runId, h), table(data, runId, h),
      el("p", { class: "muted" }, `alarm: ${data.alarm.method}; alpha ${data.alarm.alpha}.`));
  }

  window.judgeDrift = { page };
})();
