/**
 * The poll backend, a third-party backend on Miou's events contract alone:
 * `node dist/poll-backend.js [--clients 100] [--messages 10] [--size 64]`.
 *
 * Runs chapter 6's echo server and its clients on it, checks every byte,
 * and prints what the poller did: how many `select`s (and how many of them
 * waited), signals, cancelled suspension points forgotten in `select`, and
 * interruptions.
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

console.log("backend: poll (every wait a syscall, readiness from select's signals)");
console.log(
  `echo: ${fmt(r.clients)} clients × ${fmt(r.messages)} messages of ${fmt(r.size)} B, ${fmt(r.bytes)} bytes echoed and checked in ${r.seconds.toFixed(2)} s`,
);
console.log(`greetings that never came: ${fmt(r.timedOut)} reads timed out (withTimeout)`);
console.log(
  `poller: ${fmt(r.stats.selects)} selects (${fmt(r.stats.blocked)} waited: a Promise), ${fmt(r.stats.signals)} signals, ` +
    `${fmt(r.stats.forgotten)} cancelled syscalls forgotten in select, ${fmt(r.stats.interrupts)} interrupts`,
);
