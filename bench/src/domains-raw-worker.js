// A plain worker_threads worker for the machine check of the Domains speedup
// scenario (bench/src/domains.js): runs `spinLoop(n)` for each message and
// posts the hash back. No Bobbin on this side.
import { parentPort } from "node:worker_threads";
import { spinLoop } from "./domains-tasks.js";

parentPort.on("message", (n) => parentPort.postMessage(spinLoop(n)));
