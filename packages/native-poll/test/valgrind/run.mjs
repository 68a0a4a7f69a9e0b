// Exercises the addon's C++ directly (poller, arena, syscalls, io_uring ring), for valgrind.
// Plain Node, no test runner: vitest is far too heavy to run under valgrind.
//
//   node --expose-gc test/valgrind/run.mjs          # alone: a quick smoke test
//   pnpm --filter @bobbin/native-poll test:valgrind  # under valgrind (scripts/valgrind.mjs)
//
// Every path that allocates or frees native memory is taken at least once:
// pollers destroyed explicitly and by the GC, the memories the addon shares
// with JavaScript transferred away and collected before a drain, arenas of both memory kinds made,
// offlined, revived, closed and collected, the slot error paths, every system
// call with good and bad arguments, rings probed, pumped, destroyed (from their
// own callback too) and collected with requests in flight.

import assert from "node:assert/strict";
import { existsSync, unlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const addonPath = process.env.BOBBIN_NATIVE_ADDON ?? new URL("../../build/Release/bobbin_native.node", import.meta.url).pathname;
const native = createRequire(import.meta.url)(addonPath);
const { syscalls: sys, constants: C, sockopts: O } = native;

let checks = 0;
function ok(cond, what) {
  assert.ok(cond, what);
  checks++;
}
function eq(a, b, what) {
  assert.deepEqual(a, b, what);
  checks++;
}
function throws(fn, pattern, what) {
  assert.throws(fn, pattern, what);
  checks++;
}
const gc = () => globalThis.gc?.();

class SlotError extends Error {
  constructor(kind, id, arena, slot, slotSize, operation) {
    super(`${kind} ${operation} slot ${slot} of arena ${arena}`);
    Object.assign(this, { kind, id, arena, slot, slotSize, operation });
  }
}
native.setArenaErrorFactory((...args) => new SlotError(...args));

function pipe() {
  const p = sys.pipe();
  assert.ok(Array.isArray(p));
  return p;
}

// ---------------------------------------------------------------- poller

async function pollerChecks() {
  let delivered = 0;
  let woken = 0;
  const p = new native.NativePoller(4, (n, w) => {
    delivered += n;
    if (w) woken++;
  });
  const pipes = [pipe(), pipe(), pipe(), pipe(), pipe(), pipe()];
  const modes = [C.EDGE, C.LEVEL, C.ONESHOT, C.EDGE, C.LEVEL, C.ONESHOT];
  const gens = pipes.map(([r], i) => p.add(r, C.READABLE, modes[i]));
  ok(
    gens.every((g) => g > 0),
    "add returns generations",
  );
  eq(p.add(pipes[0][0], C.READABLE, C.EDGE) < 0, true, "EEXIST");
  eq(p.generation(pipes[1][0]), gens[1], "generation()");
  for (const [, w] of pipes) eq(sys.write(w, Buffer.from("ab"), 0, 2), 2, "write");
  // More ready fds than the batch holds: drained over several loop turns.
  for (let i = 0; i < 50 && delivered < 6; i++) await sleep(2);
  ok(delivered >= 6, "events delivered through uv_poll");
  ok(p.poll(0) >= 0, "poll");
  eq(p.disarm(pipes[1][0]), 0, "disarm");
  eq(p.rearm(pipes[1][0]), 0, "rearm");
  eq(p.rearm(pipes[2][0]), 0, "rearm oneshot");
  eq(p.modify(pipes[3][0], C.READABLE | C.WRITABLE), 0, "modify");
  eq(p.remove(pipes[4][0]), 0, "remove");
  eq(p.remove(pipes[4][0]) < 0, true, "remove twice: ENOENT");
  eq(p.close(pipes[5][0]), 0, "close registered fd");
  eq(p.interrupt(), 0, "interrupt");
  for (let i = 0; i < 50 && woken === 0; i++) await sleep(2);
  ok(woken > 0, "interrupt delivered");
  throws(() => p.add("x", 1, 0), TypeError, "bad fd type");
  throws(() => p.add(pipes[4][0], 0, 0), RangeError, "empty interest");
  throws(() => new native.NativePoller(Number.NaN, () => {}), RangeError, "batch size NaN");
  throws(() => new native.NativePoller(1, null), TypeError, "no callback");
  p.unref();
  p.ref();
  // A table that grows: a high fd number.
  const many = [];
  for (let i = 0; i < 40; i++) many.push(pipe());
  for (const [r] of many) ok(p.add(r, C.READABLE, C.LEVEL) > 0, "add many");
  for (const [r, w] of many) {
    p.close(r);
    sys.close(w);
  }
  p.destroy();
  p.destroy();
  throws(() => p.add(0, 1, 0), /destroyed/, "use after destroy");
  for (const [r, w] of pipes) {
    sys.close(r);
    sys.close(w);
  }
  // Read-ahead: reads into JavaScript's area during a drain, bounded by the
  // area and by what each fd wants; installed again over a grown table; a
  // poller with read-ahead left to the GC.
  {
    const ra = new native.NativePoller(4, () => {});
    const rb = new Int32Array(ra.batch);
    ra.unref();
    const area = new Uint8Array(ra.readAhead(6));
    let wants = new Int32Array(ra.wants(8));
    const ps = [pipe(), pipe(), pipe()];
    for (const [r, w] of ps) {
      ra.add(r, C.READABLE, C.EDGE);
      if (r >= wants.length) {
        const grown = new Int32Array(ra.wants(r + 1));
        grown.set(wants);
        wants = grown;
      }
      wants[r] = 4;
      eq(sys.write(w, Buffer.from("1234"), 0, 4), 4, "write for read-ahead");
    }
    eq(ra.poll(0), 3, "read-ahead drain");
    const reads = [rb[3], rb[3 + C.EVENT_INTS], rb[3 + 2 * C.EVENT_INTS]];
    eq(reads.join(","), `4,2,${C.NOT_READ}`, "read-ahead bounded by the area");
    throws(() => ra.readAhead(-1), RangeError, "read-ahead area of -1 bytes");
    ok(area.length === 6, "the area stays");
    ra.destroy();
    for (const [r, w] of ps) {
      sys.close(r);
      sys.close(w);
    }
    (() => {
      const lost = new native.NativePoller(1, () => {});
      lost.readAhead(16);
      lost.wants(4);
    })();
  }
  // Queued sends: submitted by flush() and by a drain, in order; an entry
  // outside the staging area refused; a short send stops the fd's later
  // entries; a poller with a send queue left to the GC.
  {
    const sq = new native.NativePoller(4, () => {});
    sq.unref();
    const [stagingBuffer, queueBuffer] = sq.sendQueue(16, 4);
    const staging = new Uint8Array(stagingBuffer);
    const queue = new Int32Array(queueBuffer);
    const [a, b] = sys.socketpair(1);
    staging.set(Buffer.from("abcdef"));
    const entries = [
      [a, 0, 3],
      [a, 3, 3],
      [a, 10, 100], // outside the area
      [a, -1, 2], // outside the area
    ];
    for (const [i, [fd, off, len]] of entries.entries()) queue.set([fd, off, len, 0], 1 + i * C.SEND_INTS);
    queue[0] = entries.length;
    eq(sq.flush(), 4, "flush submits every entry");
    eq([4, 8, 12, 16].map((i) => queue[i]).join(","), "3,3,-22,-22", "results: sent, sent, EINVAL, EINVAL");
    const got = Buffer.alloc(16);
    eq(sys.read(b, got, 0, 16), 6, "the peer got both sends");
    eq(got.subarray(0, 6).toString(), "abcdef", "in order");
    // A full send buffer: the first entry fails with EAGAIN, the second is not tried.
    const big = Buffer.alloc(1 << 16, 1);
    while (sys.write(a, big, 0, big.length) > 0);
    queue.set([a, 0, 3, 0, a, 3, 3, 0], 1);
    queue[0] = 2;
    eq(sq.poll(0) >= 0, true, "a drain submits queued sends");
    eq(queue[4] < 0 && queue[8] === C.NOT_SENT, true, "a blocked fd's later sends are not tried");
    throws(() => sq.sendQueue(1.5, 4), RangeError, "staging of 1.5 bytes");
    sq.destroy();
    sys.close(a);
    sys.close(b);
    (() => {
      const lost = new native.NativePoller(1, () => {});
      lost.sendQueue(16, 2);
    })();
  }
  // A poller destroyed from inside its own batch callback.
  {
    let called = 0;
    const [r, w] = pipe();
    const self = new native.NativePoller(1, () => {
      called++;
      self.destroy();
    });
    self.add(r, C.READABLE, C.LEVEL);
    sys.write(w, Buffer.from("z"), 0, 1);
    for (let i = 0; i < 50 && called === 0; i++) await sleep(2);
    eq(called, 1, "destroyed in its callback");
    sys.close(r);
    sys.close(w);
  }
  // A poller nobody destroys: closed by its finalizer after GC.
  (() => {
    const lost = new native.NativePoller(1, () => {});
    const [r, w] = pipe();
    lost.add(r, C.READABLE, C.EDGE);
    sys.close(r);
    sys.close(w);
  })();
  gc();
  await sleep(20);
  gc();
  await sleep(20);
}

// ---------------------------------------------------------------- detached memory

/**
 * Takes an ArrayBuffer away as code holding it could: transferred (copied
 * instead where the runtime does not detach it: external buffers on Node 20),
 * the result dropped for the GC.
 */
function transferAway(buffer) {
  if (typeof buffer.transfer === "function") buffer.transfer();
  else structuredClone(buffer, { transfer: [buffer] });
}

// Every memory the addon keeps pointers into, transferred away and collected,
// then used by a drain (read-ahead, queued sends) and by Node's loop: the
// addon reads and writes only memory it still owns.
async function detachChecks() {
  let batches = 0;
  const p = new native.NativePoller(4, () => batches++);
  const area = p.readAhead(64);
  const wantsBuffer = p.wants(1024);
  const [staging, queue] = p.sendQueue(64, 4);
  const [a, b] = sys.socketpair(1);
  ok(a < 1024, "the fd fits the read-ahead's table");
  p.add(a, C.READABLE, C.LEVEL);
  new Int32Array(wantsBuffer)[a] = 16;
  new Uint8Array(staging).set(Buffer.from("pong"));
  new Int32Array(queue).set([1, a, 0, 4, 0]);
  for (const buffer of [p.batch, area, wantsBuffer, staging, queue]) transferAway(buffer);
  gc();
  await sleep(10);
  gc();
  sys.write(b, Buffer.from("ping"), 0, 4);
  ok(p.poll(0) >= 1, "a drain after the memories were transferred away and collected");
  const got = Buffer.alloc(8);
  eq(sys.read(b, got, 0, 8), 4, "the queued send went out");
  sys.write(b, Buffer.from("more"), 0, 4);
  for (let i = 0; i < 100 && batches === 0; i++) await sleep(2);
  ok(batches > 0, "a batch through Node's loop after the transfer");
  p.destroy();
  sys.close(a);
  sys.close(b);
  if (native.uringProbe === undefined || native.uringProbe().reason !== "") return;
  const U = native.uringConstants;
  const ring = uringDriver({ entries: 8, buffers: 4, bufferSize: 64, staging: 1, stagingSize: 64 }, (d) => d.reap());
  transferAway(ring.handle.control);
  gc();
  await sleep(10);
  gc();
  const [c, d] = sys.socketpair(1);
  // Where the transfer detached the view (not Node 20's copy), JavaScript can no longer queue requests: only the pump runs.
  const detached = ring.handle.control.byteLength === 0;
  ring.push(U.OP_RECV, c, { flags: U.SQE_BUFFER_SELECT, ioprio: U.RECV_MULTISHOT, data: 1, group: U.BUFFER_GROUP });
  ok(ring.handle.submit() >= (detached ? 0 : 1), "the ring submits after its control block was transferred away and collected");
  sys.write(d, Buffer.from("x"), 0, 1);
  for (let t = 0; t < 100 && ring.seen.length === 0 && !detached; t++) await sleep(2);
  ok(detached || ring.seen.length > 0, "the ring's pump still runs");
  ring.handle.destroy();
  sys.close(c);
  sys.close(d);
}

// ---------------------------------------------------------------- arena

function arenaChecks(memory) {
  const pool = new native.NativeArenaPool(1000, 0, memory);
  const stride = pool.stats().stride;
  const ids = [];
  const buffers = new Map();
  for (let i = 0; i < 64 * 3 + 5; i++) {
    let id = pool.alloc();
    if (id <= -3) {
      id = -3 - id;
      buffers.set(Math.floor(id / 64), pool.arenaBuffer(Math.floor(id / 64)));
    }
    ids.push(id);
  }
  eq(ids.slice(0, 3), [0, 1, 2], "lowest free slot");
  eq(pool.stats().inUse, 197, "in use");
  // Write through a slot view, and past it (a clobbered canary).
  const ab = buffers.get(0);
  new Uint8Array(ab, 3 * stride, 1000).fill(9);
  new Uint8Array(ab, 4 * stride, 1001)[1000] = 1;
  throws(
    () => pool.release(4),
    (e) => e.kind === "overflow" && e.slot === 4,
    "overflow on release",
  );
  throws(
    () => pool.release(4),
    (e) => e.kind === "not-allocated",
    "double release",
  );
  throws(
    () => pool.check(4),
    (e) => e.kind === "not-allocated",
    "check free slot",
  );
  pool.check(3);
  // Native writes into a slot: checked.
  const [r, w] = pipe();
  sys.write(w, Buffer.from("slot data"), 0, 9);
  eq(sys.read(r, new Uint8Array(ab, 3 * stride, 1000), 0, 1000), 9, "read into a slot");
  sys.write(w, Buffer.from("more"), 0, 4);
  throws(
    () => sys.read(r, new Uint8Array(ab, 3 * stride, 1100), 0, 1100),
    (e) => e.kind === "out-of-bounds",
    "crossing the slot end",
  );
  throws(
    () => sys.read(r, new Uint8Array(ab, 4 * stride, 10), 0, 10),
    (e) => e.kind === "not-allocated",
    "read into a free slot",
  );
  throws(
    () => sys.readv(r, [new Uint8Array(ab, 4 * stride, 10)]),
    (e) => e.kind === "not-allocated",
    "readv into a free slot",
  );
  eq(sys.readv(r, [new Uint8Array(ab, 5 * stride, 2), Buffer.alloc(8)]), 4, "readv into a slot");
  sys.close(r);
  sys.close(w);
  // Release everything: all but the last emptied arena go offline.
  for (const id of ids) if (id !== 4) pool.release(id);
  eq(pool.stats().online, 1, "one empty arena kept");
  ok(pool.residentBytes() >= 0, "resident");
  // Revive, then leave some allocated and close.
  for (let i = 0; i < 130; i++) {
    const id = pool.alloc();
    ok(id >= 0 || id <= -3, "alloc again");
  }
  pool.close();
  throws(() => pool.alloc(), /closed/, "closed pool");
  // A capped pool, and one left to the GC.
  const capped = new native.NativeArenaPool(64, 1, memory);
  for (let i = 0; i < 64; i++) capped.alloc();
  eq(capped.alloc(), -1, "at the cap");
  capped.release(63);
  ok(capped.alloc() === 63, "slot back");
  (() => {
    const lost = new native.NativeArenaPool(4096, 0, memory);
    for (let i = 0; i < 70; i++) lost.alloc();
  })();
  throws(() => new native.NativeArenaPool(0, 0, memory), RangeError, "slot size 0");
}

// ---------------------------------------------------------------- syscalls

function waitFor(fd, interest) {
  const p = new native.NativePoller(1, () => {});
  const batch = new Int32Array(p.batch);
  p.unref();
  p.add(fd, interest, C.LEVEL);
  let n = 0;
  for (let i = 0; i < 100 && n === 0; i++) n = p.poll(20);
  p.destroy();
  return n > 0 ? batch[2] : 0;
}

function stream(kind, host, port) {
  const family = kind === "unix" ? 1 : kind === "tcp6" ? 6 : 4;
  const server = sys.socket(family, 1);
  ok(server >= 0, "socket");
  if (family !== 1) eq(sys.setsockopt(server, O.SOL_SOCKET, O.SO_REUSEADDR, 1), 0, "setsockopt");
  eq(sys.bind(server, host, port), 0, `bind ${kind}`);
  eq(sys.listen(server, 8), 0, "listen");
  const local = {};
  eq(sys.getsockname(server, local), 0, "getsockname");
  const client = sys.socket(family, 1);
  const rc = sys.connect(client, family === 1 ? local.path : local.host, family === 1 ? -1 : local.port);
  if (rc !== 0) {
    ok(waitFor(client, C.WRITABLE) & C.WRITABLE, "connect completes");
    eq(sys.socketError(client), 0, "SO_ERROR");
  }
  ok(waitFor(server, C.READABLE), "pending connection");
  const peerOut = {};
  const conn = sys.accept(server, peerOut);
  ok(conn >= 0, "accept");
  ok(family === 1 ? peerOut.path === "" : peerOut.port > 0, "accept: peer address");
  ok(sys.accept(server) < 0, "accept: EAGAIN");
  eq(sys.write(client, Buffer.from("hello"), 0, 5), 5, "write");
  eq(sys.writev(client, [Buffer.from("ab"), Buffer.from("c")]), 3, "writev");
  waitFor(conn, C.READABLE);
  const buf = Buffer.alloc(16);
  ok(sys.read(conn, buf, 0, 16) > 0, "read");
  const peer = {};
  eq(sys.getpeername(conn, peer), 0, "getpeername");
  eq(sys.shutdown(client, 1), 0, "shutdown");
  for (const fd of [conn, client, server]) eq(sys.close(fd), 0, "close");
}

function syscallChecks() {
  stream("tcp4", "127.0.0.1", 0);
  stream("tcp6", "::1", 0);
  const path = join(tmpdir(), `bobbin-vg-${process.pid}.sock`);
  if (existsSync(path)) unlinkSync(path);
  stream("unix", path, -1);
  unlinkSync(path);
  stream("unix", `\0bobbin-vg-${process.pid}`, -1);

  const a = sys.socket(4, 2);
  const b = sys.socket(4, 2);
  eq(sys.bind(a, "127.0.0.1", 0), 0, "bind udp");
  const aAddr = {};
  sys.getsockname(a, aAddr);
  eq(sys.sendto(b, Buffer.from("dgram"), 0, 5, "127.0.0.1", aAddr.port), 5, "sendto");
  waitFor(a, C.READABLE);
  const from = {};
  eq(sys.recvfrom(a, Buffer.alloc(8), 0, 8, from), 5, "recvfrom");
  eq(from.host, "127.0.0.1", "recvfrom address");
  ok(sys.sendto(b, Buffer.from("x"), 0, 1, "not-an-ip", 1) < 0, "sendto bad host");
  ok(sys.sendto(b, Buffer.from("x"), 0, 1, "fe80::1%nosuchif", 1) < 0, "bad scope");
  sys.close(a);
  sys.close(b);

  const sp = sys.socketpair(2);
  ok(Array.isArray(sp), "socketpair");
  sys.close(sp[0]);
  sys.close(sp[1]);
  const d = sys.dup(0);
  ok(d > 2, "dup");
  sys.close(d);
  ok(sys.dup(99999) < 0, "dup EBADF");
  throws(() => sys.dup("1"), TypeError, "dup not a number");
  ok(sys.read(99999, Buffer.alloc(1), 0, 1) < 0, "EBADF");
  ok(sys.getsockopt(99999, O.SOL_SOCKET, O.SO_ERROR) < 0, "getsockopt EBADF");
  ok(sys.socket(9, 1) < 0, "bad family");
  ok(sys.bind(99999, "x".repeat(300), -1) < 0, "path too long");
  throws(() => sys.read(0, Buffer.alloc(4), 5, 1), RangeError, "offset out of range");
  throws(() => sys.write(1, "str", 0, 1), TypeError, "not a buffer");
  throws(() => sys.writev(1, [1]), TypeError, "writev elements");
  throws(() => sys.getsockname(0), TypeError, "getsockname out");
}

// ---------------------------------------------------------------- io_uring

/**
 * A ring driven the way src/uring/ring.ts drives it, reduced to what the
 * checks need: SQEs written into the shared queue, CQEs read from it.
 */
function uringDriver(config, onBatch) {
  const target = { driver: null };
  const handle = new native.NativeUring(relay(target, onBatch), config);
  const control = new Int32Array(handle.control);
  const l = handle.layout;
  const words = new Uint32Array(handle.rings);
  const sqes = new Int32Array(handle.sqes);
  const cqes = new Int32Array(handle.rings, l.cqes);
  const driver = {
    handle,
    seen: [],
    push(opcode, fd, { flags = 0, ioprio = 0, addr = 0, len = 0, opFlags = 0, data = 0, group = 0 } = {}) {
      const i = (control[0] & words[l.sqMask >> 2]) * 16;
      sqes.fill(0, i, i + 16);
      sqes[i] = opcode | (flags << 8) | (ioprio << 16);
      sqes[i + 1] = fd;
      sqes[i + 4] = addr % 2 ** 32;
      sqes[i + 5] = Math.floor(addr / 2 ** 32);
      sqes[i + 6] = len;
      sqes[i + 7] = opFlags;
      sqes[i + 8] = data;
      sqes[i + 10] = group;
      control[0]++;
    },
    reap() {
      let head = words[l.cqHead >> 2];
      for (const tail = Atomics.load(words, l.cqTail >> 2); head !== tail; head = (head + 1) >>> 0) {
        const i = (head & words[l.cqMask >> 2]) * 4;
        driver.seen.push({ data: cqes[i], res: cqes[i + 2], flags: cqes[i + 3] });
      }
      Atomics.store(words, l.cqHead >> 2, head);
    },
  };
  target.driver = new WeakRef(driver);
  return driver;
}

/** The ring's callback, holding its driver weakly: C++ holds the callback, so a ring left to the GC can go. */
function relay(target, onBatch) {
  return (status, failed) => {
    assert.equal(failed, undefined, `the ring's pump failed: ${failed} ${status}`);
    const driver = target.driver?.deref();
    if (driver !== undefined) onBatch(driver);
  };
}

async function uringChecks() {
  if (native.uringProbe === undefined) return console.log("valgrind run: this addon has no io_uring part (not Linux)");
  const { reason } = native.uringProbe();
  if (reason !== "") return console.log(`valgrind run: io_uring checks skipped: ${reason}`);
  const U = native.uringConstants;
  throws(() => new native.NativeUring(() => {}, { buffers: 3 }), /configuration/, "buffers not a power of two");
  throws(() => new native.NativeUring({}, {}), TypeError, "no callback");
  throws(() => new native.NativeUring(() => {}, { entries: 0.5 }), RangeError, "entries not an integer");

  const config = { entries: 8, buffers: 4, bufferSize: 64, staging: 2, stagingSize: 64 };
  const ring = uringDriver(config, (d) => d.reap());
  const [a, b] = sys.socketpair(1);
  ring.push(U.OP_RECV, a, { flags: U.SQE_BUFFER_SELECT, ioprio: U.RECV_MULTISHOT, data: 1, group: U.BUFFER_GROUP });
  ok(ring.handle.submit() >= 1, "submit from JavaScript");
  for (let i = 0; i < 6; i++) {
    eq(sys.write(b, Buffer.from(`msg ${i}`), 0, 5), 5, "write to the ring's socket");
    for (let t = 0; t < 100 && ring.seen.length === 0; t++) await sleep(2);
    const c = ring.seen.shift();
    ok(c !== undefined && c.res === 5 && (c.flags & U.CQE_F_MORE) !== 0, "a recv completion through the pump");
    // Give the buffer back (entry at the tail; the tail overlays entry 0's last half).
    const halves = new Uint16Array(ring.handle.bufferRing);
    const words = new Uint32Array(ring.handle.bufferRing);
    const bid = c.flags >>> U.CQE_BUFFER_SHIFT;
    const tail = halves[U.BUFFER_RING_TAIL >> 1];
    const e = tail & (config.buffers - 1);
    const address = ring.handle.bufferBase + bid * config.bufferSize;
    words[e * 4] = address % 2 ** 32;
    words[e * 4 + 1] = Math.floor(address / 2 ** 32);
    words[e * 4 + 2] = config.bufferSize;
    halves[e * 8 + 6] = bid;
    Atomics.store(halves, U.BUFFER_RING_TAIL >> 1, (tail + 1) & 0xffff);
  }
  new Uint8Array(ring.handle.staging).set(Buffer.from("staged"), 64);
  ring.push(U.OP_SEND, a, { addr: ring.handle.stagingBase + 64, len: 6, opFlags: U.MSG_NOSIGNAL, data: 2 });
  ring.push(U.OP_POLL_ADD, b, { opFlags: U.POLLOUT << 16, data: 3 }); // never completes: cancelled below
  ring.handle.submit();
  ring.reap();
  ok(
    ring.seen.some((c) => c.data === 2 && c.res === 6),
    "a send from the staging area",
  );
  const out = Buffer.alloc(16);
  eq(sys.read(b, out, 0, 16), 6, "the staged bytes arrived");
  ring.handle.ref();
  ring.handle.unref();
  const views = new Uint8Array(ring.handle.buffers);
  ring.handle.destroy(); // the recv is still armed: cancelled when the ring closes
  ring.handle.destroy();
  throws(() => ring.handle.submit(), /destroyed/, "submit after destroy");
  await sleep(10);
  ok(views.length === 256, "memory shown to JavaScript outlives the ring");

  // A ring destroyed from inside its own batch callback.
  {
    let called = 0;
    const self = uringDriver(config, (d) => {
      called++;
      d.reap();
      d.handle.destroy();
    });
    self.push(U.OP_RECV, a, { flags: U.SQE_BUFFER_SELECT, ioprio: U.RECV_MULTISHOT, data: 1, group: U.BUFFER_GROUP });
    self.handle.submit();
    sys.write(b, Buffer.from("x"), 0, 1);
    for (let t = 0; t < 100 && called === 0; t++) await sleep(2);
    eq(called, 1, "destroyed in its callback");
  }
  // A ring nobody destroys, a recv armed: closed by its finalizer after GC.
  (() => {
    const lost = uringDriver(config, () => {});
    lost.push(U.OP_RECV, a, { flags: U.SQE_BUFFER_SELECT, ioprio: U.RECV_MULTISHOT, data: 1, group: U.BUFFER_GROUP });
    lost.handle.submit();
  })();
  gc();
  await sleep(20);
  gc();
  await sleep(20);
  sys.close(a);
  sys.close(b);
}

await pollerChecks();
await detachChecks();
arenaChecks(1);
arenaChecks(2);
syscallChecks();
await uringChecks();
gc();
await sleep(20);
gc();
await sleep(20);
console.log(`valgrind run: ${checks} checks passed`);
