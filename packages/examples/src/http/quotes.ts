/**
 * The other service the HTTP JSON service's proxy endpoint fetches from: a
 * quote of the day, by number (`GET /quotes/:n`).
 */
import type * as B from "@bobbin/core";
import { HttpError, type ListeningAddress, serve } from "@bobbin/http";

/** Quotes about threads, spools and waiting. */
export const QUOTES = [
  "A task that waits does not waste the thread.",
  "Cancel the tree, not the leaf.",
  "Every child is awaited.",
  "Time is a deadline you have not met yet.",
  "The bobbin turns; the thread holds.",
];

/** The quote `n` (any integer ≥ 0), as the service answers it. */
export function quote(n: number): { readonly n: number; readonly quote: string } {
  return { n, quote: QUOTES[n % QUOTES.length]! };
}

/**
 * Serves the quotes on `host:port` until cancelled.
 *
 * @example
 * ```ts
 * yield* quoteService({ port: 0, onListening: ({ port }) => console.log(`quotes on ${port}`) });
 * ```
 * @throws the listen's error (`EADDRINUSE`…).
 */
export function* quoteService(options: {
  readonly host?: string;
  readonly port: number;
  readonly onListening?: (address: ListeningAddress) => void;
}): Generator<B.Instruction, void, unknown> {
  yield* serve({ host: options.host ?? "127.0.0.1", port: options.port, onListening: options.onListening }, function* quotes(req, res) {
    const match = /^\/quotes\/(\d+)$/.exec(req.url ?? "");
    if (req.method !== "GET" || match === null) throw new HttpError(404, `no ${req.method} ${req.url} here: GET /quotes/:n`);
    yield* res.send(quote(Number(match[1])));
  });
}
