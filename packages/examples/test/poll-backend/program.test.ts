import { describe, expect, it } from "vitest";
import { echoOnPoll } from "../../src/poll-backend/echo.js";
import { Program } from "../support/processes.js";

describe("the poll backend's program", () => {
  it("echoes every byte; each client's read of a greeting that never comes times out, and the socket reads on", async () => {
    const r = await echoOnPoll({ clients: 30, messages: 5, size: 100 });
    expect(r.bytes, "every byte the clients sent came back, checked").toBe(30 * 5 * 100);
    expect(r.timedOut, "a read cancelled by withTimeout leaves the socket readable for the echoes").toBe(30);
  });

  it("refuses a count that is not a positive integer", async () => {
    await expect(echoOnPoll({ clients: 0, messages: 1, size: 1 })).rejects.toThrow(RangeError);
  });

  it("node dist/poll-backend.js says what it echoed", async () => {
    const exit = await Program.start("poll-backend.js", ["--clients", "20", "--messages", "3"]).exited;
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).toContain("echo: 20 clients × 3 messages of 64 B, 3,840 bytes echoed and checked");
    expect(exit.stdout).toContain("20 reads timed out");
  });
});
