// A small SPARQL (and C-SPARQL / RSP-QL) tokenizer. It only has to be good
// enough to colour the editor and to tell what kind of request the text is;
// the server's parser remains the judge of what is valid.

const KEYWORDS = new Set(`
  BASE PREFIX SELECT DISTINCT REDUCED AS CONSTRUCT DESCRIBE ASK FROM NAMED WHERE
  GROUP BY HAVING ORDER ASC DESC LIMIT OFFSET VALUES OPTIONAL GRAPH SERVICE SILENT
  BIND UNDEF MINUS UNION FILTER NOT IN EXISTS LOAD CLEAR DROP CREATE ADD MOVE COPY
  TO INTO DATA INSERT DELETE WITH USING DEFAULT ALL TRUE FALSE
  REGISTER QUERY STREAM RSTREAM ISTREAM DSTREAM WINDOW ON RANGE STEP TUMBLING TRIPLES
`.trim().split(/\s+/));

const FUNCTIONS = new Set(`
  COUNT SUM MIN MAX AVG SAMPLE GROUP_CONCAT SEPARATOR STR LANG LANGMATCHES DATATYPE
  BOUND IRI URI BNODE RAND ABS CEIL FLOOR ROUND CONCAT STRLEN UCASE LCASE ENCODE_FOR_URI
  CONTAINS STRSTARTS STRENDS STRBEFORE STRAFTER YEAR MONTH DAY HOURS MINUTES SECONDS
  TIMEZONE TZ NOW UUID STRUUID MD5 SHA1 SHA256 SHA384 SHA512 COALESCE IF STRLANG STRDT
  SAMETERM ISIRI ISURI ISBLANK ISLITERAL ISNUMERIC REGEX SUBSTR REPLACE
`.trim().split(/\s+/));

// One alternative per token class, tried in this order at each position (sticky).
// An unterminated string or IRI runs to the end of its line, so that typing one
// colours only the line being edited.
const TOKEN = new RegExp([
  /(#[^\n]*)/,                                                       // 1 comment
  /("""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)/, // 2 string
  /(<[^<>"{}|^`\\\s]*>)/,                                            // 3 IRI
  /([?$][\p{L}\p{N}_\u00B7]+)/,                                      // 4 variable
  /(@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*)/,                                  // 5 language tag
  /((?:[\p{L}][\p{L}\p{N}_.-]*)?:(?:[\p{L}\p{N}_\-:%]|\.(?=[\p{L}\p{N}_\-:%]))*)/, // 6 prefixed name
  /([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/,                      // 7 number
  /([\p{L}_][\p{L}\p{N}_]*)/,                                        // 8 word
  /(\s+)/,                                                           // 9 space
  /([\s\S])/,                                                        // 10 anything else
].map((r) => r.source).join("|"), "guy");

const CLASSES = [null, "comment", "string", "iri", "var", "lang", "pname", "number", "word", "space", "punct"];

/** Split `text` into tokens `{type, text, start}`; words become "keyword", "function" or "word". */
export function tokenize(text) {
  const tokens = [];
  TOKEN.lastIndex = 0;
  let m;
  while (TOKEN.lastIndex < text.length && (m = TOKEN.exec(text))) {
    const group = m.findIndex((g, i) => i > 0 && g !== undefined);
    let type = CLASSES[group];
    if (type === "word") {
      const upper = m[0].toUpperCase();
      if (KEYWORDS.has(upper) || m[0] === "a") type = "keyword";
      else if (FUNCTIONS.has(upper)) type = "function";
    } else if (type === "lang" && /^@(prefix|base)$/.test(m[0])) {
      type = "keyword"; // Turtle's directives, in graph results
    }
    tokens.push({ type, text: m[0], start: m.index });
  }
  return tokens;
}

/**
 * What the text asks for: "query" (SELECT, ASK, CONSTRUCT, DESCRIBE),
 * "registration" (a continuous query) or "update", decided by the first
 * keyword after the prologue's PREFIX and BASE declarations.
 */
export function requestKind(text) {
  const tokens = tokenize(text).filter((t) => t.type !== "space" && t.type !== "comment");
  for (let i = 0; i < tokens.length; i++) {
    const word = tokens[i].text.toUpperCase();
    if (word === "PREFIX") i += 2;
    else if (word === "BASE") i += 1;
    else if (["SELECT", "ASK", "CONSTRUCT", "DESCRIBE"].includes(word)) return "query";
    else if (word === "REGISTER") return "registration";
    else return "update";
  }
  return "query";
}

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
export const escapeHtml = (s) => s.replace(/[&<>"]/g, (c) => ESCAPES[c]);

/**
 * Highlighted HTML for `text`. `mark`, a character offset, is wrapped in a
 * <mark> (the position of a syntax error); at a line end or the very end it
 * marks an inserted space so that the position stays visible.
 */
export function highlight(text, mark = -1) {
  let html = "";
  for (const token of tokenize(text)) {
    const end = token.start + token.text.length;
    const open = token.type === "space" ? "" : `<span class="tok-${token.type}">`;
    const close = open ? "</span>" : "";
    if (mark >= token.start && mark < end) {
      const at = mark - token.start;
      const char = token.text[at] === "\n" ? " \n" : token.text[at];
      html += open + escapeHtml(token.text.slice(0, at)) + close
        + `<mark class="error-at">${escapeHtml(char[0])}</mark>`
        + open + escapeHtml(char.slice(1) + token.text.slice(at + 1)) + close;
    } else {
      html += open + escapeHtml(token.text) + close;
    }
  }
  if (mark >= text.length) html += '<mark class="error-at"> </mark>';
  return html;
}
