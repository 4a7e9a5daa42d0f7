// Two small charts, drawn as inline SVG. The first has two scales: bars for
// the rows of each window (left scale) and a line for the delay from window
// close to arrival in the browser (right scale). The second follows the values of one numeric
// column of the results, a line per row label. The last WINDOWS windows are shown.

import { escapeHtml } from "./sparql-syntax.js";

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

const SERIES_SHOWN = 8;

/**
 * Draw the values of one numeric result column over the windows into the
 * <svg> `svg`: one line per series (`series`, a Map from a row's label, the
 * value of its first other column, to `[{sequence, value}]`, oldest first),
 * over the last WINDOWS windows, with a legend. `variable` names the column.
 */
export function drawValues(svg, series, variable) {
  const pad = { ...PAD, right: 90 }; // room for the legend
  const lines = [...series.entries()].slice(0, SERIES_SHOWN);
  const last = Math.max(0, ...lines.flatMap(([, points]) => points.map((p) => p.sequence)));
  const first = Math.max(1, last - WINDOWS + 1);
  const shown = lines.map(([label, points]) => [label, points.filter((p) => p.sequence >= first)]);
  const values = shown.flatMap(([, points]) => points.map((p) => p.value));
  const low = Math.min(0, ...values);
  const high = values.length ? Math.max(...values) : 1;
  const top = high > low ? high : low + 1;
  const plotW = W - pad.left - pad.right;
  const plotH = H - pad.top - pad.bottom;
  const slot = plotW / WINDOWS;
  const x = (sequence) => pad.left + (sequence - first) * slot + slot / 2;
  const y = (v) => pad.top + plotH * (1 - (v - low) / (top - low));
  const bottom = pad.top + plotH;
  const drawn = shown.map(([label, points], i) => {
    const title = (p) => `<title>${escapeHtml(label)}, window ${p.sequence}: ${p.value}</title>`;
    return `<polyline class="series series-${i}" data-label="${escapeHtml(label)}" points="${points.map((p) => `${x(p.sequence)},${y(p.value)}`).join(" ")}"/>`
      + points.map((p) => `<circle class="series-dot series-${i}" cx="${x(p.sequence)}" cy="${y(p.value)}" r="2">${title(p)}</circle>`).join("")
      + `<text class="label legend series-${i}" x="${W - pad.right + 4}" y="${pad.top + 8 + i * 11}">${escapeHtml(label.slice(0, 14))}</text>`;
  }).join("");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.innerHTML = `
    <line class="axis" x1="${pad.left}" y1="${bottom}" x2="${W - pad.right}" y2="${bottom}"/>
    <line class="axis" x1="${pad.left}" y1="${pad.top}" x2="${pad.left}" y2="${bottom}"/>
    <text class="label" x="${pad.left - 4}" y="${pad.top + 4}" text-anchor="end">${formatValue(top)}</text>
    <text class="label" x="${pad.left - 4}" y="${bottom}" text-anchor="end">${formatValue(low)}</text>
    <text class="label" x="${pad.left}" y="${H - 4}">?${escapeHtml(variable)} per window</text>
    ${drawn}`;
}

function formatValue(v) {
  return Math.abs(v) >= 1e4 || (v !== 0 && Math.abs(v) < 0.01) ? v.toExponential(1) : String(Math.round(v * 100) / 100);
}
