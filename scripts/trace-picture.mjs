// The picture of a timeline in packages/sim's README: a failing simulation of
// the replicated register (packages/examples' register, with a quorum of one:
// a read may miss a write), found by `check`, replayed with its trace, drawn
// from `sim.trace().toChromeTrace()` — the same JSON file Perfetto's UI and
// chrome://tracing open — as an SVG timeline (drawn here: Perfetto's UI
// cannot be reached offline), and photographed with headless Chromium
// (Debian's `chromium`, as scripts/docs-browser.mjs uses it).
//
//   pnpm build && node scripts/trace-picture.mjs [out.png] [trace.json]
//
// Writes packages/sim/docs/register-timeline.png by default, and the trace
// file when a second path is given.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = process.argv[2] ?? join(root, "packages/sim/docs/register-timeline.png");
const traceFile = process.argv[3];

const { check, replay } = await import(join(root, "packages/sim/dist/index.js"));
const { registerWorld } = await import(join(root, "packages/examples/dist/sim/register.js"));

const buggy = registerWorld({ quorum: 1 });
const failure = await check(buggy, { runs: 100, seed: 5 }).catch((e) => e);
if (failure?.name !== "CheckFailed") throw new Error(`check found no failure (${String(failure)}): the picture needs one`);
let sim;
const replayed = await replay(
  (s) => {
    sim = s;
    return buggy(s);
  },
  failure.repro,
  { trace: true },
).catch((e) => e);
const trace = sim.trace().toChromeTrace();
if (traceFile !== undefined) writeFileSync(traceFile, JSON.stringify(trace));

/** The timeline as an HTML page with one SVG: a band per host, a row per track, slices, flows. */
function draw(events, title, subtitle) {
  const processes = new Map();
  const threads = new Map();
  for (const e of events) {
    if (e.ph !== "M") continue;
    if (e.name === "process_name") processes.set(e.pid, e.args.name);
    else threads.set(`${e.pid}:${e.tid}`, e.args.name);
  }
  const end = Math.max(...events.filter((e) => e.ph !== "M").map((e) => e.ts + (e.dur ?? 0)));
  const left = 170;
  const width = 1400;
  const rowH = 11;
  const x = (ts) => left + (ts / end) * (width - left - 20);
  const rows = new Map();
  let y = 60;
  const parts = [];
  for (const [pid, host] of [...processes].sort((a, b) => a[0] - b[0])) {
    const tids = [...threads.keys()].filter((k) => k.startsWith(`${pid}:`)).map((k) => Number(k.split(":")[1]));
    tids.sort((a, b) => a - b);
    parts.push(`<rect x="0" y="${y}" width="${width}" height="${(tids.length + 1) * rowH + 4}" fill="${pid % 2 ? "#f6f7fb" : "#fff"}"/>`);
    parts.push(`<text x="6" y="${y + 10}" class="host">${host}</text>`);
    y += rowH + 2;
    for (const tid of tids) {
      rows.set(`${pid}:${tid}`, y);
      parts.push(`<text x="16" y="${y + 8}" class="track">${threads.get(`${pid}:${tid}`)}</text>`);
      y += rowH;
    }
    y += 4;
  }
  const colour = (e) => (e.name === "waits" ? "#dde4ef" : e.cat === "send" ? "#2b7bb9" : e.cat === "recv" ? "#2f9e44" : "#f0a030");
  // A task's life first, its waits over it.
  const ordered = [...events.filter((e) => e.name !== "waits"), ...events.filter((e) => e.name === "waits")];
  for (const e of ordered) {
    const row = rows.get(`${e.pid}:${e.tid}`);
    if (row === undefined) continue;
    if (e.ph === "X") {
      const w = Math.max(1.5, x(e.ts + e.dur) - x(e.ts));
      const label = e.dur > 0 && w > 60 ? `<text x="${x(e.ts) + 3}" y="${row + 8}" class="slice">${e.name}</text>` : "";
      parts.push(
        `<rect x="${x(e.ts)}" y="${row + 1}" width="${w}" height="${rowH - 2}" fill="${colour(e)}"><title>${e.name}</title></rect>${label}`,
      );
    } else if (e.ph === "i") {
      parts.push(`<path d="M${x(e.ts)} ${row + 1} l3 4 l-3 4 l-3 -4 z" fill="#d9480f"><title>${e.name}</title></path>`);
    }
  }
  const starts = new Map(events.filter((e) => e.ph === "s").map((e) => [e.id, e]));
  for (const f of events.filter((e) => e.ph === "f")) {
    const s = starts.get(f.id);
    const [y1, y2] = [rows.get(`${s.pid}:${s.tid}`), rows.get(`${f.pid}:${f.tid}`)];
    if (y1 === undefined || y2 === undefined) continue;
    parts.push(`<line x1="${x(s.ts)}" y1="${y1 + rowH / 2}" x2="${x(f.ts)}" y2="${y2 + rowH / 2}" class="flow"/>`);
  }
  for (let ms = 0; ms <= end / 1000; ms += 50) {
    parts.push(`<line x1="${x(ms * 1000)}" y1="48" x2="${x(ms * 1000)}" y2="${y}" class="grid"/>`);
    parts.push(`<text x="${x(ms * 1000) - 10}" y="44" class="track">${ms} ms</text>`);
  }
  parts.push(`<line x1="${x(end)}" y1="48" x2="${x(end)}" y2="${y}" class="fail"/>`);
  const height = y + 10;
  return `<!doctype html><html><head><meta charset="utf-8"><style>
    body { margin: 0; font-family: "DejaVu Sans", sans-serif; }
    .title { font-size: 15px; font-weight: bold; } .sub { font-size: 11px; fill: #444; }
    .host { font-size: 10px; font-weight: bold; } .track { font-size: 8.5px; fill: #333; } .slice { font-size: 8px; fill: #123; }
    .flow { stroke: #555; stroke-width: 0.6; opacity: 0.55; } .grid { stroke: #ddd; stroke-width: 0.5; } .fail { stroke: #e03131; stroke-width: 1.5; }
  </style></head><body><svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
  <text x="6" y="18" class="title">${title}</text><text x="6" y="33" class="sub">${subtitle}</text>
  ${parts.join("\n")}</svg></body></html>`;
}

const html = draw(
  trace.traceEvents,
  "@bobbin/sim: the replicated register with a quorum of one, replayed (virtual time)",
  `${String(replayed?.message ?? replayed).split(",")[0]}… — orange: a task alive, pale: parked on an operation; blue/green ticks: packets sent/received, lines: packets delivered; red: the failure`,
);

const browser = spawnSync("which", ["chromium"]).stdout.toString().trim();
if (browser === "") throw new Error("chromium is not installed: apt-get install chromium (Debian's package)");
const chrome = await chromium.launch({ executablePath: browser, args: ["--no-sandbox"] });
try {
  const page = await chrome.newPage({ viewport: { width: 1400, height: 800 }, deviceScaleFactor: 1 });
  await page.setContent(html);
  mkdirSync(dirname(out), { recursive: true });
  await page.screenshot({ path: out, fullPage: true });
  console.log(`${out}: ${trace.traceEvents.length} trace events drawn`);
} finally {
  await chrome.close();
}
process.exit(0); // the replayed world's cancelled tasks keep timers of their own; the picture is taken
