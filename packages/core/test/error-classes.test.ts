/** Errors thrown by parallel tasks: classes registered with defineError keep their class; others keep their name. */
import { describe, expect, it } from "vitest";
import * as B from "../dist-dev/index.js";
import * as S from "../src/index.js";
import { overQuota, unregistered } from "./fixtures/carried-tasks.mjs";
import { QuotaExceeded } from "./fixtures/error-classes.mjs";

/** How `task` failed when called on a worker domain. */
async function failureOf(task: B.ParallelTask<[number], never> | B.ParallelTask<[], never>, ...args: number[]): Promise<Error> {
  const r = await B.run(
    function* () {
      return yield* B.awaitTask(B.call(task as B.ParallelTask<number[], never>, ...args));
    },
    { domains: 1 },
  );
  if (r.ok) throw new Error("expected the call to fail");
  return r.error as Error;
}

describe("defineError", () => {
  it("checks its arguments", () => {
    expect(() => S.defineError("fib.ts", Error)).toThrow(/import\.meta\.url as url/);
    expect(() => S.defineError(import.meta.url, class NotAnError {} as never)).toThrow(
      /a class that extends Error, got function NotAnError/,
    );
    class Twice extends Error {}
    S.defineError(import.meta.url, Twice);
    expect(() => S.defineError(import.meta.url, Twice)).not.toThrow();
    expect(() => S.defineError(import.meta.url, class Twice extends Error {})).toThrow(/two classes named Twice/);
  });

  it("a registered class arrives as itself, its fields and its cause with it", async () => {
    const error = await failureOf(overQuota, 10);
    expect(error).toBeInstanceOf(QuotaExceeded);
    expect(error.message).toBe("over the quota of 10");
    expect((error as QuotaExceeded).limit).toBe(10);
    const cause = error.cause as Error;
    expect(cause).toBeInstanceOf(Error);
    expect(cause.name).toBe("Unregistered");
    expect(cause.message).toBe("disk full");
  });

  it("an unregistered class arrives as an Error with its name, message and own fields", async () => {
    const error = await failureOf(unregistered);
    expect(Object.getPrototypeOf(error)).toBe(Error.prototype);
    expect(error.name).toBe("Unregistered");
    expect(error.message).toBe("nobody knows me");
    expect((error as Error & { code: number }).code).toBe(42);
  });
});
