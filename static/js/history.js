// Recent queries, kept in this browser's localStorage (never on the server).

const KEY = "rivulet.history";
const LIMIT = 30;

/** `[{text, at}]`, newest first. */
export function load() {
  try {
    const list = JSON.parse(localStorage.getItem(KEY) ?? "[]");
    return Array.isArray(list) ? list : [];
  } catch {
    return []; // written by something else, or by hand: start afresh
  }
}

/** Remember `text` (moved to the top if it was there already). */
export function remember(text) {
  const list = [{ text, at: Date.now() }, ...load().filter((entry) => entry.text !== text)].slice(0, LIMIT);
  try {
    localStorage.setItem(KEY, JSON.stringify(list));
  } catch {
    // storage full or disabled (private mode): history is a convenience, carry on without it
  }
  return list;
}
