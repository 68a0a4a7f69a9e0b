// The tutorial of @bobbin/unix (docs/writing-a-backend.md) shows the poll
// backend's files top to bottom, in code blocks whose first line names the
// file: together, in order, they are those files, every line of them.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const TUTORIAL = new URL("../../../unix/docs/writing-a-backend.md", import.meta.url);
const EXAMPLES = new URL("../../", import.meta.url);

/** The code of each file named by a block's first line (`// src/…`), its blocks joined in order. */
function filesOf(markdown: string): Map<string, string[]> {
  const files = new Map<string, string[]>();
  for (const [, , body] of markdown.matchAll(/^(`{3,})ts\n([\s\S]*?)^\1$/gm)) {
    const [first, ...rest] = body!.split("\n");
    const name = /^\/\/ ((?:src|test)\/\S+\.ts)$/.exec(first!)?.[1];
    if (name === undefined) continue;
    files.set(name, [...(files.get(name) ?? []), ...rest]);
  }
  return files;
}

/** The lines of some code, blank lines aside (the page puts its prose between them). */
const code = (lines: readonly string[]): string[] => lines.filter((line) => line.trim() !== "");

describe("the backend tutorial", () => {
  const files = filesOf(readFileSync(TUTORIAL, "utf8"));

  it("shows the poll backend's socket.ts and backend.ts, and its conformance test, whole", () => {
    expect([...files.keys()].sort()).toEqual([
      "src/poll-backend/backend.ts",
      "src/poll-backend/socket.ts",
      "test/poll-backend/conformance.test.ts",
    ]);
    for (const [name, lines] of files) {
      const source = readFileSync(new URL(name, EXAMPLES), "utf8").split("\n");
      // A difference names the file: the page and the code must change together.
      expect(code(lines), `docs/writing-a-backend.md shows ${name} as it is`).toEqual(code(source));
    }
  });

  it("is under 300 lines of backend", () => {
    const lines = code([...files.get("src/poll-backend/socket.ts")!, ...files.get("src/poll-backend/backend.ts")!]);
    expect(lines.length, "the tutorial's promise: a backend in under 300 lines").toBeLessThan(300);
  });
});
