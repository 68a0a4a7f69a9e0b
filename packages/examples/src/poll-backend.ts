/**
 * The poll backend, a backend of `@bobbin/unix` written from its kit as a
 * third party would (the tutorial, `@bobbin/unix`'s docs/writing-a-backend.md):
 * `node dist/poll-backend.js [--clients 100] [--messages 10] [--size 64]`.
 *
 * Runs chapter 6's echo server and its clients on it and checks every byte;
 * each client first waits 10 ms for a greeting that never comes
 * (`withTimeout`), so every client's first read is cancelled while parked.
 */
import { parseArgs } from "node:util";
import { echoOnPoll } from "./poll-backend/echo.js";

const { values } = parseArgs({
  options: {
    clients: { type: "string", default: "100" },
    messages: { type: "string", default: "10" },
    size: { type: "string", default: "64" },
  },
});
const n = (s: string | undefined): number => Number(s);
const r = await echoOnPoll({ clients: n(values.clients), messages: n(values.messages), size: n(values.size) });
const fmt = (x: number): string => x.toLocaleString("en-US");

console.log("backend: poll (every operation tries, and waits for its socket to change when it would block)");
console.log(
  `echo: ${fmt(r.clients)} clients × ${fmt(r.messages)} messages of ${fmt(r.size)} B, ${fmt(r.bytes)} bytes echoed and checked in ${r.seconds.toFixed(2)} s`,
);
console.log(`greetings that never came: ${fmt(r.timedOut)} reads timed out (withTimeout)`);
