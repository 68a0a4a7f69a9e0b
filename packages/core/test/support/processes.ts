/** Helpers for tests that run a script in a child process. */

/**
 * A JavaScript expression listing the process's live handles and requests,
 * less those of its own stdio (pipes to the test), to check nothing leaked.
 */
export const LIVE_HANDLES =
  'process.getActiveResourcesInfo().filter((r) => !["PipeWrap", "TTYWrap", "CloseReq", "WriteWrap", "ShutdownWrap"].includes(r))';
