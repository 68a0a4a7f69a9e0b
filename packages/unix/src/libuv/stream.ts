/**
 * The stream role of a libuv socket: a `net.Socket` whose `'data'` events
 * feed the socket record's received chunks (edge-triggered: a callback
 * queues what arrived and wakes the first reader, which takes it in its own
 * fiber, so a cancelled reader loses nothing). The listeners are shared by
 * every stream: they find their socket through the Node socket, so a
 * connection holds no closure of its own.
 */
import type * as net from "node:net";

/** Queued bytes above which a stream stops reading from the system (resumed at half of it). */
export const HIGH_WATER = 64 * 1024;

/** What a stream's Node listeners tell its socket. */
export interface StreamOwner {
  push(chunk: Uint8Array): void;
  end(): void;
  /** Node's `'error'`: a failed connect's, or the connection's. */
  failed(error: Error): void;
  /** Node's `'close'`: the handle is gone. */
  gone(): void;
}

/** Where a Node socket's listeners find its owner. */
const OWNER = Symbol("bobbin.stream");

type OwnedStream = net.Socket & { [OWNER]: StreamOwner };

function onData(this: OwnedStream, chunk: Buffer): void {
  this[OWNER].push(chunk);
}

function onEnd(this: OwnedStream): void {
  this[OWNER].end();
}

/**
 * Node's own `'end'` listener of a `net.Socket` (one function for every
 * socket, found on the first one; null if there was not exactly one). A
 * stream takes its place with {@link onEndAfterNode}, which calls it first,
 * as Node would have: a socket with two `'end'` listeners holds an array of
 * them, which every idle connection would pay for.
 */
let nodeEnd: ((this: net.Socket) => void) | null | undefined;

function onEndAfterNode(this: OwnedStream): void {
  nodeEnd!.call(this);
  this[OWNER].end();
}

/** Listens for the end of `stream`'s input, in Node's own listener's place when it can. */
function listenForEnd(stream: net.Socket): void {
  if (nodeEnd === undefined) {
    const listeners = stream.listeners("end");
    nodeEnd = listeners.length === 1 ? (listeners[0] as (this: net.Socket) => void) : null;
  }
  if (nodeEnd !== null && stream.listenerCount("end") === 1) {
    stream.removeListener("end", nodeEnd);
    if (stream.listenerCount("end") === 0) {
      stream.on("end", onEndAfterNode);
      return;
    }
  }
  stream.on("end", onEnd);
}

function onError(this: OwnedStream, error: Error): void {
  this[OWNER].failed(error);
}

function onClose(this: OwnedStream): void {
  this[OWNER].gone();
}

/** @internal `owner` hears `stream`'s events from now on. */
export function listen(stream: net.Socket, owner: StreamOwner): void {
  (stream as OwnedStream)[OWNER] = owner;
  stream.on("data", onData);
  listenForEnd(stream);
  stream.on("error", onError);
  stream.on("close", onClose);
}

/** @internal "127.0.0.1:3000 ← 127.0.0.1:51234" (a dump). */
export function streamWhere(stream: net.Socket): string {
  const local = stream.localAddress === undefined ? "(unbound)" : `${stream.localAddress}:${stream.localPort}`;
  const peer = stream.remoteAddress === undefined ? "(connecting)" : `${stream.remoteAddress}:${stream.remotePort}`;
  return `${local} ← ${peer}`;
}
