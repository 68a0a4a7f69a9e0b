/**
 * A value given where another kind belongs is named as what it is: a string
 * is quoted, so that `sleep("1")` does not read as if it got the number 1.
 */
import { thrownBy } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { bindAndListen, close, libuv, run, sleep, tcpv4, withTimeout } from "../src/index.js";

describe("a string where a number of seconds or a count belongs", () => {
  it("sleep, withTimeout and bindAndListen's backlog say they got the string", async () => {
    const messages = await run(function* () {
      const sock = tcpv4();
      const messages = [
        (thrownBy(() => sleep("1" as never)) as Error).message,
        (thrownBy(() => withTimeout("1" as never, sleep(1))) as Error).message,
        (thrownBy(() => bindAndListen(sock, { host: "127.0.0.1", port: 0 }, { backlog: "1" as never })) as Error).message,
      ];
      yield* close(sock);
      return messages;
    });
    expect(messages[0]).toBe('sleep(seconds): seconds must be a number ≥ 0, got "1"');
    expect(messages[1]).toBe('withTimeout(seconds, op): seconds must be a number ≥ 0, got "1"');
    expect(messages[2]).toMatch(/^bindAndListen\(\): backlog must be an integer from 0 to \d+ .*, got "1"$/);
  });
});

describe("run's backend given as a name or as a made backend", () => {
  it("says a factory is wanted, uncalled, and names the ones there are", () => {
    for (const backend of ["native", libuv(0)]) {
      const error = thrownBy(() => run(function* () {}, { backend: backend as never })) as Error;
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toMatch(
        /^run\(main, \{ backend \}\) expects a backend factory, a function \(domain\) => Backend, passed uncalled: /,
      );
      expect(error.message).toContain(
        "libuv (the default), nativeBackend or uringBackend of @bobbin/native-poll, simulated() of @bobbin/sim",
      );
    }
  });
});
