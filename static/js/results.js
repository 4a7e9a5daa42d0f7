// Result views: a paged table for SPARQL JSON results, a verdict for ASK, and
// highlighted Turtle for graphs. Paging is client-side: the whole answer is
// already in memory as JSON, and a page of DOM rows keeps big answers fast.

import { compact, known } from "./prefixes.js";
import { escapeHtml, highlight } from "./sparql-syntax.js";

const XSD = "http://www.w3.org/2001/XMLSchema#";

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
  let suffix = "";
  if (term["xml:lang"]) suffix = `@${term["xml:lang"]}`;
  else if (term.datatype && term.datatype !== `${XSD}string`) {
    suffix = `^^${compact(term.datatype, prefixes) ?? `<${term.datatype}>`}`;
  }
  return `<span class="term-literal">${escapeHtml(term.value)}</span>`
    + (suffix ? `<span class="term-type">${escapeHtml(suffix)}</span>` : "");
}

/**
 * A table of SPARQL JSON `results` with paging controls, drawn into
 * `container`; IRIs are shortened with `prefixes` (`[{name, iri}]`).
 */
export class ResultTable {
  constructor(container, json, { pageSize = 50, prefixes = known } = {}) {
    this.container = container;
    this.vars = json.head.vars ?? [];
    this.rows = json.results.bindings;
    this.pageSize = pageSize;
    this.prefixes = prefixes;
    this.page = 0;
    this.draw();
  }

  get pages() { return Math.max(1, Math.ceil(this.rows.length / this.pageSize)); }

  draw() {
    const first = this.page * this.pageSize;
    const rows = this.rows.slice(first, first + this.pageSize);
    const head = this.vars.map((v) => `<th>?${escapeHtml(v)}</th>`).join("");
    const body = rows.map((row, i) => `<tr><td class="row-number">${first + i + 1}</td>`
      + this.vars.map((v) => `<td>${termHtml(row[v], this.prefixes)}</td>`).join("") + "</tr>").join("");
    const range = this.rows.length ? `rows ${first + 1}–${first + rows.length} of ${this.rows.length}` : "no rows";
    this.container.innerHTML = `
      <table class="results"><thead><tr><th class="row-number">#</th>${head}</tr></thead>
      <tbody>${body}</tbody></table>
      <div class="pager">
        <button type="button" data-page="prev" ${this.page === 0 ? "disabled" : ""}>‹ Previous</button>
        <span class="page-info">${range} · page ${this.page + 1} of ${this.pages}</span>
        <button type="button" data-page="next" ${this.page + 1 >= this.pages ? "disabled" : ""}>Next ›</button>
      </div>`;
    this.container.querySelector(".pager").hidden = this.pages === 1;
    for (const button of this.container.querySelectorAll("[data-page]")) {
      button.addEventListener("click", () => {
        this.page += button.dataset.page === "next" ? 1 : -1;
        this.draw();
      });
    }
  }
}

export function showBoolean(container, value) {
  container.innerHTML = `<p class="verdict verdict-${value}">${value ? "true" : "false"}</p>`;
}

export function showTurtle(container, turtle) {
  container.innerHTML = `<pre class="turtle">${highlight(turtle)}</pre>`;
}
