// The floors of the Domains `call` round-trip rows (bench/src/domains.js): a
// plain worker_threads worker that echoes numbers, no Bobbin on either side.
//
//   workerData.mode === "post": each message is posted back as it is (the raw
//   postMessage ping-pong).
//   workerData.mode === "atomics": no messages at all; requests and replies
//   are Int32 cells of a SharedArrayBuffer (`workerData.cells`), and both
//   threads block in Atomics.wait until the other has written (the floor).
//   Layout: see `ATOMICS_LAYOUT` in domains-ping.js.
import { parentPort, workerData } from "node:worker_threads";
import { ATOMICS_LAYOUT as L, STOP } from "./domains-ping.js";

if (workerData.mode === "post") {
  parentPort.on("message", (x) => parentPort.postMessage(x));
} else {
  const cells = new Int32Array(workerData.cells);
  let served = 0;
  for (;;) {
    // Sleep until the caller has published requests beyond those served.
    Atomics.wait(cells, L.requested, served);
    const requested = Atomics.load(cells, L.requested);
    if (requested === STOP) break;
    for (; served < requested; served++) cells[L.replies + (served % L.slots)] = cells[L.requests + (served % L.slots)];
    Atomics.store(cells, L.replied, served);
    Atomics.notify(cells, L.replied);
  }
}
