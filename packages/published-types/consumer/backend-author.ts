/**
 * A backend author's `bindAndListen` under `exactOptionalPropertyTypes`: the
 * options `@bobbin/unix` hands a backend have every default filled in, so the
 * backlog is a number and `reuseAddr` a boolean, never `undefined`. It is
 * only type-checked (the runtime side is `@bobbin/unix`'s own tests).
 */
import type * as B from "@bobbin/core";
import type * as U from "@bobbin/unix";

export function listenWith(
  listen: (addr: U.Address, backlog: number, reuseAddr: boolean) => B.Operation<void>,
): U.Backend["bindAndListen"] {
  return (_sock, addr, { backlog, reuseAddr }) => listen(addr, backlog, reuseAddr);
}

export function listenWithSettings(
  listen: (addr: U.Address, backlog: number, reuseAddr: boolean) => B.Operation<void>,
): (sock: U.Socket, addr: U.Address, settings: U.ListenSettings) => B.Operation<void> {
  return (_sock, addr, { backlog, reuseAddr }) => listen(addr, backlog, reuseAddr);
}
