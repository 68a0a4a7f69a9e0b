/**
 * `@bobbin/unix/backend` — the kit for writing a backend of `@bobbin/unix`:
 * the operation base and its wait queues, the events half for a backend fed
 * by Node's loop, timers, and the pieces every backend over Node handles
 * needs (the received-chunk queue, write completion, what a socket holds of
 * Node's and the wait for it to be gone, counted name lookups, listening
 * sockets across domains). A program needs none of it: it imports
 * `@bobbin/unix`. See "How to write a backend" in the package's README.
 *
 * @example
 * ```ts
 * import { type Backend, defineBackend } from "@bobbin/unix";
 * import { BackendSocket, NodeLoop, Parked, WaitQueue } from "@bobbin/unix/backend";
 * ```
 * @packageDocumentation
 */

export { type ChunkLender, concurrentReadChunk, LentChunk } from "../chunk.js";
export type { DeadlineHandle, SharedSocket, SocketBackend } from "../contract.js";
export { isStreamKind } from "../kinds.js";
export { LibuvBackend } from "../libuv/backend.js";
export { systemError } from "../system-error.js";
export { BACKEND_METHODS } from "./backend-methods.js";
export { BufferOp } from "./buffer-op.js";
export { checkTimeouts } from "./check-timeouts.js";
export type { FlushMode } from "./flush-mode.js";
export { LiveSockets } from "./live.js";
export { NodeBackend } from "./node-backend.js";
export { DatagramRecvOp, DatagramSendOp, NodeDatagram } from "./node-datagram.js";
export { NodeLoop } from "./node-loop.js";
export { NodeServer, type ServerEvents } from "./node-server.js";
export { afterHandleClose, CloseOp, NodeSocket, OpenOp } from "./node-socket.js";
export { NodeWriteOp, type NodeWriter, NodeWrites } from "./node-writes.js";
export { Parked, ParkedBase } from "./parked.js";
export { AGAIN, PollOp } from "./poll-op.js";
export { ColdState, ReadOp, ReceiveQueue } from "./receive-queue.js";
export { AdoptedServer, type ServerHooks } from "./relay.js";
export { type BackendRunOptions, runOnBackend } from "./run-on-backend.js";
export { adoptDescriptor, describeListener, type Shareable, ShareGuard } from "./sharing.js";
export { BackendSocket } from "./socket.js";
export { SocketFile } from "./socket-file.js";
export { type Deadline, DeadlineHeap, Timers } from "./timers.js";
export { ParkedCount, WaitQueue } from "./wait-queue.js";
