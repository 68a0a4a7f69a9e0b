/**
 * Chapter 4, "Interacting with the system": the toy scheduler of chapter 3
 * with select-based I/O. A task that would block on `accept`, `read` or
 * `write` registers its descriptor in a table and awaits a promise;
 * between two steps, the scheduler asks `select` which descriptors are ready
 * and fulfils their promises.
 */
import { awaitPromise, type Effect, type Fiber, finish, start, type ToyPromise, tick } from "../ch03/toy-scheduler.js";
import type { FileDescr, Sockaddr } from "../support/pocket-unix.js";
import * as Unix from "../support/pocket-unix.js";

/** The book's `waiting_fds_for_reading`: descriptors some task waits to read (or accept) on. */
export const waitingFdsForReading = new Map<FileDescr, ToyPromise<void>>();
/** The book's `waiting_fds_for_writing`. */
export const waitingFdsForWriting = new Map<FileDescr, ToyPromise<void>>();

/** How long `ourSelect` waits for an event, in seconds: the book's 10 ms. */
export const SELECT_TIMEOUT = 0.01;

function* waitFor(table: Map<FileDescr, ToyPromise<void>>, fd: FileDescr): Generator<Effect, void, unknown> {
  const value: ToyPromise<void> = { value: null };
  table.set(fd, value);
  yield* awaitPromise(value);
  table.delete(fd);
}

/**
 * The book's `our_accept`: waits (letting other tasks run) until `fd` has a
 * connection, then accepts it.
 *
 * @example
 * ```ts
 * const [client, peer] = yield* ourAccept(socket);
 * ```
 */
export function* ourAccept(fd: FileDescr): Generator<Effect, [FileDescr, Sockaddr], unknown> {
  yield* waitFor(waitingFdsForReading, fd);
  return Unix.accept(fd);
}

/**
 * The book's `our_read`: waits until `fd` is ready for reading, then reads.
 *
 * @example
 * ```ts
 * const len = yield* ourRead(client, buf, 0, buf.length);
 * ```
 */
export function* ourRead(fd: FileDescr, buf: Uint8Array, off: number, len: number): Generator<Effect, number, unknown> {
  yield* waitFor(waitingFdsForReading, fd);
  return Unix.read(fd, buf, off, len);
}

/**
 * The book's `our_write`: waits until `fd` is ready for writing, then writes.
 *
 * @example
 * ```ts
 * yield* ourWrite(client, buf, 0, len);
 * ```
 */
export function* ourWrite(fd: FileDescr, buf: Uint8Array, off: number, len: number): Generator<Effect, number, unknown> {
  yield* waitFor(waitingFdsForWriting, fd);
  return Unix.write(fd, buf, off, len);
}

function fulfill(table: Map<FileDescr, ToyPromise<void>>, fd: FileDescr): void {
  const value = table.get(fd);
  if (value !== undefined) value.value = { some: undefined };
}

/**
 * The book's `our_select`: which of the waiting descriptors are ready
 * (waiting at most 10 ms), and fulfils their promises.
 */
export async function ourSelect(): Promise<void> {
  const rds = [...waitingFdsForReading.keys()];
  const wrs = [...waitingFdsForWriting.keys()];
  const [readable, writable] = await Unix.select(rds, wrs, [], SELECT_TIMEOUT);
  for (const fd of readable) fulfill(waitingFdsForReading, fd);
  for (const fd of writable) fulfill(waitingFdsForWriting, fd);
}

/**
 * The book's second `run`: chapter 3's, with `ourSelect` between two steps.
 * It returns a Promise because `select` needs Node's loop to hear of events.
 *
 * @example
 * ```ts
 * await run(function* () {
 *   const [client] = yield* ourAccept(socket);
 *   Unix.close(client);
 * });
 * ```
 */
export async function run<T>(fn: Fiber<T>): Promise<T> {
  const main = start(fn);
  while (tick(main.todo)) await ourSelect();
  return finish(main);
}
