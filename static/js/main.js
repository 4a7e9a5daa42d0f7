// The console page: wires the editor, the result views, the side panels and
// the live continuous-query views together. Every module it uses does one job.

import { Editor } from "./editor.js";
import * as history from "./history.js";
import { LiveQuery } from "./live.js";
import * as prefixes from "./prefixes.js";
import { ResultTable, showBoolean, showTurtle } from "./results.js";
import { dropStream, register, resultsAs, runQuery, runUpdate, setToken, token, unregister } from "./sparql-client.js";
import { escapeHtml, requestKind } from "./sparql-syntax.js";
import { StreamsPanel, template } from "./streams.js";

const $ = (id) => document.getElementById(id);

const DEFAULT_QUERY = `SELECT ?s ?p ?o
WHERE { ?s ?p ?o }
LIMIT 100
`;

const editor = new Editor($("editor"), { onRun: run, complete: completePrefix });
const live = new Map(); // query name -> LiveQuery
let lastQuery = null; // the text whose results are shown, for the downloads
let running = null; // the AbortController of the request under way
/** The file name extension of each download format. */
const EXTENSIONS = { csv: "csv", tsv: "tsv", json: "json", turtle: "ttl", nt: "nt", jsonld: "jsonld" };

editor.text = history.load()[0]?.text ?? DEFAULT_QUERY;
$("token").value = token() ?? "";
$("token").addEventListener("input", (event) => setToken(event.target.value.trim()));
$("run").addEventListener("click", run);
$("cancel").addEventListener("click", () => running?.abort());
drawHistory(history.load());
drawPrefixes();
prefixes.discover().then(drawPrefixes, (error) => console.warn("prefix discovery failed:", error));

const panel = new StreamsPanel($("streams"), $("queries"), {
  onTemplate: (stream) => { editor.text = template(stream); editor.textarea.focus(); },
  onDrop: async (name) => {
    if (!confirm(`Drop stream ${name}? What it absorbed stays in its stored graph.`)) return;
    clearError();
    try {
      await dropStream(name);
      setStatus(`Dropped stream ${name}.`);
    } catch (error) {
      showError(error); // 409 names the queries that read or write it
    }
    panel.poll();
  },
  onListen: openLive,
  onUnregister: async (name) => {
    if (live.has(name)) return live.get(name).unregister();
    try {
      await unregister(name);
    } catch (error) {
      showError(error);
    }
    panel.poll();
  },
  isOpen: (name) => live.has(name),
});
panel.start();

for (const button of $("downloads").querySelectorAll("[data-format]")) {
  button.addEventListener("click", () => download(button.dataset.format));
}

async function run() {
  if (!editor.text.trim() || running) return;
  // prefixes the text uses without declaring them, but which the chips offer: declared for it
  const added = prefixes.undeclared(editor.text);
  for (const p of added) editor.addPrefix(p.name, p.iri);
  const text = editor.text;
  const declared = added.length ? ` Declared ${added.map((p) => `${p.name}:`).join(", ")} for it.` : "";
  const kind = requestKind(text);
  running = new AbortController();
  setBusy(true);
  clearError();
  // a note on screen (a failure, a registration) belongs to the last request, not to this one
  if (lastQuery === null) showResults(null, null, "Running…");
  const started = performance.now();
  const took = () => `${Math.round(performance.now() - started)} ms`;
  try {
    if (kind === "registration") {
      const description = await register(text, running.signal);
      showResults(null, null, `Registered continuous query ${description.name}: its windows show below,`
        + " under Live continuous queries.");
      setStatus(`Registered continuous query ${description.name} (${took()}).${declared}`);
      openLive(description.name, text);
      panel.poll();
    } else if (kind === "update") {
      await runUpdate(text, running.signal);
      showResults(null, null, "Update applied.");
      setStatus(`Update applied in ${took()}.${declared}`);
    } else {
      const answer = await runQuery(text, running.signal);
      showResults(answer, text);
      setStatus(summary(answer) + ` in ${took()}.${declared}`);
    }
    drawHistory(history.remember(text));
  } catch (error) {
    if (error.name === "AbortError") {
      setStatus(`Cancelled after ${took()}.`);
      showResults(null, null, kind === "update"
        ? "Cancelled: no answer. An update the server had already received may still be applied."
        : "Cancelled: no answer.");
    } else {
      setStatus("");
      showNoResults();
      showError(error);
    }
  } finally {
    running = null;
    setBusy(false);
  }
}

/** The one known prefix whose name completes `partial` (or is it), else null. */
function completePrefix(partial) {
  const names = prefixes.completions(partial);
  const name = names.length === 1 || names[0] === partial ? names[0] : null;
  return name ? prefixes.known.find((p) => p.name === name) : null;
}

function summary(answer) {
  if (answer.kind === "table") {
    const n = answer.json.results.bindings.length;
    return `${n} ${n === 1 ? "row" : "rows"}`;
  }
  if (answer.kind === "boolean") return `ASK: ${answer.json.boolean}`;
  return "Graph";
}

/**
 * Show `answer` (of the query `text`) in the results area, or, without an
 * answer, the `note` alone: whatever was there before is always replaced, so
 * an answer on screen belongs to the request just made.
 */
function showResults(answer, text = null, note = "") {
  const area = $("results");
  lastQuery = answer ? text : null;
  $("downloads").hidden = lastQuery === null;
  const offered = answer?.kind === "graph" ? "graph" : "table"; // a CONSTRUCT's triples, or a table's rows
  for (const button of $("downloads").querySelectorAll("[data-for]")) button.hidden = button.dataset.for !== offered;
  if (!answer) {
    area.innerHTML = `<p class="hint">${escapeHtml(note)}</p>`;
    return;
  }
  // the query's own prefixes first, so its results read the way it was written
  if (answer.kind === "table") {
    new ResultTable(area, answer.json, { prefixes: [...prefixes.declaredIn(text), ...prefixes.known] });
  }
  else if (answer.kind === "boolean") showBoolean(area, answer.json.boolean);
  else showTurtle(area, answer.turtle);
}

async function download(format) {
  try {
    const blob = await resultsAs(lastQuery, format);
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `results.${EXTENSIONS[format] ?? format}`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  } catch (error) {
    showError(error);
  }
}

/** The live view of the registered query `name`, whose text is `text`. */
function openLive(name, text) {
  if (live.has(name)) return;
  $("live-empty").hidden = true;
  live.set(name, new LiveQuery($("live"), name, {
    prefixes: [...prefixes.declaredIn(text), ...prefixes.known],
    onError: showError,
    onGone: (gone) => {
      live.delete(gone);
      $("live-empty").hidden = live.size > 0;
      setStatus(`Unregistered ${gone}.`);
      panel.poll();
    },
  }));
  panel.poll();
}

/** After a failed request: no answer is shown, since the last one was for another request. */
function showNoResults() {
  showResults(null, null, "No results: the request failed (the error is above).");
}

function showError(error) {
  const box = $("error");
  const position = error.position ?? null;
  const where = position ? `<strong class="error-position">line ${position.line}, column ${position.column}</strong> ` : "";
  const status = error.status ? `HTTP ${error.status}: ` : "";
  box.innerHTML = `${where}<span class="error-message">${escapeHtml(status + error.message)}</span>`;
  box.hidden = false;
  if (position) editor.markError(position.line, position.column);
}

function clearError() {
  $("error").hidden = true;
  editor.clearMark();
}

function setStatus(text) { $("status").textContent = text; }

function setBusy(busy) {
  $("run").disabled = busy;
  $("cancel").hidden = !busy;
  if (busy) setStatus("Running…");
}

function drawPrefixes() {
  const box = $("prefixes");
  box.innerHTML = prefixes.known.map((p, i) => `<button type="button" class="chip${p.found ? " found" : ""}"
    data-index="${i}" title="${escapeHtml(p.iri)}">${escapeHtml(p.name)}:</button>`).join("");
  for (const chip of box.querySelectorAll(".chip")) {
    const p = prefixes.known[Number(chip.dataset.index)];
    chip.addEventListener("click", () => editor.addPrefix(p.name, p.iri));
  }
}

function drawHistory(entries) {
  const list = $("history");
  if (!entries.length) {
    list.innerHTML = `<li class="hint">Queries you run are kept here, in this browser.</li>`;
    return;
  }
  list.innerHTML = entries.map((entry, i) => {
    const preview = entry.text.replace(/^\s*(PREFIX|BASE)\s[^\n]*\n/gim, "").trim().replace(/\s+/g, " ");
    const when = new Date(entry.at).toLocaleString();
    return `<li><button type="button" data-index="${i}" title="${escapeHtml(when)}">${escapeHtml(preview.slice(0, 90))}</button></li>`;
  }).join("");
  for (const button of list.querySelectorAll("button")) {
    button.addEventListener("click", () => { editor.text = entries[Number(button.dataset.index)].text; });
  }
}
