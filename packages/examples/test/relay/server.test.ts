import { delay } from "@bobbin/test-support";
import { type Backend, bindAndListen, getsockname, tcpv4 } from "@bobbin/unix";
import { describe, expect, it } from "vitest";
import { Room } from "../../src/relay/room.js";
import { serve } from "../../src/relay/server.js";
import { MAX_LINE } from "../../src/relay/session.js";
import { liveSocketHandles, openSockets } from "../../src/support/fds.js";
import { LineClient } from "../support/lines.js";
import { settledFds } from "../support/net.js";
import { Program } from "../support/processes.js";
import { backends, type RunningServer, startServer } from "../support/servers.js";

const GOODBYE = "* the relay is shutting down: goodbye";

/** Runs the relay in this process on `127.0.0.1:0` with `room`; its log lines go to `log`. */
function startRelay(room: Room, backend: (domain: number) => Backend, log: string[] = []): Promise<RunningServer> {
  return startServer(function* (onListening) {
    using server = tcpv4();
    yield* bindAndListen(server, { host: "127.0.0.1", port: 0 });
    onListening(getsockname(server));
    yield* serve(server, room, (line) => log.push(line));
  }, backend);
}

/** Connects a client and waits for its welcome, so that clients join in the order they are made. */
async function join(port: number): Promise<LineClient> {
  const client = await LineClient.connect(port);
  await client.waitForLine((l) => l.startsWith("* welcome, "));
  return client;
}

/** The lines `client` received from `name`, without the name. */
function saidBy(client: LineClient, name: string): string[] {
  return client.lines.filter((l) => l.startsWith(`${name}: `)).map((l) => l.slice(name.length + 2));
}

describe.each(await backends())("the chat relay on the %s backend", (_name, backend) => {
  it("relays every line of several clients to all the others, in order, never back to its sender; join, /nick, /who, leave; stopped, it tells every client and leaves no socket", async () => {
    const fds = await settledFds(openSockets);
    const handles = liveSocketHandles();
    const room = new Room(256); // room for the whole burst below: no line may be dropped
    const log: string[] = [];
    const relay = await startRelay(room, backend, log);
    const clients: LineClient[] = [];
    try {
      for (let i = 0; i < 4; i++) clients.push(await join(relay.port));
      expect(clients[0]!.lines[0]).toBe("* welcome, guest1; here: nobody else; /nick <name>, /who, /quit");
      expect(clients[3]!.lines[0]).toBe("* welcome, guest4; here: guest1, guest2, guest3; /nick <name>, /who, /quit");
      await clients[0]!.waitForLine((l) => l === "* guest4 joined");

      // Each sends 50 lines, some in one write, some split mid-line across writes.
      const said = (i: number): string[] => Array.from({ length: 50 }, (_, j) => `line ${j} from client ${i}: ${"é".repeat(j)}`);
      for (const [i, c] of clients.entries()) {
        const text = `${said(i).join("\n")}\n`;
        c.send(text.slice(0, 1001));
        c.send(text.slice(1001));
      }
      for (const [i, c] of clients.entries()) {
        for (const [k] of clients.entries()) {
          if (k !== i) await c.waitForLine((l) => l === `guest${k + 1}: ${said(k)[49]}`);
        }
      }
      for (const [i, c] of clients.entries()) {
        for (const [k] of clients.entries()) expect(saidBy(c, `guest${k + 1}`)).toEqual(k === i ? [] : said(k));
      }

      clients[0]!.send("/nick alice\n");
      expect(await clients[0]!.waitForLine((l) => l.startsWith("* you are"))).toBe("* you are alice");
      for (const c of clients.slice(1)) await c.waitForLine((l) => l === "* guest1 is now alice");
      clients[1]!.send("/nick alice\n/nick no spaces\n/who\n/dance\n");
      await clients[1]!.waitForLine((l) => l.startsWith("* unknown command"));
      expect(clients[1]!.lines.slice(-4)).toEqual([
        "* alice is taken",
        '* a name is 1 to 20 letters, digits, _ or -: "no spaces" is not one',
        "* here: alice, guest2, guest3, guest4",
        "* unknown command /dance: /nick <name>, /who, /quit",
      ]);
      clients[0]!.send("renamed\n");
      for (const c of clients.slice(1)) await c.waitForLine((l) => l === "alice: renamed");

      clients[3]!.send("/quit\n");
      await clients[3]!.waitForClose();
      for (const c of clients.slice(0, 3)) await c.waitForLine((l) => l === "* guest4 left");
      clients[2]!.socket.end(); // the end of its stream: it leaves too
      await clients[2]!.waitForClose();
      for (const c of clients.slice(0, 2)) await c.waitForLine((l) => l === "* guest3 left");
    } finally {
      await relay.stop();
    }
    for (const c of clients.slice(0, 2)) {
      await c.waitForClose();
      expect(c.lines.at(-1)).toBe(GOODBYE);
    }
    expect({ joined: room.joined, said: room.said, told: room.told }).toEqual({ joined: 4, said: 201, told: 2 });
    expect(log).toEqual(expect.arrayContaining(["- guest4", "- guest3", "- alice", "- guest2"]));
    expect(log.filter((l) => l.startsWith("+ guest"))).toHaveLength(4);
    expect(liveSocketHandles()).toBe(handles);
    if (fds !== null) expect(await settledFds(openSockets)).toBe(fds);
  });

  it("a client that does not read holds up nobody: the others get every line; it loses its oldest lines and is told how many", async () => {
    const room = new Room(64);
    const relay = await startRelay(room, backend);
    try {
      const sender = await join(relay.port);
      const fast = await join(relay.port);
      const slow = await join(relay.port);
      await sender.waitForLine((l) => l === "* guest3 joined");
      slow.socket.pause(); // reads nothing from now on: the kernel's buffers fill, then its queue
      // ~6 MB: more than the kernel's buffers for one connection on loopback (about 4 MB),
      // in rounds smaller than a queue, each read by the fast client before the next
      const total = 6000;
      const round = 50;
      const line = (j: number): string => `${j} ${"x".repeat(1000)}`;
      for (let j = 0; j < total; j += round) {
        const lines = Array.from({ length: round }, (_, i) => line(j + i));
        sender.send(`${lines.join("\n")}\n`);
        await fast.waitForLine((l) => l === `guest1: ${lines.at(-1)}`, 30_000);
      }
      const got = saidBy(fast, "guest1");
      expect(got.length).toBe(total);
      expect(got.findIndex((l, j) => l !== line(j))).toBe(-1);
      expect(fast.lines.filter((l) => l.includes("dropped"))).toEqual([]);

      slow.socket.resume();
      await slow.waitForLine((l) => l === `guest1: ${line(total - 1)}`, 60_000);
      // What it got is in order and intact; with what it was told it lost, that is every line.
      let expected = 0;
      let received = 0;
      let dropped = 0;
      const wrong: string[] = [];
      for (const l of slow.lines) {
        const notice = /^\* (\d+) line\(s\) dropped: you read too slowly$/.exec(l);
        if (notice !== null) {
          dropped += Number(notice[1]);
          expected += Number(notice[1]);
        } else if (l.startsWith("guest1: ")) {
          if (l !== `guest1: ${line(expected)}`) wrong.push(`line ${received}: ${l.slice(0, 20)}…, expected ${expected}`);
          expected++;
          received++;
        }
      }
      expect(wrong.slice(0, 3)).toEqual([]);
      expect(dropped).toBeGreaterThan(0);
      expect(received + dropped).toBe(total);
      expect(room.said).toBe(total);
    } finally {
      await relay.stop();
    }
  });

  it("a burst of short lines, more than one write takes: a client that reads gets every line, in order", async () => {
    const room = new Room(2000);
    const relay = await startRelay(room, backend);
    try {
      const sender = await join(relay.port);
      const receiver = await join(relay.port);
      await sender.waitForLine((l) => l === "* guest2 joined");
      const lines = Array.from({ length: 1500 }, (_, j) => String(j));
      sender.send(`${lines.join("\n")}\n`); // a read takes hundreds of them at once
      await receiver.waitForLine((l) => l === "guest1: 1499");
      expect(saidBy(receiver, "guest1")).toEqual(lines);
    } finally {
      await relay.stop();
    }
  });

  it("a client reset in the middle of a line: its half line goes nowhere, the others are told it left, the relay serves on", async () => {
    const room = new Room(64);
    const relay = await startRelay(room, backend);
    try {
      const resetting = await join(relay.port);
      const other = await join(relay.port);
      resetting.send("a whole line\nhalf a li");
      await other.waitForLine((l) => l === "guest1: a whole line");
      resetting.socket.resetAndDestroy();
      await other.waitForLine((l) => l === "* guest1 left");
      const late = await join(relay.port);
      other.send("still here\n");
      await late.waitForLine((l) => l === "guest2: still here");
      expect(other.lines.filter((l) => l.includes("half"))).toEqual([]);
      expect(room.said).toBe(2);
    } finally {
      await relay.stop(); // rejects if a session failed instead of taking the reset as a leave
    }
  });

  it("a line longer than the relay takes: the client is told and disconnected; the others hear it left", async () => {
    const room = new Room(64);
    const relay = await startRelay(room, backend);
    try {
      const talker = await join(relay.port);
      const other = await join(relay.port);
      talker.send(`${"y".repeat(MAX_LINE + 10)}\n`);
      await talker.waitForClose();
      expect(talker.lines.at(-1)).toBe(`* a line is at most ${MAX_LINE} bytes long: send shorter lines, each ended by a newline: goodbye`);
      await other.waitForLine((l) => l === "* guest1 left");
      expect(room.said).toBe(0);
    } finally {
      await relay.stop();
    }
  });
});

const backendNames = (await backends()).map(([name]) => name);

describe("node dist/chat-relay.js", () => {
  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)("relays between clients; %s tells each client, closes every socket, exits %d", async (signal, code) => {
    const program = Program.start("chat-relay.js", ["--port", "0", "--queue", "8"]);
    try {
      const [, port] = await program.waitFor(/chat relay on 127\.0\.0\.1:(\d+): 8 line\(s\) queued per client/);
      const clients: LineClient[] = [];
      for (let i = 0; i < 3; i++) clients.push(await join(Number(port)));
      for (const [i, c] of clients.entries()) c.send(`hello from ${i}\n`);
      for (const [i, c] of clients.entries()) {
        for (const k of [0, 1, 2]) if (k !== i) await c.waitForLine((l) => l === `guest${k + 1}: hello from ${k}`);
      }
      await program.waitFor(/\+ guest3 /);
      program.child.kill(signal);
      for (const c of clients) {
        await c.waitForClose();
        expect(c.lines.at(-1)).toBe(GOODBYE);
      }
      const exit = await program.end();
      expect(exit.stderr).toBe("");
      expect(exit.code).toBe(code);
      expect(exit.stdout).toMatch(/^backend: (native|libuv) /);
      expect(exit.stdout).toContain(`relay stopped (exit code ${code}): 3 client(s) served, 3 line(s) relayed, 3 told of the shutdown\n`);
      expect(exit.stdout).toMatch(/fds: \d+ before, \d+ after; no socket left open.*\n$/);
    } finally {
      program.kill();
    }
  });

  it.each(backendNames)(
    "out of file descriptors on the %s backend: it waits for clients to leave, welcomes every client, and stops cleanly",
    async (name) => {
      const CLIENTS = 60;
      // A cap above what the descriptors allow: this test is about running out of them (test/limits/ keeps under it).
      const program = Program.start("chat-relay.js", ["--port", "0", "--max-clients", "1024"], { BOBBIN_BACKEND: name }, 40);
      try {
        const [, port] = await program.waitFor(/chat relay on 127\.0\.0\.1:(\d+)/);
        /** Joins (again while the relay closes the connection unanswered), stays a moment, leaves; returns the tries. */
        const visit = async (): Promise<number> => {
          for (let tries = 1; tries <= 50; tries++) {
            const client = await LineClient.connect(Number(port));
            try {
              await client.waitForLine((l) => l.startsWith("* welcome, "), 20_000);
            } catch (error) {
              if (!client.ended) throw error;
              await delay(20); // closed unanswered (libuv closes what it cannot accept): come again
              continue;
            }
            await delay(100);
            client.send("/quit\n");
            await client.waitForClose();
            return tries;
          }
          throw new Error("closed unanswered 50 times");
        };
        const tries = await Promise.all(Array.from({ length: CLIENTS }, visit));
        if (name === "native") {
          // accept reports EMFILE; the clients wait in the kernel's queue: none is turned away.
          expect(program.stdout).toMatch(/\* accept failed with EMFILE: accepting again once clients leave/);
          expect(tries.every((n) => n === 1)).toBe(true);
        } else expect(tries.some((n) => n > 1)).toBe(true); // libuv turned some away itself
        expect(program.child.exitCode).toBeNull(); // still serving
        program.child.kill("SIGINT");
        const exit = await program.end();
        expect(exit.stderr).toBe("");
        expect(exit.code).toBe(130);
        expect(exit.stdout).toContain(`relay stopped (exit code 130): ${CLIENTS} client(s) served`);
        expect(exit.stdout).toMatch(/no socket left open/);
      } finally {
        program.kill();
      }
    },
    60_000,
  );

  it("rejects a --queue that is not an integer ≥ 1", async () => {
    const exit = await Program.start("chat-relay.js", ["--port", "0", "--queue", "0"]).end();
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/RangeError: --queue must be an integer ≥ 1/);
  });
});
