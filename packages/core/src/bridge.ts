/**
 * `bridge`: a door from Promise code — a Node callback, a timer, a library's
 * hook, another run on the same thread — into a running program. Calls
 * through the door queue up; a task of the bridge (its pump) takes them and
 * spawns each into the bridge's group, so every one runs as a child of the
 * task that opened the bridge, and answers its caller's Promise.
 *
 * The bridge is a scope, not a value that outlives one: a task may not return
 * while a child of its runs (Miou's first rule), so the bridge lives exactly
 * as long as its body, and closes when the body ends however it ends.
 */
import { describe } from "./describe.js";
import { BobbinError } from "./errors.js";
import { type Group, group } from "./group.js";
import type { Instruction, Operation, TaskBody } from "./operation.js";
import { abortSignal } from "./promise.js";
import { startFiber } from "./spawn.js";
import { Trigger } from "./trigger.js";

/**
 * A call through a bridge that has closed (its body ended, or its task was
 * cancelled), or that was still waiting to start when it closed. The task
 * body of the call never ran.
 *
 * @example
 * ```ts
 * try { await call(work); } catch (e) { if (e instanceof B.BridgeClosed) console.log("the program has stopped"); }
 * ```
 * @throws nothing itself: a bridge's calls reject with it.
 */
export class BridgeClosed extends BobbinError {
  constructor(message = "the bridge is closed: its body has ended, so it runs no more calls") {
    super(message);
  }
}

/**
 * The function a bridge gives its body: plain async code calls it with a task
 * body (and its arguments); the body runs as a task of the program, a child of
 * the task that opened the bridge, and the Promise settles with its value, or
 * rejects with its error.
 *
 * @example
 * ```ts
 * const n: number = await call(function* (a: number) { yield* B.yieldNow(); return a * 2; }, 21);
 * ```
 * @throws (rejects with) the body's error; `Cancelled` when the bridge closed
 * while the body ran; {@link BridgeClosed} once the bridge has closed;
 * TypeError when `fn` is not a task body (`B.TaskBody`).
 */
export type Bridge = <A extends unknown[], T>(fn: TaskBody<A, T>, ...args: A) => Promise<T>;

/** One call waiting for the pump, or running. */
interface Call {
  readonly fn: TaskBody<unknown[], unknown>;
  readonly args: unknown[];
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** The door: the queue of calls, which the bridge's pump empties into its group. */
class Door {
  private queue: Call[] = [];
  private open = true;
  /** The pump's wait for calls, while it waits. */
  private wakeup: Trigger | null = null;

  readonly call: Bridge = <A extends unknown[], T>(fn: TaskBody<A, T>, ...args: A): Promise<T> => {
    if (!this.open) return Promise.reject(new BridgeClosed());
    if (typeof fn !== "function") {
      return Promise.reject(
        new TypeError(`a bridge's call(fn, ...args) expects a generator function (function* () { … }), got ${describe(fn)}`),
      );
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn: fn as TaskBody<unknown[], unknown>, args, resolve: resolve as (value: unknown) => void, reject });
      this.wakeup?.signal();
    });
  };

  /** Closes the door: the calls that have not started are refused. */
  close(): void {
    this.open = false;
    const refused = this.queue;
    this.queue = [];
    for (const call of refused) call.reject(new BridgeClosed("the bridge closed before this call started: its body has ended"));
  }

  /** The pump: spawns each call into the group, in the order they came. Ends by cancellation, when the bridge closes. */
  *pump(g: Group): Generator<Instruction, never, unknown> {
    for (;;) {
      const calls = this.queue;
      this.queue = [];
      for (const call of calls) g.spawn({ name: call.fn.name || "bridged" }, bridged, call);
      if (this.queue.length !== 0) continue;
      this.wakeup = new Trigger();
      try {
        yield* this.wakeup.wait();
      } finally {
        this.wakeup = null;
      }
    }
  }
}

function* pumpCalls(door: Door, g: Group): Generator<Instruction, never, unknown> {
  return yield* door.pump(g);
}

/** The task of one call: its body, whose outcome settles the caller's Promise. */
function* bridged(call: Call): Generator<Instruction, void, unknown> {
  let value: unknown;
  try {
    value = yield* startFiber(call.fn, call.args, "a bridge's call(fn)");
  } catch (error) {
    call.reject(error);
    // A cancelled call keeps its outcome (and an error its cleanup threw
    // stays the task's, for the group to see); any other failure was the
    // caller's to handle, and is.
    if (abortSignal().aborted) throw error;
    return;
  }
  call.resolve(value);
}

/**
 * Opens a bridge for `body`: `body(call)` runs as a task, and plain async
 * code — a Node callback, a timer, another `run` on the same thread — may
 * `await call(fn, ...args)` while it runs. Each call runs `fn(...args)` as a
 * task in a group the bridge owns: a child of the task that called `bridge`,
 * under the tree's rules (names, trace points, cancellation). Its Promise
 * settles with the task's value, or rejects with its error; a call's failure
 * is its caller's, and does not stop the bridge.
 *
 * When `body` ends — returns, throws, or is cancelled with the task that
 * opened the bridge — the bridge closes: calls that have not started reject
 * with {@link BridgeClosed}, as do calls made later; tasks still running
 * through it are cancelled (their Promises reject with `Cancelled`); `bridge`
 * returns `body`'s value (or throws its error) once every one of them has
 * ended. Needs no events backend.
 *
 * @example
 * ```ts
 * import * as http from "node:http";
 * import * as B from "@bobbin/core";
 *
 * await B.run(function* () {
 *   const server = http.createServer();
 *   yield* B.bridge(function* serving(call) {
 *     server.on("request", (req, res) => {
 *       call(function* handle() {
 *         yield* B.yieldNow();                 // any operation: the handler is a task
 *         return `hello from ${B.self()}\n`;
 *       }).then((text) => res.end(text), () => res.writeHead(500).end());
 *     });
 *     server.listen(8080, "127.0.0.1");
 *     yield* B.once(server, "close");           // serves until the server is closed
 *   });
 * });
 * ```
 * @throws `body`'s error; what a call's task threw while it was being
 * cancelled (an error of its cleanup).
 * @throws TypeError outside a task, or when `body` is not a task body (`B.TaskBody`).
 * @throws Cancelled when the current task is cancelled (after every call has ended).
 */
export function bridge<T>(body: TaskBody<[Bridge], T>): Operation<T> {
  if (typeof body !== "function")
    throw new TypeError(`bridge(body) expects a generator function (function* (call) { … }), got ${describe(body)}`);
  return openBridge(body);
}

function* openBridge<T>(body: TaskBody<[Bridge], T>): Generator<Instruction, T, unknown> {
  const door = new Door();
  return yield* group({ name: body.name || "bridge" }, function* (g) {
    g.spawn({ name: "bridge pump" }, pumpCalls, door, g);
    try {
      return yield* startFiber(body, [door.call], "bridge(body)") as Generator<Instruction, T, unknown>;
    } finally {
      door.close();
      g.cancel();
    }
  });
}
