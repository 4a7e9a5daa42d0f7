// A continuous query's live view: its windows arrive over Server-Sent Events
// (EventSource) and are shown as they come: the latest window's rows, a log
// of windows, a chart of rows per window and of delay after window close, and
// a chart of the values of a numeric column. Until a window arrives it shows
// where the query stands (windows reported so far, when the next one closes).

import { drawChart, drawValues } from "./chart.js";
import { compact } from "./prefixes.js";
import { isNumber, ResultTable } from "./results.js";
import { escapeHtml } from "./sparql-syntax.js";
import { describeQuery, eventsUrl, unregister } from "./sparql-client.js";

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
    this.series = new Map(); // row label -> [{sequence, value}] of the numeric column
    this.valueVariable = null;
    this.reportedBefore = 0; // windows reported before this view opened: replayed, not timed
    this.onError = onError;
    this.onGone = onGone;
    this.source = null;
    this.gone = false;
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
        <div class="live-latest"><p class="hint live-state">Asking the server where the query stands…</p></div>
        <div class="live-side">
          <svg class="live-chart" role="img" aria-label="rows per window and delay"></svg>
          <svg class="live-chart live-values" role="img" aria-label="values of a numeric column per window"></svg>
          <ol class="window-log"></ol>
        </div>
      </div>`;
    container.prepend(this.card);
    this.status = this.card.querySelector(".live-status");
    this.card.querySelector(".unregister").addEventListener("click", () => this.unregister());
    drawChart(this.card.querySelector(".live-chart"), this.points);
    // until a window has a numeric column (an <svg> has no `hidden` property: the attribute)
    this.card.querySelector(".live-values").setAttribute("hidden", "");
    this.connect();
  }

  /** Show the query's state, then listen, starting with its latest window if it has one. */
  async connect() {
    let after = null;
    try {
      const description = await describeQuery(this.name);
      this.reportedBefore = description.windows_reported;
      this.showState(description);
      // the latest window the server retains comes first, at once, instead of after the next close
      if (description.windows_reported > 0) after = description.windows_reported - 1;
    } catch (error) {
      if (error.status !== 404) this.onError(error);
    }
    if (this.gone) return; // unregistered meanwhile
    this.source = new EventSource(eventsUrl(this.name, after));
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

  /** Where the query stands, from its description, until a window arrives. */
  showState(description) {
    const reported = description.windows_reported;
    const next = description.next_window_close;
    const counted = description.windows.some((w) => w.triples != null);
    const done = reported ? `${reported} ${reported === 1 ? "window" : "windows"} reported so far`
      : "No window has closed yet";
    let when = "its windows start with the first item of its streams";
    if (next != null) {
      when = counted ? `the next closes with item ${next} of its stream`
        : `the next closes at ${time(next)} UTC (application time), when the stream's watermark passes it`;
    }
    this.card.querySelector(".live-latest").innerHTML = `<p class="hint live-state">${escapeHtml(done)}; ${escapeHtml(when)}.</p>`;
  }

  setStatus(state, text) {
    this.status.textContent = text;
    this.status.dataset.state = state;
  }

  receive(event) {
    // the delay a user sees: from the item that closed the window reaching the
    // server to the rows reaching this page (same clock when both run here);
    // a window reported before the view opened has none worth showing
    const replayed = event.sequence <= this.reportedBefore;
    const delay = replayed ? null : Date.now() - event.closed_at_ms;
    if (!replayed) this.points.push({ sequence: event.sequence, rows: event.rows, delay });
    this.setStatus("live", `window ${event.sequence}`);

    const latest = this.card.querySelector(".live-latest");
    latest.innerHTML = `<p class="window-title">Window ${event.sequence}:
      ${time(event.window.start_ms)} – ${time(event.window.end_ms)} UTC · ${rows(event.rows)}</p><div></div>`;
    new ResultTable(latest.lastElementChild, event.results, { pageSize: 10, prefixes: this.prefixes, tools: false });

    const item = document.createElement("li");
    item.dataset.sequence = event.sequence;
    item.textContent = `#${event.sequence} ends ${time(event.window.end_ms)}: ${rows(event.rows)}, `
      + (replayed ? "reported before you listened" : `${Math.round(delay)} ms after close`);
    this.logItem(item);
    drawChart(this.card.querySelector(".live-chart"), this.points);
    this.followValues(event);
  }

  /** Add the window's values of its numeric column (the first column holding numbers) to the second chart. */
  followValues(event) {
    const bindings = event.results?.results?.bindings;
    const vars = event.results?.head?.vars ?? [];
    if (!bindings?.length) return;
    this.valueVariable ??= vars.find((v) => bindings.every((row) => !row[v] || isNumber(row[v]))
      && bindings.some((row) => isNumber(row[v]))) ?? null;
    const variable = this.valueVariable;
    if (variable === null) return;
    const labelVariable = vars.find((v) => v !== variable);
    for (const row of bindings) {
      if (!isNumber(row[variable])) continue;
      const term = labelVariable ? row[labelVariable] : null;
      const label = !term ? variable : term.type === "uri" ? compact(term.value, this.prefixes) ?? term.value : term.value;
      if (!this.series.has(label)) this.series.set(label, []);
      this.series.get(label).push({ sequence: event.sequence, value: Number(row[variable].value) });
    }
    const svg = this.card.querySelector(".live-values");
    svg.removeAttribute("hidden");
    drawValues(svg, this.series, variable);
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
    this.gone = true;
    this.source?.close();
    this.card.remove();
    this.onGone(this.name);
  }
}
