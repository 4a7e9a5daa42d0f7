// A small two-scale chart, drawn as inline SVG: bars for the rows of each
// window (left scale) and a line for the delay from window close to arrival
// in the browser (right scale). The last WINDOWS windows are shown.

const WINDOWS = 30;
const W = 360;
const H = 120;
const PAD = { left: 34, right: 44, top: 14, bottom: 18 };

/** Draw `points` (`[{sequence, rows, delay}]`, oldest first) into the <svg> `svg`. */
export function drawChart(svg, points) {
  const shown = points.slice(-WINDOWS);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const maxRows = niceCeiling(Math.max(1, ...shown.map((p) => p.rows)));
  const maxDelay = niceCeiling(Math.max(1, ...shown.map((p) => p.delay)));
  const slot = plotW / WINDOWS;
  const x = (i) => PAD.left + i * slot;
  const yRows = (v) => PAD.top + plotH * (1 - v / maxRows);
  const yDelay = (v) => PAD.top + plotH * (1 - Math.max(0, v) / maxDelay);

  const bars = shown.map((p, i) => {
    const top = yRows(p.rows);
    return `<rect class="bar" x="${x(i) + 1}" y="${top}" width="${Math.max(1, slot - 2)}"`
      + ` height="${PAD.top + plotH - top}"><title>window ${p.sequence}: ${p.rows} rows</title></rect>`;
  }).join("");
  const coords = shown.map((p, i) => `${x(i) + slot / 2},${yDelay(p.delay)}`);
  const dots = shown.map((p, i) => `<circle class="delay-dot" cx="${x(i) + slot / 2}" cy="${yDelay(p.delay)}" r="2">`
    + `<title>window ${p.sequence}: ${Math.round(p.delay)} ms after close</title></circle>`).join("");
  const bottom = PAD.top + plotH;

  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.innerHTML = `
    <line class="axis" x1="${PAD.left}" y1="${bottom}" x2="${W - PAD.right}" y2="${bottom}"/>
    <line class="axis" x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${bottom}"/>
    <line class="axis" x1="${W - PAD.right}" y1="${PAD.top}" x2="${W - PAD.right}" y2="${bottom}"/>
    <text class="label rows-label" x="${PAD.left - 4}" y="${PAD.top + 4}" text-anchor="end">${maxRows}</text>
    <text class="label rows-label" x="${PAD.left - 4}" y="${bottom}" text-anchor="end">0</text>
    <text class="label delay-label" x="${W - PAD.right + 4}" y="${PAD.top + 4}">${maxDelay} ms</text>
    <text class="label delay-label" x="${W - PAD.right + 4}" y="${bottom}">0</text>
    <text class="label" x="${PAD.left}" y="${H - 4}">rows per window ▮</text>
    <text class="label delay-label" x="${W - PAD.right}" y="${H - 4}" text-anchor="end">● delay close→arrival</text>
    ${bars}
    <polyline class="delay-line" points="${coords.join(" ")}"/>
    ${dots}`;
}

/** 1, 2 or 5 times a power of ten, at least `v`: round numbers for the scales. */
function niceCeiling(v) {
  const power = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * power).find((c) => c >= v);
}
