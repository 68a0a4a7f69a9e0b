/**
 * `@bobbin/test-support` — what the workspace's tests share, so that no
 * package copies it: the error of a failed result, call or operation;
 * waiting for a condition; counting descriptors and Node handles; whether a process is gone; what tasks
 * wait on in a dump; a seeded PRNG; whether a Chrome trace is well-formed. Private: it is never published, and it
 * depends on no `@bobbin` package (its types are structural), so that every
 * package's tests, core's included, can import it.
 */

export { chromeTraceProblems } from "./chrome-trace.js";
export { waitsOf } from "./dumps.js";
export { errorOf, failure, thrownBy } from "./errors.js";
export { noProcFds, openFds, openFdsOf, procFds } from "./fds.js";
export { handleCount, listenerCounts } from "./handles.js";
export { processGone } from "./processes.js";
export { prng } from "./random.js";
export { delay, until } from "./waiting.js";
