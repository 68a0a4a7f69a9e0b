/**
 * Context values crossing domains: with a `call` and `parallel` to worker
 * threads, and to simulated domains; an AsyncLocalStorage store kept across
 * the wake of a call's result. Workers run plain JavaScript: the tests
 * use the development build and the fixture module, which creates the contexts
 * in every domain.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { describe, expect, it } from "vitest";
import * as B from "../../dist-dev/index.js";
import * as F from "../fixtures/context-tasks.mjs";

function* givenValues<T>(body: () => Generator<B.Instruction, T, unknown>): Generator<B.Instruction, T, unknown> {
  return yield* F.requestId.with(7, function* () {
    return yield* F.tenant.with({ name: "acme" }, function* () {
      return yield* F.logger.with("dom0 logger", body);
    });
  });
}

describe.each([
  ["worker threads", { domains: 2 }],
  ["simulated domains", { domains: 2, simulateDomains: true }],
] as const)("context values on %s", (_, options) => {
  it("a called task and its child see copies of the caller's values; a context kept on its domain shows its default", async () => {
    const [seen, tenantAfter, plain] = await B.run(function* () {
      const seen = yield* givenValues(function* () {
        return [yield* B.awaitExn(B.call(F.readContexts)), F.tenant.get().name] as const;
      });
      return [...seen, yield* B.awaitExn(B.call(F.readContexts))] as const;
    }, options);
    expect(seen).toMatchObject({ requestId: 7, child: 7, tenant: "acme", logger: "default logger" });
    expect(seen.domain).not.toBe(0);
    expect(tenantAfter).toBe("acme");
    expect(plain).toMatchObject({ requestId: 0, child: 0, tenant: "none", logger: "default logger" });
  });

  it("a call from a worker passes on the values it was given and those it gives", async () => {
    const seen = await B.run(function* () {
      return yield* givenValues(function* () {
        return yield* B.awaitExn(B.call(F.callsOnward));
      });
    }, options);
    expect(seen).toMatchObject({ requestId: 8, child: 8, tenant: "acme" });
  });

  it("a caller's AsyncLocalStorage store is its own again when the call's result comes back", async () => {
    const als = new AsyncLocalStorage<string>();
    const seen = await B.run(function* () {
      const callers = ["first", "second"].map((name) =>
        B.spawn(function* () {
          als.enterWith(name);
          yield* B.awaitExn(B.call(F.readContexts));
          return als.getStore();
        }),
      );
      return [yield* B.awaitExn(callers[0]!), yield* B.awaitExn(callers[1]!), als.getStore()];
    }, options);
    expect(seen).toEqual(["first", "second", undefined]);
  });

  it("parallel sends the values with every input", async () => {
    const results = await B.run(function* () {
      return yield* givenValues(function* () {
        return yield* B.parallel(F.readContexts, [undefined, undefined, undefined] as never[]);
      });
    }, options);
    expect(results.map((r) => (r.ok ? r.value.requestId : -1))).toEqual([7, 7, 7]);
  });
});
