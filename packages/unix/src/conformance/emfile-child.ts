// Child process of the conformance suite's "accept under fd exhaustion" test,
// run (built, as dist/conformance/emfile-child.js) with a low `ulimit -n`:
//   node [execArgv…] emfile-child.js <backend module URL> <export name>
// Serves echo on 127.0.0.1; prints "PORT <n>", "EMFILE" the first time accept
// runs out of descriptors, and "DONE <accepted> <accept failures>" once SIGTERM
// closed the listener and every client task ended.
import * as B from "@bobbin/core";
import {
  accept,
  type Backend,
  bindAndListen,
  close,
  getsockname,
  type InetAddress,
  onSignal,
  read,
  run,
  type Socket,
  sleep,
  tcpv4,
  write,
} from "@bobbin/unix";

const [moduleUrl, exportName] = process.argv.slice(2);
const factory = (await import(moduleUrl!))[exportName!] as (domain: number) => Backend;

let accepted = 0;
let failures = 0;

function* echo(client: Socket): Generator<B.Instruction, void, unknown> {
  const buf = Buffer.alloc(1024);
  try {
    for (let n: number; (n = yield* read(client, buf)) > 0; ) yield* write(client, buf, 0, n);
  } catch {
    // a client reset by the emfile trick is this task's business only
  } finally {
    yield* close(client);
  }
}

await run(
  function* () {
    const server = tcpv4();
    yield* bindAndListen(server, { host: "127.0.0.1", port: 0 }, { backlog: 64 });
    let stopping = false;
    onSignal("SIGTERM", function* () {
      stopping = true;
      yield* close(server);
    });
    process.stdout.write(`PORT ${(getsockname(server) as InetAddress).port}\n`);
    const clients = B.orphans<void>();
    while (!stopping) {
      for (let t = B.care(clients); t; t = B.care(clients)) yield* B.awaitExn(t);
      try {
        const [client] = yield* accept(server);
        accepted++;
        B.spawn({ orphans: clients }, echo, client);
      } catch (error) {
        if (stopping) break;
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== "EMFILE" && code !== "ENFILE") throw error;
        if (++failures === 1) process.stdout.write("EMFILE\n");
        yield* sleep(0.005);
      }
    }
    for (const r of yield* B.drain(clients)) if (!r.ok) throw r.error;
  },
  { backend: factory },
);
process.stdout.write(`DONE ${accepted} ${failures}\n`);
