// The streams panel: declared streams (rate, watermark) and registered
// continuous queries, polled from GET /streams and GET /queries.

import { escapeHtml } from "./sparql-syntax.js";
import { listQueries, listStreams } from "./sparql-client.js";

const POLL_MS = 2000;

const watermark = (ms) => (ms == null ? "none yet" : new Date(ms).toISOString().replace("T", " ").slice(0, 23));

/** A C-SPARQL registration over `stream` for the editor to start from. */
export function template(stream) {
  const name = `live_${stream.name.replace(/[^A-Za-z0-9_]/g, "_")}`;
  return `REGISTER QUERY ${name} AS
SELECT ?s ?p ?o
FROM STREAM <${stream.iri}> [RANGE 10s STEP 5s]
WHERE { ?s ?p ?o }
`;
}

// what each panel element shows now, so that a poll that changed nothing
// leaves the DOM alone and never swaps a button from under a click
const shown = new WeakMap();

/** Set `element`'s HTML if it differs from what it shows; says whether it did. */
function show(element, html) {
  if (shown.get(element) === html) return false;
  shown.set(element, html);
  element.innerHTML = html;
  return true;
}

export class StreamsPanel {
  /**
   * `streamsEl` and `queriesEl` are filled on every poll. `onTemplate(stream)`
   * is called by a stream's "New query" button, `onDrop(name)` by its "Drop"
   * button, `onListen(name, text)` and
   * `onUnregister(name)` by a query's buttons; `isOpen(name)` says whether a
   * query's live view is open already.
   */
  constructor(streamsEl, queriesEl, handlers) {
    this.streamsEl = streamsEl;
    this.queriesEl = queriesEl;
    this.handlers = handlers;
  }

  start() {
    this.poll();
    setInterval(() => this.poll(), POLL_MS);
  }

  async poll() {
    try {
      const [streams, queries] = await Promise.all([listStreams(), listQueries()]);
      this.drawStreams(streams);
      this.drawQueries(queries);
    } catch (error) {
      show(this.streamsEl, `<p class="error-text">Cannot list streams: ${escapeHtml(error.message)}</p>`);
    }
  }

  drawStreams(streams) {
    if (!streams.length) {
      show(this.streamsEl, `<p class="hint">No streams declared. <code>PUT /streams/NAME</code> declares one.</p>`);
      return;
    }
    const html = streams.map((s, i) => `
      <div class="stream" data-name="${escapeHtml(s.name)}">
        <div class="stream-head"><strong>${escapeHtml(s.name)}</strong>
          <span class="stream-actions">
            <button type="button" data-template="${i}" title="Put a continuous query over this stream into the editor">New query</button>
            <button type="button" data-drop="${i}" title="Drop this stream (its stored graph stays)">Drop</button></span></div>
        <div class="stream-iri" title="stream IRI">${escapeHtml(s.iri)}</div>
        <dl>
          <dt>rate</dt><dd class="stream-rate">${s.rate_triples_per_s.toFixed(1)} triples/s</dd>
          <dt>watermark</dt><dd class="stream-watermark">${watermark(s.watermark_ms)}</dd>
          <dt>items</dt><dd>${s.items} (${s.triples} triples, ${s.transient_triples} kept for windows)</dd>
        </dl>
      </div>`).join("");
    if (!show(this.streamsEl, html)) return;
    for (const button of this.streamsEl.querySelectorAll("[data-template]")) {
      button.addEventListener("click", () => this.handlers.onTemplate(streams[Number(button.dataset.template)]));
    }
    for (const button of this.streamsEl.querySelectorAll("[data-drop]")) {
      button.addEventListener("click", () => this.handlers.onDrop(streams[Number(button.dataset.drop)].name));
    }
  }

  drawQueries(queries) {
    if (!queries.length) {
      show(this.queriesEl, `<p class="hint">No continuous queries. Run a <code>REGISTER …</code> from the editor.</p>`);
      return;
    }
    const html = queries.map((q) => `
      <li data-name="${escapeHtml(q.name)}"><strong>${escapeHtml(q.name)}</strong>
        <span class="hint">${escapeHtml(q.language)} · ${q.windows_reported} windows</span>
        ${this.handlers.isOpen(q.name) ? "" : `<button type="button" data-listen>Listen</button>`}
        <button type="button" data-unregister>Unregister</button></li>`).join("");
    if (!show(this.queriesEl, html)) return;
    this.queriesEl.querySelectorAll("li").forEach((item, i) => {
      item.querySelector("[data-listen]")?.addEventListener("click",
        () => this.handlers.onListen(queries[i].name, queries[i].query));
      item.querySelector("[data-unregister]").addEventListener("click",
        () => this.handlers.onUnregister(queries[i].name));
    });
  }
}
