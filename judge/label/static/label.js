// judge label: one case at a time, keyboard first. Case text is untrusted: it only ever
// goes into the page through textContent, never as HTML.
"use strict";

(function () {
  const params = new URLSearchParams(location.search);
  const token = params.get("token") || "";
  let annotator = params.get("annotator") || "";
  let state = null;
  let busy = false;

  const $ = (id) => document.getElementById(id);

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  async function call(method, path, body) {
    const response = await fetch(path, {
      method,
      headers: { Authorization: "Bearer " + token, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      const message = (data.error && data.error.message) || "request failed (" + response.status + ")";
      throw new Error(message);
    }
    return data;
  }

  function showError(error) {
    $("error").textContent = error ? String(error.message || error) : "";
    $("error").hidden = !error;
  }

  async function load() {
    const query = annotator ? "?annotator=" + encodeURIComponent(annotator) : "";
    render(await call("GET", "/api/state" + query));
  }

  function render(next) {
    state = next;
    $("rubric").textContent = next.rubric.ref + ": " + next.rubric.title;
    if (!next.annotator) {
      $("start").hidden = false;
      $("case").hidden = true;
      $("done").hidden = true;
      $("name").focus();
      return;
    }
    annotator = next.annotator;
    $("who").textContent = "Labelling as " + annotator;
    $("start").hidden = true;
    renderProgress(next.progress);
    $("case").hidden = !next.item;
    $("done").hidden = !!next.item;
    if (next.item) renderItem(next.item, next.choices, next.previous);
  }

  function renderProgress(p) {
    const total = p.labelled + p.left;
    $("bar").style.width = (total ? (100 * p.labelled) / total : 100) + "%";
    $("counts").textContent =
      "You: " + p.labelled + " labelled, " + p.left + " left" +
      (p.skipped ? " (" + p.skipped + " skipped, shown again at the end)" : "") +
      ". All annotators: " + p.complete_items + " of " + p.items + " cases complete" +
      (p.waiting_for_others
        ? "; " + p.waiting_for_others + " you labelled wait for another annotator (they need more than one person's label)."
        : ".");
  }

  function renderItem(item, choices, previous) {
    $("case-id").textContent = item.case_id;
    $("goal-box").hidden = !item.goal;  // a conversation's goal, first: what to judge against
    $("goal").textContent = item.goal || "";
    $("question").textContent = item.question;
    const contexts = $("contexts");
    contexts.replaceChildren(...item.contexts.map((text) => el("li", "", text)));
    $("contexts-box").hidden = item.contexts.length === 0;
    $("reference-box").hidden = !item.reference;
    $("reference").textContent = item.reference || "";
    const answers = item.answers.map((text, i) => {
      const box = el("div", "");
      const title = item.answers.length > 1 ? (i === 0 ? "First answer" : "Second answer") : "Answer";
      box.append(el("h2", "", title), el("p", "answer", text));
      return box;
    });
    $("answers").replaceChildren(...answers);
    renderConversation(item);
    const buttons = choices.map((choice) => {
      const button = el("button", "choice");
      button.type = "button";
      button.dataset.choice = choice.name;
      if (previous && previous.choice === choice.name) button.classList.add("previous");
      const key = el("kbd", "", choice.key);
      button.append(key, el("span", "choice-name", choice.name), el("span", "choice-text", choice.description));
      button.addEventListener("click", () => answer(choice.name));
      return button;
    });
    $("choices").replaceChildren(...buttons);
    $("note").value = previous ? previous.note : "";
    window.scrollTo(0, 0);
  }

  // a conversation: its transcript (transcript.js, drawn as the viewer draws it), the
  // expected calls beside the agent's when the rubric reads them; no verdict (blind)
  function renderConversation(item) {
    const box = $("conversation");
    const parts = [];
    if (item.messages) {
      const options = { expected: item.expected_tool_calls || null };
      parts.push(el("h2", "", "Conversation"), window.judgeTranscript.render(item.messages, options));
    }
    (item.conversations || []).forEach((messages, i) => {
      parts.push(el("h2", "", i === 0 ? "First conversation" : "Second conversation"), window.judgeTranscript.render(messages, {}));
    });
    box.replaceChildren(...parts);
    box.hidden = parts.length === 0;
    const conversation = parts.length > 0;
    $("question").parentElement.hidden = conversation && !item.question;
    $("answers").hidden = conversation && item.answers.every((a) => !a);
  }

  async function act(work) {
    if (busy) return;
    busy = true;
    try {
      showError(null);
      render(await work());
    } catch (error) {
      showError(error);
    } finally {
      busy = false;
    }
  }

  function answer(choice) {
    if (!state || !state.item) return;
    const note = $("note").value;
    act(() => call("POST", "/api/answer", { annotator, case_id: state.item.case_id, choice, note }));
  }

  function skip() {
    if (!state || !state.item) return;
    act(() => call("POST", "/api/answer", { annotator, case_id: state.item.case_id, choice: null }));
  }

  function undo() {
    if (!annotator) return;
    act(() => call("POST", "/api/undo", { annotator }));
  }

  function onKey(event) {
    const typing = event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLInputElement;
    if (event.key === "Escape" && typing) {
      event.target.blur();
      return;
    }
    if (typing || event.ctrlKey || event.metaKey || event.altKey || !state || !state.annotator) return;
    const key = event.key.toLowerCase();
    const choice = state.choices.find((c) => c.key === key);
    if (choice && state.item) answer(choice.name);
    else if (key === "s") skip();
    else if (key === "u") undo();
    else if (key === "n" && state.item) $("note").focus();
    else return;
    event.preventDefault();
  }

  function start(event) {
    event.preventDefault();
    annotator = $("name").value.trim();
    if (!annotator) return;
    params.set("annotator", annotator);
    history.replaceState(null, "", location.pathname + "?" + params.toString());
    act(() => call("GET", "/api/state?annotator=" + encodeURIComponent(annotator)));
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("start-form").addEventListener("submit", start);
    $("skip").addEventListener("click", skip);
    $("undo").addEventListener("click", undo);
    $("undo-done").addEventListener("click", undo);
    document.addEventListener("keydown", onKey);
    load().catch(showError);
  });
})();
