// Prefixes offered in the editor. The store keeps no prefix table, so the list
// is a fixed set of common vocabularies plus the namespaces of the predicates
// the store actually holds, found by one small query and cut at the last # or /.

import { selectJson } from "./sparql-client.js";
import { tokenize } from "./sparql-syntax.js";

const COMMON = {
  rdf: "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
  rdfs: "http://www.w3.org/2000/01/rdf-schema#",
  xsd: "http://www.w3.org/2001/XMLSchema#",
  owl: "http://www.w3.org/2002/07/owl#",
  skos: "http://www.w3.org/2004/02/skos/core#",
  dcterms: "http://purl.org/dc/terms/",
  foaf: "http://xmlns.com/foaf/0.1/",
  schema: "http://schema.org/",
  prov: "http://www.w3.org/ns/prov#",
  sosa: "http://www.w3.org/ns/sosa/",
  geo: "http://www.opengis.net/ont/geosparql#",
  time: "http://www.w3.org/2006/time#",
};

// predicates of the default graph and of every named graph; LIMIT keeps it cheap
const PREDICATES = `SELECT DISTINCT ?p WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } } LIMIT 200`;

/** The known prefixes, `[{name, iri, found}]`; `found` marks those seen in the store. */
export let known = Object.entries(COMMON).map(([name, iri]) => ({ name, iri, found: false }));

/** Add the store's namespaces to `known`; resolves to the new list. */
export async function discover() {
  const json = await selectJson(PREDICATES);
  const namespaces = new Set(json.results.bindings.map((b) => namespaceOf(b.p.value)).filter(Boolean));
  const list = known.map((p) => ({ ...p, found: namespaces.has(p.iri) }));
  const taken = new Set(list.map((p) => p.name));
  for (const iri of namespaces) {
    if (list.some((p) => p.iri === iri)) continue;
    const name = unique(nameFor(iri), taken);
    taken.add(name);
    list.push({ name, iri, found: true });
  }
  // the store's own namespaces first: they are the ones a query here needs
  known = list.sort((a, b) => Number(b.found) - Number(a.found));
  return known;
}

/** The `PREFIX name: <iri>` declarations of a query, `[{name, iri}]`. */
export function declaredIn(text) {
  const tokens = tokenize(text).filter((t) => t.type !== "space" && t.type !== "comment");
  const declared = [];
  tokens.forEach((t, i) => {
    const [pname, iri] = [tokens[i + 1], tokens[i + 2]];
    if (t.text.toUpperCase() === "PREFIX" && pname?.type === "pname" && iri?.type === "iri") {
      declared.push({ name: pname.text.slice(0, -1), iri: iri.text.slice(1, -1) });
    }
  });
  return declared;
}

/**
 * The known prefixes (`[{name, iri}]`) that `text` uses in prefixed names
 * without declaring them: a query that uses `rivers:` with its chip on screen
 * gets the declaration instead of a 400.
 */
export function undeclared(text) {
  const declared = new Set(declaredIn(text).map((p) => p.name));
  const used = new Set(tokenize(text).filter((t) => t.type === "pname").map((t) => t.text.split(":")[0]));
  return known.filter((p) => used.has(p.name) && !declared.has(p.name));
}

/** The known prefix names that start with `partial`, shortest first. */
export function completions(partial) {
  return known.map((p) => p.name).filter((name) => name.startsWith(partial))
    .sort((a, b) => a.length - b.length || a.localeCompare(b));
}

/**
 * `prefix:local` for an IRI under one of `prefixes` (the longest namespace
 * wins, the earlier entry on a tie), else null.
 */
export function compact(iri, prefixes = known) {
  let best = null;
  for (const p of prefixes) {
    if (iri.startsWith(p.iri) && (!best || p.iri.length > best.iri.length)) best = p;
  }
  if (!best) return null;
  const local = iri.slice(best.iri.length);
  return /^[\p{L}\p{N}_-]*$/u.test(local) ? `${best.name}:${local}` : null;
}

function namespaceOf(iri) {
  const cut = Math.max(iri.lastIndexOf("#"), iri.lastIndexOf("/"));
  return cut > iri.indexOf("://") + 2 ? iri.slice(0, cut + 1) : null;
}

/** A prefix name from the namespace's last path segment: .../rivers/ gives "rivers". */
function nameFor(iri) {
  const segments = iri.replace(/^[a-z]+:\/\//i, "").split(/[/#]/).filter(Boolean);
  const last = segments.length > 1 ? segments.at(-1) : segments[0].split(".")[0];
  const name = last.toLowerCase().replace(/[^a-z0-9_-]/g, "").replace(/^[^a-z]+/, "");
  return name || "ns";
}

function unique(name, taken) {
  let candidate = name;
  for (let i = 2; taken.has(candidate); i++) candidate = `${name}${i}`;
  return candidate;
}
