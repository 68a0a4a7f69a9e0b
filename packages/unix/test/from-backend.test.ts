// What a backend hands back for a task to yield*: a method that returns something else (an async
// method's Promise, a forgotten return) is named, with the rule, where the task meets it.
import type * as B from "@bobbin/core";
import { describe, expect, it } from "vitest";
import { LibuvBackend } from "../src/backend/index.js";
import { bindAndListen, close, run, type Socket, sleep, tcpv4 } from "../src/index.js";

/** A backend written as a newcomer might: an async sleep, a close that forgot its return. */
class Mistaken extends LibuvBackend {
  override sleep(ms: number): B.Operation<void> {
    return new Promise<void>((resolve) => setTimeout(resolve, ms)) as unknown as B.Operation<void>;
  }
  override close(sock: Socket): B.Operation<void> {
    super.closeNow(sock);
    return undefined as unknown as B.Operation<void>;
  }
}

/** What `body` fails with on the mistaken backend. */
function failureOf(body: () => Generator<B.Instruction, void, unknown>): Promise<unknown> {
  return run(body, { backend: () => new Mistaken() }).then(
    () => null,
    (error: unknown) => error,
  );
}

describe("a backend method that returns no operation", () => {
  it("is a TypeError naming the backend, the method, what it returned and the rule", async () => {
    const slept = await failureOf(function* () {
      yield* sleep(0.001);
    });
    expect(slept).toBeInstanceOf(TypeError);
    expect((slept as Error).message).toMatch(
      /^the backend "libuv" \(Mistaken\): its sleep\(\) returned .*Promise.*, not an operation: a backend's sleep\(\) returns what the task yield\*s .*not a Promise/,
    );
    const closed = await failureOf(function* () {
      const sock = tcpv4();
      yield* bindAndListen(sock, { host: "127.0.0.1", port: 0 });
      yield* close(sock);
    });
    expect((closed as Error).message).toMatch(/^the backend "libuv" \(Mistaken\): its close\(\) returned undefined, not an operation/);
  });
});
