// The query editor: a plain <textarea> for typing (so selection, undo, IME and
// accessibility are the browser's own) laid exactly over a <pre> that shows the
// same text highlighted. The textarea's text is transparent; only its caret shows.

import { highlight } from "./sparql-syntax.js";

export class Editor {
  /**
   * `root` holds a textarea, a pre.editor-highlight and an ol.editor-gutter.
   * `complete(partial)` gives the one prefix (`{name, iri}`) whose name
   * completes the word before the caret (Tab then writes `name:` and declares
   * the prefix at the top), or null (Tab indents).
   */
  constructor(root, { onRun, complete = () => null }) {
    this.textarea = root.querySelector("textarea");
    this.view = root.querySelector(".editor-highlight");
    this.gutter = root.querySelector(".editor-gutter");
    this.mark = -1;
    this.textarea.addEventListener("input", () => { this.mark = -1; this.render(); });
    this.textarea.addEventListener("scroll", () => this.syncScroll());
    this.textarea.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        onRun();
      } else if (event.key === "Tab" && !event.shiftKey && !event.altKey) {
        // complete a prefix name, or indent instead of leaving the editor; Shift+Tab still moves focus on
        event.preventDefault();
        const { selectionStart: at, selectionEnd } = this.textarea;
        const partial = at === selectionEnd ? /(?:^|[\s({.;,])([\p{L}][\p{L}\p{N}_-]*)$/u.exec(this.textarea.value.slice(0, at)) : null;
        const prefix = partial ? complete(partial[1]) : null;
        if (prefix) {
          this.textarea.setRangeText(`${prefix.name}:`, at - partial[1].length, at, "end");
          this.addPrefix(prefix.name, prefix.iri);
        } else {
          this.textarea.setRangeText("  ", at, selectionEnd, "end");
        }
        this.render();
      }
    });
  }

  get text() { return this.textarea.value; }

  set text(value) {
    this.textarea.value = value;
    this.mark = -1;
    this.render();
  }

  render() {
    const text = this.textarea.value;
    // a final newline would collapse in the <pre>; the extra space keeps the last line's height
    this.view.innerHTML = highlight(text, this.mark) + "\n ";
    const lines = text.split("\n").length;
    if (this.gutter.childElementCount !== lines) {
      this.gutter.innerHTML = Array.from({ length: lines }, (_, i) => `<li>${i + 1}</li>`).join("");
    }
    this.syncScroll();
  }

  syncScroll() {
    this.view.scrollTop = this.textarea.scrollTop;
    this.view.scrollLeft = this.textarea.scrollLeft;
    this.gutter.scrollTop = this.textarea.scrollTop;
  }

  /**
   * Mark the server's error position (1-based line and column, counted in
   * characters, not UTF-16 units) and put the caret there.
   */
  markError(line, column) {
    const lines = this.textarea.value.split("\n");
    let offset = 0;
    for (let i = 0; i < Math.min(line - 1, lines.length); i++) offset += lines[i].length + 1;
    const current = lines[line - 1] ?? "";
    offset += Array.from(current).slice(0, Math.max(column - 1, 0)).join("").length;
    this.mark = offset;
    this.render();
    this.textarea.focus();
    this.textarea.setSelectionRange(offset, offset);
  }

  clearMark() {
    if (this.mark !== -1) { this.mark = -1; this.render(); }
  }

  /** Add `PREFIX name: <iri>` at the top unless the text declares `name:` already. */
  addPrefix(name, iri) {
    const declared = new RegExp(`^\\s*PREFIX\\s+${name}:`, "im");
    if (declared.test(this.textarea.value)) return;
    const line = `PREFIX ${name}: <${iri}>\n`;
    const { selectionStart, selectionEnd } = this.textarea;
    this.textarea.setRangeText(line, 0, 0);
    this.textarea.setSelectionRange(selectionStart + line.length, selectionEnd + line.length);
    this.mark = -1;
    this.render();
  }
}
