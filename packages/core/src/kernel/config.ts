/**
 * A run's configuration: one record, made by `run` on the main thread and
 * handed as it is to every worker domain of the run.
 */

/** @internal What every domain of a run is set up with. */
export interface RunConfig {
  /** Seeds the run's random choices (a worker domain's own source is seeded with `seed + domain`). */
  readonly seed: number;
  /** How many worker domains the run has (dom0 excluded). */
  readonly workers: number;
  /** Steps between non-blocking polls of the events backend while tasks wait on it. */
  readonly pollEvery: number;
  /** Longest slice of the loop before Node's event loop gets a turn, in ms. */
  readonly sliceMs: number;
  /** Where worker domains find the events backend's factory (see `defineEvents`); null when it has none, or dom0 alone has one. */
  readonly eventsLocation: { readonly url: string; readonly name: string } | null;
  /** Whether idle worker domains take queued parallel work from busy ones. */
  readonly workSharing: boolean;
  /** How long a domain may take to end a cancelled call (or to stop) before it is terminated, in ms. */
  readonly cancelGraceMs: number;
  /** Whether every domain keeps its tasks' spawn times (for dumps). */
  readonly taskAges: boolean;
  /** Steps longer than this many ms are reported (blocking.ts); 0: none is. */
  readonly blockingMs: number;
  /** How many kernel events each domain's flight recorder keeps (recorder.ts); 0: none. */
  readonly flightRecorder: number;
  /** Whether the worker domains are simulated on dom0's thread (see domains/simulated.ts). */
  readonly simulateDomains: boolean;
  /** Whether every domain keeps where its tasks were spawned and suspended, for errors and dumps (see kernel/traces.ts). */
  readonly traces: boolean;
}
