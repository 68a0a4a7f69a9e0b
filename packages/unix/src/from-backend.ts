/**
 * What `@bobbin/unix` checks of what a backend hands back, and how its
 * messages name a backend.
 */
import type * as B from "@bobbin/core";
import { describe } from "@bobbin/core/lowlevel";
import type { SocketBackend } from "./contract.js";

/**
 * @internal `op`, which `backend.method()` returned for a task to `yield*`,
 * once it is an operation: a backend's mistake (an `async` method, a
 * forgotten `return`) is named where it is made, not met as "… is not
 * iterable" in the program's code.
 * @throws TypeError naming the backend, the method and what it returned.
 */
export function operationFrom<T>(op: B.Operation<T>, backend: SocketBackend, method: string): B.Operation<T> {
  if (typeof (op as Partial<B.Operation<T>> | null | undefined)?.[Symbol.iterator] === "function") return op;
  throw new TypeError(
    `the backend ${backendName(backend)}: its ${method}() returned ${describe(op)}, not an operation: a backend's ${method}() returns ` +
      "what the task yield*s — a generator (function* or a Parked operation of @bobbin/unix/backend), not a Promise " +
      `(see "How to write a backend" in @bobbin/unix's README)`,
  );
}

/** @internal A backend's name for a message, with its class when that says more: `"libuv" (Stuck)`. */
export function backendName(backend: SocketBackend): string {
  const name = JSON.stringify(String(backend.name));
  const kind = backend.constructor?.name;
  return kind === undefined || kind === "" || kind === "Object" ? name : `${name} (${kind})`;
}
