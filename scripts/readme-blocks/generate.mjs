// Turns a README block (with its marker) into the source of one module of the user's
// project, line by line, each line remembering where in the README it came from.
import ts from "typescript";
import { MarkerError } from "./extract.mjs";

/** What the runner does with a block: `run` it, or only `check` its types (with why). */
export function planOf(block) {
  const where = `${block.file}:${block.line}`;
  const noRun = block.keys.get("no-run");
  const fragment = block.words.has("fragment");
  if (noRun !== undefined && fragment) throw new MarkerError(block.file, block.line, "a block is a fragment or no-run, not both");
  const checkOnly = fragment || noRun !== undefined;
  for (const key of ["throws", "exit", "port", "timeout"]) {
    if (checkOnly && block.keys.has(key))
      throw new MarkerError(block.file, block.line, `"${key}" is for blocks that run; this one is not run`);
  }
  const prints = block.code.flatMap((line) => {
    const m = /\/\/\s*prints:\s?(.*)$/.exec(line);
    return m ? [m[1].trimEnd()] : [];
  });
  if (prints.length > 0 && block.output !== undefined) {
    throw new MarkerError(block.file, block.line, "expected output comes from `// prints:` comments or from an output block, not both");
  }
  if (checkOnly && (prints.length > 0 || block.output !== undefined)) {
    throw new MarkerError(block.file, block.line, "a block that is not run cannot have an expected output");
  }
  const exit = block.keys.has("exit") ? Number(block.keys.get("exit")) : 0;
  const timeout = block.keys.has("timeout") ? Number(block.keys.get("timeout")) : undefined;
  if (!Number.isInteger(exit) || (timeout !== undefined && !(timeout > 0))) {
    throw new MarkerError(block.file, block.line, "exit is an integer and timeout a number of seconds > 0");
  }
  return {
    where,
    run: !checkOnly,
    why: fragment ? "a fragment" : noRun,
    expected: block.output ?? (prints.length > 0 ? prints : undefined),
    throws: block.keys.get("throws"),
    exit: block.keys.has("throws") ? undefined : exit,
    timeout,
    port: block.keys.get("port"),
    module: block.keys.get("as") ?? `main.${block.lang}`,
  };
}

/** The blocks named by `with=`, found among the README's blocks by their `id`. */
function included(block, blocks) {
  const ids = block.keys.get("with")?.split(",") ?? [];
  return ids.map((id) => {
    const found = blocks.find((b) => b.keys.get("id") === id);
    if (!found) throw new MarkerError(block.file, block.line, `with=${id}: no block of this README has id=${id}`);
    if (found.words.has("generator")) throw new MarkerError(block.file, block.line, `with=${id}: a generator block cannot be included`);
    return found;
  });
}

const at = (block, first) => (text, i) => ({ text, from: `${block.file}:${first + i}` });

/**
 * Splits lines at each line `// file: <path>` (the path relative to the block's module):
 * the lines before the first such line, and one file per such line.
 */
function sections(lines) {
  const head = [];
  const files = [];
  for (const line of lines) {
    const file = /^\/\/ file: (\S+)/.exec(line.text);
    if (file) files.push({ path: file[1], lines: [line] });
    else (files.at(-1)?.lines ?? head).push(line);
  }
  return { head, files };
}

/** A marker's prelude: the lines that go before the block, and the files it puts beside it. */
const preludeOf = (block) => sections(block.prelude.map(at(block, block.preludeLine)));

/** Whether a statement must stay at a module's top level: an import, or a `declare`. */
const topLevel = (statement) =>
  ts.isImportDeclaration(statement) ||
  (ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword));

/**
 * Splits lines into the statements that must stay at the top level (imports, `declare`s)
 * and the rest, blanked where those were so that every line keeps its origin.
 * @returns {{ top: { text: string, from: string }[], rest: { text: string, from: string }[] }}
 */
function splitTopLevel(lines) {
  if (lines.length === 0) return { top: [], rest: [] };
  const text = lines.map((l) => l.text).join("\n");
  const source = ts.createSourceFile("block.ts", text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const chars = [...text];
  const top = [];
  for (const statement of source.statements.filter(topLevel)) {
    const start = statement.getStart(source);
    const first = source.getLineAndCharacterOfPosition(start).line;
    top.push(
      ...text
        .slice(start, statement.end)
        .split("\n")
        .map((t, i) => ({ text: t, from: lines[first + i].from })),
    );
    for (let i = start; i < statement.end; i++) if (chars[i] !== "\n") chars[i] = " ";
  }
  return {
    top,
    rest: chars
      .join("")
      .split("\n")
      .map((t, i) => ({ text: t, from: lines[i].from })),
  };
}

/**
 * The module for `block`: included blocks, the prelude, then the block. A `generator` block's
 * statements, after its prelude's, become the body of `function* block()` (imports and
 * `declare`s of both go above it); when it runs, `@bobbin/unix`'s `run` runs that function as
 * the root task. A block made of `// file:` sections is several modules: the last one is the
 * block's module (the prelude goes before it), the others are written beside it.
 * @returns {{ path: string | undefined, lines: { text: string, from: string | null }[], files: { path: string, lines: { text: string, from: string }[] }[] }}
 *   the module's own path if the block names it, its lines, and the files beside it
 */
export function moduleOf(block, blocks, plan) {
  const lines = [];
  const files = [];
  const push = (text, from = null) => lines.push({ text, from });
  const generator = block.words.has("generator");
  if (generator && plan.run) push('import { run as runReadmeBlock } from "@bobbin/unix";');
  for (const other of included(block, blocks)) {
    const prelude = preludeOf(other);
    lines.push(...prelude.head, ...other.code.map(at(other, other.line + 1)));
    files.push(...prelude.files);
  }
  const prelude = preludeOf(block);
  files.push(...prelude.files);
  let code = block.code.map(at(block, block.line + 1));
  const own = sections(code);
  const path = own.files.at(-1)?.path;
  if (path !== undefined) {
    if (generator || own.head.some((l) => l.text.trim() !== "")) {
      throw new MarkerError(block.file, block.line, "a block of `// file:` sections starts with one, and is not a generator block");
    }
    files.push(...own.files.slice(0, -1));
    code = own.files.at(-1).lines;
  }
  if (!generator) {
    lines.push(...prelude.head, ...code);
  } else {
    const head = splitTopLevel(prelude.head);
    const body = splitTopLevel(code);
    lines.push(...head.top, ...body.top);
    push("export function* block() {");
    lines.push(...head.rest, ...body.rest);
    push("}");
    if (plan.run) push("await runReadmeBlock(block);");
  }
  push("export {};");
  return { path, lines, files };
}
