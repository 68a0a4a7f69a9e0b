// The memories the addon keeps pointers into (the poller's batch, read-ahead
// area and table, staging area and send queue; the ring's control block) are
// the addon's own: code holding the poller can transfer an ArrayBuffer that
// shows one, and let it be collected, and the addon never writes into freed
// memory (test/valgrind/run.mjs runs the same under valgrind). Where the
// runtime copies such a transfer (Node 20: external buffers are not
// detachable), the poller goes on; where it detaches the view, the poller
// says so (ERR_BOBBIN_DETACHED) instead of losing events or bytes.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { delay } from "@bobbin/test-support";
import { afterEach, describe, expect, it } from "vitest";
import { PollEvent, Poller, syscalls } from "../../src/backend/index.js";
import { socketpair } from "../helpers.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const cleanup: Array<() => void> = [];
afterEach(() => {
  while (cleanup.length) cleanup.pop()!();
});

/** Takes `view`'s memory away as code holding it could: its buffer transferred (or copied, where it is not transferable), the result dropped, and collected. */
async function transferAway(view: ArrayBufferView): Promise<void> {
  const buffer = view.buffer as ArrayBuffer & { transfer?: () => ArrayBuffer };
  if (typeof buffer.transfer === "function") buffer.transfer();
  else structuredClone(buffer, { transfer: [buffer] });
  gc();
  await delay();
  gc();
}

const MEMORIES = ["batch", "readArea", "wants", "staging", "sendQueue"] as const;

describe("the poller's shared memory, transferred away and collected", () => {
  it.each(MEMORIES)("%s: the next drain still reads ahead and sends right, or says the memory was detached", async (memory) => {
    const ahead = new Map<number, string>();
    const poller: Poller = new Poller(
      (fd, _events, _token, read, at) => {
        if (read > 0) ahead.set(fd, Buffer.from(poller.readArea.subarray(at, at + read)).toString());
      },
      { readAhead: 1024, sendStaging: 1024, ref: false },
    );
    cleanup.push(() => poller.destroy());
    const [a, b] = socketpair();
    cleanup.push(() => {
      syscalls.close(a);
      syscalls.close(b);
    });
    poller.add(a, PollEvent.READABLE, "level");
    poller.want(a, 16);
    await transferAway((poller as unknown as Record<string, ArrayBufferView>)[memory]!);
    syscalls.write(b, Buffer.from("ping"));
    let outcome = "drained";
    try {
      poller.stage(a, Buffer.from("pong"), 0, 4);
      poller.poll(0);
    } catch (error) {
      outcome = (error as { code?: string }).code ?? String(error);
    }
    if (outcome === "drained") {
      expect(ahead.get(a), "the bytes read ahead reached the handler").toBe("ping");
      const got = Buffer.alloc(8);
      expect(syscalls.read(b, got), "the staged send went out").toBe(4);
      expect(got.subarray(0, 4).toString()).toBe("pong");
    } else {
      expect(outcome).toBe("ERR_BOBBIN_DETACHED");
    }
  });
});
