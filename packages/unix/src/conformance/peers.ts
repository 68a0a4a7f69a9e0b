/**
 * Peers made with Node's own sockets, for the tests that need a peer the
 * backend under test does not control (only where `systemSockets` holds).
 */
import { Worker } from "node:worker_threads";

/** @internal A loopback listener that never accepts. */
export interface StuckListener {
  readonly port: number;
  /** Closes it and ends its thread. */
  stop(): Promise<void>;
}

/**
 * @internal A listener on a loopback port with a backlog of 1 that never
 * accepts: its thread is blocked, so its queue fills and the next `connect`
 * hangs (a listener of this thread's libuv would accept on its own).
 */
export async function stuckListener(): Promise<StuckListener> {
  const flag = new SharedArrayBuffer(4);
  const worker = new Worker(
    `const net = require("node:net"); const { parentPort, workerData } = require("node:worker_threads");
     const s = net.createServer();
     s.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
       parentPort.postMessage(s.address().port);
       Atomics.wait(new Int32Array(workerData), 0, 0, 20000);
       s.close();
     });`,
    { eval: true, workerData: flag },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    port,
    stop: async () => {
      Atomics.store(new Int32Array(flag), 0, 1);
      Atomics.notify(new Int32Array(flag), 0);
      await worker.terminate();
    },
  };
}
