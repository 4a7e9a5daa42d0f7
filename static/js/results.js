// Result views: a table for SPARQL JSON results (sorted by a click on a
// column's head, filtered, paged), a verdict for ASK, and highlighted Turtle
// for graphs. It all happens here: the whole answer is already in memory as
// JSON, and a page of DOM rows keeps big answers fast.

import { compact, known } from "./prefixes.js";
import { escapeHtml, highlight } from "./sparql-syntax.js";

const XSD = "http://www.w3.org/2001/XMLSchema#";
/** The XSD number types: their literals show as plain numbers, as in SPARQL's own syntax. */
const NUMBER_TYPES = new Set(["integer", "decimal", "double", "float", "int", "long", "short", "byte",
  "nonNegativeInteger", "positiveInteger", "negativeInteger", "nonPositiveInteger",
  "unsignedInt", "unsignedLong", "unsignedShort", "unsignedByte"].map((t) => XSD + t));
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
export const PAGE_SIZES = [10, 50, 100, 500];

/** Whether a SPARQL JSON term is a well-formed literal of an XSD number type. */
export function isNumber(term) {
  return term?.type === "literal" && NUMBER_TYPES.has(term.datatype) && NUMBER.test(term.value);
}

/** One RDF term of SPARQL JSON as HTML, IRIs shortened with `prefixes`. */
export function termHtml(term, prefixes = known) {
  if (!term) return "";
  if (term.type === "triple") {  // SPARQL 1.2: a triple term, its components as terms
    const { subject, predicate, object } = term.value;
    return `&lt;&lt;( ${termHtml(subject, prefixes)} ${termHtml(predicate, prefixes)} ${termHtml(object, prefixes)} )&gt;&gt;`;
  }
  if (term.type === "uri") {
    const short = compact(term.value, prefixes);
    return `<span class="term-iri" title="${escapeHtml(term.value)}">${escapeHtml(short ?? `<${term.value}>`)}</span>`;
  }
  if (term.type === "bnode") return `<span class="term-bnode">_:${escapeHtml(term.value)}</span>`;
  if (isNumber(term)) {
    const type = compact(term.datatype, prefixes) ?? term.datatype;
    return `<span class="term-literal term-number" title="${escapeHtml(type)}">${escapeHtml(term.value)}</span>`;
  }
  let suffix = "";
  if (term["xml:lang"]) suffix = `@${term["xml:lang"]}`;
  else if (term.datatype && term.datatype !== `${XSD}string`) {
    suffix = `^^${compact(term.datatype, prefixes) ?? `<${term.datatype}>`}`;
  }
  return `<span class="term-literal">${escapeHtml(term.value)}</span>`
    + (suffix ? `<span class="term-type">${escapeHtml(suffix)}</span>` : "");
}

/** Order of two cells of one column: unbound last, numbers by value, the rest by their text. */
function compareTerms(a, b) {
  if (!a || !b) return (a ? 0 : 1) - (b ? 0 : 1);
  if (isNumber(a) && isNumber(b)) return Number(a.value) - Number(b.value);
  return a.value.localeCompare(b.value, undefined, { numeric: true });
}

/**
 * A table of SPARQL JSON `results` drawn into `container`; IRIs are
 * shortened with `prefixes` (`[{name, iri}]`). With `tools`, a filter box and
 * a page size choice come above it, and a click on a column's head sorts the
 * rows by it (a second click reverses the order).
 */
export class ResultTable {
  constructor(container, json, { pageSize = 50, prefixes = known, tools = true } = {}) {
    this.vars = json.head.vars ?? [];
    this.all = json.results.bindings;
    this.rows = this.all;
    this.pageSize = pageSize;
    this.prefixes = prefixes;
    this.page = 0;
    this.sort = null; // {variable, descending}
    this.filter = "";
    container.innerHTML = tools ? `
      <div class="table-tools">
        <input type="search" class="table-filter" placeholder="Filter rows" aria-label="Filter rows">
        <label>rows a page <select class="page-size">${PAGE_SIZES.map((n) =>
          `<option value="${n}" ${n === pageSize ? "selected" : ""}>${n}</option>`).join("")}</select></label>
      </div><div class="table-body"></div>` : `<div class="table-body"></div>`;
    this.body = container.querySelector(".table-body");
    container.querySelector(".table-filter")?.addEventListener("input", (event) => {
      this.filter = event.target.value.trim().toLowerCase();
      this.arrange();
    });
    container.querySelector(".page-size")?.addEventListener("change", (event) => {
      this.pageSize = Number(event.target.value);
      this.page = 0;
      this.draw();
    });
    this.tools = tools;
    this.draw();
  }

  get pages() { return Math.max(1, Math.ceil(this.rows.length / this.pageSize)); }

  /** Filter, then sort, the rows; back to the first page. */
  arrange() {
    const wanted = this.filter;
    let rows = wanted ? this.all.filter((row) => this.vars.some((v) => {
      const term = row[v];
      if (!term) return false;
      const shown = term.type === "uri" ? compact(term.value, this.prefixes) ?? term.value : term.value;
      return shown.toLowerCase().includes(wanted) || term.value.toLowerCase().includes(wanted);
    })) : this.all;
    if (this.sort) {
      const { variable, descending } = this.sort;
      rows = [...rows].sort((a, b) => (descending ? -1 : 1) * compareTerms(a[variable], b[variable]));
    }
    this.rows = rows;
    this.page = 0;
    this.draw();
  }

  sortBy(variable) {
    const descending = this.sort?.variable === variable && !this.sort.descending;
    this.sort = { variable, descending };
    this.arrange();
  }

  draw() {
    const first = this.page * this.pageSize;
    const rows = this.rows.slice(first, first + this.pageSize);
    const mark = (v) => (this.sort?.variable === v ? (this.sort.descending ? " ▼" : " ▲") : "");
    const head = this.vars.map((v) => `<th data-variable="${escapeHtml(v)}"${this.tools ? ' class="sortable" title="sort by this column"' : ""}>?${escapeHtml(v)}${mark(v)}</th>`).join("");
    const body = rows.map((row, i) => `<tr><td class="row-number">${first + i + 1}</td>`
      + this.vars.map((v) => `<td>${termHtml(row[v], this.prefixes)}</td>`).join("") + "</tr>").join("");
    const of = this.rows.length === this.all.length ? `${this.all.length}` : `${this.rows.length} (filtered from ${this.all.length})`;
    const range = this.rows.length ? `rows ${first + 1}–${first + rows.length} of ${of}` : (this.all.length ? `no rows match (of ${this.all.length})` : "no rows");
    this.body.innerHTML = `
      <table class="results"><thead><tr><th class="row-number">#</th>${head}</tr></thead>
      <tbody>${body}</tbody></table>
      <div class="pager">
        <button type="button" data-page="prev" ${this.page === 0 ? "disabled" : ""}>‹ Previous</button>
        <span class="page-info">${range} · page ${this.page + 1} of ${this.pages}</span>
        <button type="button" data-page="next" ${this.page + 1 >= this.pages ? "disabled" : ""}>Next ›</button>
      </div>`;
    this.body.querySelector(".pager").hidden = this.pages === 1 && this.rows.length === this.all.length;
    for (const button of this.body.querySelectorAll("[data-page]")) {
      button.addEventListener("click", () => {
        this.page += button.dataset.page === "next" ? 1 : -1;
        this.draw();
      });
    }
    if (this.tools) {
      for (const cell of this.body.querySelectorAll("th[data-variable]")) {
        cell.addEventListener("click", () => this.sortBy(cell.dataset.variable));
      }
    }
  }
}

export function showBoolean(container, value) {
  container.innerHTML = `<p class="verdict verdict-${value}">${value ? "true" : "false"}</p>`;
}

export function showTurtle(container, turtle) {
  container.innerHTML = `<pre class="turtle">${highlight(turtle)}</pre>`;
}
