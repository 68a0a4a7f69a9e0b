// PollOp: try once, wait in the socket's queue while the answer is AGAIN, try again when woken.
import { failure } from "@bobbin/test-support";
import { describe, expect, it } from "vitest";
import { AGAIN, PollOp, WaitQueue } from "../../src/backend/index.js";
import { run, SocketClosed } from "../../src/index.js";

describe("PollOp", () => {
  it("tries, waits while it would block, and tries again each time the queue is woken", async () => {
    const sock = { state: "connected" };
    const waiters = new WaitQueue();
    const backlog: string[] = [];
    let tries = 0;
    const got = await run(function* () {
      return yield* new PollOp(sock, waiters, "accept", () => {
        tries++;
        // Each change comes once the op waits again (timers set in two fixed delays could fire together on a loaded machine).
        if (tries === 1) setTimeout(() => waiters.wakeAll(), 1); // a change that brings nothing: it waits again
        if (tries === 2)
          setTimeout(() => {
            backlog.push("client");
            waiters.wakeAll();
          }, 1);
        return backlog.shift() ?? AGAIN;
      });
    });
    expect(got).toBe("client");
    expect(tries, "once at first, once per wake-up").toBe(3);
    expect(waiters.length).toBe(0);
  });

  it("fails with SocketClosed once its socket is closed, whatever the try would say", async () => {
    const sock = { state: "connected" };
    const waiters = new WaitQueue();
    const error = await run(function* () {
      setTimeout(() => {
        sock.state = "closed";
        waiters.wakeAll();
      }, 5);
      return yield* failure(() => new PollOp(sock, waiters, "read", () => AGAIN));
    });
    expect(error).toBeInstanceOf(SocketClosed);
    expect(error.message).toMatch(/^read\(\) on a closed socket/);
  });
});
