// A continuous query's live view: its windows arrive over Server-Sent Events
// (EventSource) and are shown as they come: the latest window's rows, a log
// of windows, and a chart of rows per window and of delay after window close.

import { drawChart } from "./chart.js";
import { ResultTable } from "./results.js";
import { escapeHtml } from "./sparql-syntax.js";
import { eventsUrl, unregister } from "./sparql-client.js";

const LOG_LENGTH = 12;

const time = (ms) => new Date(ms).toISOString().slice(11, 23);
const rows = (n) => `${n} ${n === 1 ? "row" : "rows"}`;

export class LiveQuery {
  /**
   * Opens the view for the registered query `name` as a new card in
   * `container`; `prefixes` shorten the IRIs of its results.
   */
  constructor(container, name, { prefixes, onError, onGone }) {
    this.name = name;
    this.prefixes = prefixes;
    this.points = [];
    this.onError = onError;
    this.onGone = onGone;
    this.card = document.createElement("section");
    this.card.className = "live-query";
    this.card.dataset.name = name;
    this.card.innerHTML = `
      <header>
        <h3>${escapeHtml(name)}</h3>
        <span class="live-status">connecting…</span>
        <button type="button" class="unregister">Unregister</button>
      </header>
      <div class="live-body">
        <div class="live-latest"><p class="hint">Waiting for the first window to close…</p></div>
        <div class="live-side">
          <svg class="live-chart" role="img" aria-label="rows per window and delay"></svg>
          <ol class="window-log"></ol>
        </div>
      </div>`;
    container.prepend(this.card);
    this.status = this.card.querySelector(".live-status");
    this.card.querySelector(".unregister").addEventListener("click", () => this.unregister());
    drawChart(this.card.querySelector(".live-chart"), this.points);

    this.source = new EventSource(eventsUrl(name));
    this.source.addEventListener("open", () => this.setStatus("live", "listening"));
    // EventSource reconnects by itself (sending Last-Event-ID, so no window is lost);
    // it gives up only when the query is gone (404), which closes it
    this.source.addEventListener("error", () => {
      if (this.source.readyState === EventSource.CLOSED) this.setStatus("closed", "closed");
      else this.setStatus("retrying", "reconnecting…");
    });
    this.source.addEventListener("window", (event) => this.receive(JSON.parse(event.data)));
    // a window whose evaluation failed (over the server's time or row limit)
    this.source.addEventListener("window-error", (event) => this.failed(JSON.parse(event.data)));
  }

  setStatus(state, text) {
    this.status.textContent = text;
    this.status.dataset.state = state;
  }

  receive(event) {
    // the delay a user sees: from the item that closed the window reaching the
    // server to the rows reaching this page (same clock when both run here)
    const delay = Date.now() - event.closed_at_ms;
    this.points.push({ sequence: event.sequence, rows: event.rows, delay });
    this.setStatus("live", `window ${event.sequence}`);

    const latest = this.card.querySelector(".live-latest");
    latest.innerHTML = `<p class="window-title">Window ${event.sequence}:
      ${time(event.window.start_ms)} – ${time(event.window.end_ms)} UTC · ${rows(event.rows)}</p><div></div>`;
    new ResultTable(latest.lastElementChild, event.results, { pageSize: 10, prefixes: this.prefixes });

    const item = document.createElement("li");
    item.dataset.sequence = event.sequence;
    item.textContent = `#${event.sequence} ends ${time(event.window.end_ms)}: ${rows(event.rows)}, `
      + `${Math.round(delay)} ms after close`;
    this.logItem(item);
    drawChart(this.card.querySelector(".live-chart"), this.points);
  }

  failed(event) {
    this.setStatus("live", `window ${event.sequence} failed`);
    const item = document.createElement("li");
    item.dataset.sequence = event.sequence;
    item.className = "window-failed";
    item.textContent = `#${event.sequence} ends ${time(event.window.end_ms)}: failed, ${event.error.message}`;
    this.logItem(item);
  }

  logItem(item) {
    const log = this.card.querySelector(".window-log");
    log.prepend(item);
    while (log.childElementCount > LOG_LENGTH) log.lastElementChild.remove();
  }

  async unregister() {
    try {
      await unregister(this.name);
    } catch (error) {
      // already gone (404) is what we wanted; anything else is worth showing
      if (error.status !== 404) {
        this.onError(error);
        return;
      }
    }
    this.source.close();
    this.card.remove();
    this.onGone(this.name);
  }
}
