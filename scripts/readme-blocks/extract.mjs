// Reads a README's fenced code blocks and the markers before them.
//
// A marker is an HTML comment that ends on the line just before a block's opening
// fence (GitHub does not show it):
//
//   <!-- block: fragment generator id=bank with=setup timeout=30 no-run="needs a second machine"
//   import * as B from "@bobbin/core";          ← the prelude: lines put before the block
//   -->
//
// The first line holds words and key=value pairs (values in double quotes may hold
// spaces); the lines after it, up to `-->`, are the prelude. CONTRIBUTING-style notes for
// every marker are in the root README ("README code blocks").

/** The languages whose blocks are programs: type-checked, and run unless marked otherwise. */
const CODE = new Map([
  ["ts", "ts"],
  ["typescript", "ts"],
  ["tsx", "ts"],
  ["js", "js"],
  ["javascript", "js"],
  ["mjs", "js"],
]);

const WORDS = new Set(["fragment", "generator", "output"]);
const KEYS = new Set(["id", "with", "as", "no-run", "throws", "exit", "timeout", "port"]);

/** A README's structure is wrong: the runner stops on it and names the line. */
export class MarkerError extends Error {
  constructor(file, line, message) {
    super(`${file}:${line}: ${message}`);
    this.name = "MarkerError";
  }
}

/**
 * Parses a marker's first line (`block: fragment id=x no-run="why"`) into words and keys.
 * @returns {{ words: Set<string>, keys: Map<string, string> }}
 */
export function parseMarkerLine(text, file, line) {
  const words = new Set();
  const keys = new Map();
  const token = /([a-z-]+)(?:=(?:"([^"]*)"|(\S+)))?/g;
  for (let m = token.exec(text); m !== null; m = token.exec(text)) {
    const [, name, quoted, bare] = m;
    const value = quoted ?? bare;
    if (value === undefined) {
      if (!WORDS.has(name)) throw new MarkerError(file, line, `unknown marker word "${name}" (words: ${[...WORDS].join(", ")})`);
      words.add(name);
    } else {
      if (!KEYS.has(name)) throw new MarkerError(file, line, `unknown marker key "${name}" (keys: ${[...KEYS].join(", ")})`);
      if (value === "") throw new MarkerError(file, line, `marker key "${name}" needs a value`);
      keys.set(name, value);
    }
  }
  return { words, keys };
}

/**
 * The code blocks of one README, with their markers, and the output blocks that follow them.
 * @param {string} file the README's path, for messages
 * @param {string} text its contents
 */
export function extractBlocks(file, text) {
  const lines = text.split("\n");
  const blocks = [];
  let marker = null; // the last marker seen, until a fence takes it
  for (let i = 0; i < lines.length; i++) {
    const markerStart = /^\s*<!--\s*block:(.*)$/.exec(lines[i]);
    if (markerStart) {
      const first = markerStart[1].replace(/-->\s*$/, "");
      const prelude = [];
      let end = i;
      if (!/-->\s*$/.test(lines[i])) {
        for (end = i + 1; end < lines.length && !/^\s*-->\s*$/.test(lines[end]); end++) prelude.push(lines[end]);
        if (end === lines.length) throw new MarkerError(file, i + 1, "a marker that never closes (a line with `-->` alone ends it)");
      }
      marker = { ...parseMarkerLine(first, file, i + 1), prelude, preludeLine: i + 2, line: i + 1, endLine: end + 1 };
      i = end;
      continue;
    }
    const fence = /^(\s*)(`{3,})([\w-]*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const [, indent, ticks, lang] = fence;
    const start = i;
    const body = [];
    for (i++; i < lines.length && !new RegExp(`^\\s*${ticks}\\s*$`).test(lines[i]); i++) {
      body.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i].trimStart());
    }
    const own = marker !== null && marker.endLine === start ? marker : null;
    marker = null;
    const kind = CODE.get(lang);
    if (own?.words.has("output")) {
      const target = blocks.at(-1);
      if (!target) throw new MarkerError(file, own.line, "an output block with no code block before it");
      if (target.output !== undefined) throw new MarkerError(file, own.line, `the block of line ${target.line} has two output blocks`);
      target.output = body;
      continue;
    }
    if (kind === undefined) {
      if (own)
        throw new MarkerError(file, own.line, `a marker before a \`\`\`${lang} block, which is not run (markers go before ts/js blocks)`);
      continue;
    }
    blocks.push({
      file,
      line: start + 1, // the fence's line; the code starts on the next
      lang: kind,
      code: body,
      words: own?.words ?? new Set(),
      keys: own?.keys ?? new Map(),
      prelude: own?.prelude ?? [],
      preludeLine: own?.preludeLine ?? 0,
    });
  }
  return blocks;
}
