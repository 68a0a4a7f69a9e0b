/**
 * `HttpError`: an error a handler throws to answer with a status of its
 * choosing (and that the body operations throw for a bad request), rather
 * than a failure of the server.
 */

import type { OutgoingHttpHeaders } from "node:http";
import { STATUS_CODES } from "node:http";
import { BobbinError } from "@bobbin/core";
import { describe } from "@bobbin/core/lowlevel";

/**
 * An answer, thrown: `serve` answers the request with `status` and the
 * error's message as a plain-text body (and `headers`), and does not count it
 * as a failure of the handler (`onError` does not see it). The body
 * operations throw it for requests that cannot be read (`400` for JSON that
 * does not parse, `413` for a body over the limit).
 *
 * @example
 * ```ts
 * const item = store.get(id);
 * if (item === undefined) throw new HttpError(404, `no item ${id}`);
 * ```
 * @throws RangeError when `status` is not an integer from 400 to 599.
 */
export class HttpError extends BobbinError {
  /** The status of the answer (4xx, 5xx). */
  readonly status: number;
  /** Headers of the answer. */
  readonly headers: OutgoingHttpHeaders;

  constructor(status: number, message?: string, options?: { readonly headers?: OutgoingHttpHeaders; readonly cause?: unknown }) {
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new RangeError(`HttpError(status): status must be an integer from 400 to 599 (an error answer), got ${describe(status)}`);
    }
    super(message ?? STATUS_CODES[status] ?? `HTTP ${status}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.headers = options?.headers ?? {};
  }
}
