/**
 * What a batch of the poller does to the native backend's sockets: an event
 * marks its socket ready and wakes the first waiter of each direction it
 * names (the poller drops the events of an fd closed or registered again
 * since it was drained); bytes read ahead are the first reader's; a queued
 * send's unsent bytes stay with its socket.
 */
import { PollEvent, Poller } from "../poller.js";
import { wouldBlock } from "../raw/io.js";
import type { EpollIo } from "./io.js";
import { pushUnsent, sendReturned, takeAhead } from "./stream.js";

const { READABLE, WRITABLE, HANGUP, ERROR } = PollEvent;
const READ_BITS = READABLE | HANGUP | ERROR;
const WRITE_BITS = WRITABLE | HANGUP | ERROR;
const NOT_READ = Poller.NOT_READ;

/**
 * @internal An event of the poller's batch. When the batch read for the
 * socket's parked `read` (`read` is not NOT_READ), the bytes are that
 * reader's: copied into its buffer before it is woken.
 */
export function onEvent(io: EpollIo, fd: number, events: number, read: number, at: number): void {
  const s = io.socketOf(fd);
  if ((events & (HANGUP | ERROR)) !== 0) s.hup = true;
  if ((events & READ_BITS) !== 0) {
    s.readable = true;
    if (read !== NOT_READ) {
      // Nothing to read after all: the reader stays parked until the next edge.
      if (wouldBlock(read)) s.readable = false;
      else takeAhead(io, s, read, at);
    } else if (s.readerCount !== 0) io.wakeReader(s);
  }
  if ((events & WRITE_BITS) !== 0) {
    s.writable = true;
    // Returned writes' bytes go first (a close waiting for them goes on once they are out).
    if (s.unsent !== null && s.writing === null) pushUnsent(io, s);
    // Not past a write in progress that is already on its way back.
    if (s.writers.length !== 0 && (s.writing === null || s.writers.first === s.writing)) s.writers.wakeFirst();
  }
}

/** @internal A queued send returned `result`; `unsent` is what it did not send. */
export function onSend(io: EpollIo, fd: number, result: number, unsent: Uint8Array): void {
  sendReturned(io, io.socketOf(fd), result, unsent);
}
