// The console's only way to the server: the public HTTP API (docs/http-api.md).
// URLs are relative, so the console works wherever the app is mounted.

/** A non-2xx answer; `message` is the server's one line of text. */
class ServerError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }

  /** The parser's `line L, column C`, or null when the message has none. */
  get position() {
    const m = /line (\d+), column (\d+)/.exec(this.message);
    return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
  }
}

// a server started with --update-token wants `Authorization: Bearer <token>` on
// writes; the console keeps the token for this tab only (sessionStorage)
const TOKEN_KEY = "rivulet.updateToken";

/** The bearer token the console sends, or null. */
export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

async function send(url, init = {}) {
  const bearer = token();
  if (bearer) init = { ...init, headers: { ...(init.headers ?? {}), Authorization: `Bearer ${bearer}` } };
  const response = await fetch(url, init);
  if (!response.ok) throw new ServerError(response.status, (await response.text()).trim());
  return response;
}

// SELECT and ASK can be SPARQL JSON, CONSTRUCT and DESCRIBE cannot: asking for
// both lets the server pick by the query's form, so the console needs no parser
const QUERY_ACCEPT = "application/sparql-results+json, text/turtle;q=0.9";

/**
 * Run a query: `{kind: "table"|"boolean", json}` or `{kind: "graph", turtle}`.
 * Aborting `signal` closes the connection, and the server stops the query.
 */
export async function runQuery(text, signal = undefined) {
  const response = await send("sparql", {
    method: "POST",
    headers: { "Content-Type": "application/sparql-query", Accept: QUERY_ACCEPT },
    body: text,
    signal,
  });
  if ((response.headers.get("Content-Type") ?? "").startsWith("text/turtle")) {
    return { kind: "graph", turtle: await response.text() };
  }
  const json = await response.json();
  return "boolean" in json ? { kind: "boolean", json } : { kind: "table", json };
}

/** SPARQL JSON results of a SELECT. */
export async function selectJson(text) {
  const response = await send("sparql", {
    method: "POST",
    headers: { "Content-Type": "application/sparql-query", Accept: "application/sparql-results+json" },
    body: text,
  });
  return response.json();
}

export async function runUpdate(text, signal = undefined) {
  await send("sparql", { method: "POST", headers: { "Content-Type": "application/sparql-update" }, body: text, signal });
}

/** The query's results in a named format (`csv`, `tsv`, `json`, `turtle`, `nt`, `jsonld`, ...) as a Blob. */
export async function resultsAs(text, format) {
  const response = await send("sparql", { method: "POST", body: new URLSearchParams({ query: text, format }) });
  return response.blob();
}

/** Register a continuous query; resolves to its description (`name`, `windows`, ...). */
export async function register(text, signal = undefined) {
  const response = await send("queries", {
    method: "POST",
    headers: { "Content-Type": "application/sparql-query" },
    body: text,
    signal,
  });
  return response.json();
}

/** A registered query's description (`windows_reported`, `next_window_close`, ...). */
export async function describeQuery(name) {
  return (await send(`queries/${encodeURIComponent(name)}`, {})).json();
}

export async function unregister(name) {
  await send(`queries/${encodeURIComponent(name)}`, { method: "DELETE" });
}

/** Drop a stream (the server refuses with 409 while a query reads or writes it). */
export async function dropStream(name) {
  await send(`streams/${encodeURIComponent(name)}`, { method: "DELETE" });
}

export async function listStreams() {
  return (await (await send("streams")).json()).streams;
}

export async function listQueries() {
  return (await (await send("queries")).json()).queries;
}

/** The query's event stream; with `after`, it starts with the windows after that sequence number. */
export function eventsUrl(name, after = null) {
  const url = `queries/${encodeURIComponent(name)}/events`;
  return after === null ? url : `${url}?last_event_id=${after}`;
}
